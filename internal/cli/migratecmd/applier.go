package migratecmd

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/awsccmctl/awsccmctl/internal/install/apply"
	"github.com/awsccmctl/awsccmctl/internal/install/deploy"
	"github.com/awsccmctl/awsccmctl/internal/migrate"
)

// recordingApplier writes the CCM the way `install apply` does, recording
// the install in its inventory (deploy), so that `install uninstall` can
// remove a CCM a migration installed and a rollback deletes only what the
// migration created, never an object that existed before it. The
// migration's own objects (its RBAC, the reports ConfigMap) are not part of
// the install: they go through the plain apply client.
type recordingApplier struct{ c deploy.Clients }

// newApplier builds the server-side apply client.
func newApplier(cfg *rest.Config) (migrate.Applier, error) {
	c, err := deploy.NewClients(cfg)
	if err != nil {
		return nil, err
	}
	return recordingApplier{c}, nil
}

func (a recordingApplier) Apply(ctx context.Context, objs []*unstructured.Unstructured, o apply.Options) ([]apply.Result, error) {
	if !deploy.IsInstall(objs) {
		return a.c.Apply.Apply(ctx, objs, o)
	}
	r, err := deploy.Apply(ctx, a.c, objs, deploy.ApplyOptions{DryRun: o.DryRun, Force: o.Force, Progress: o.Progress})
	return r.Objects, err
}

// Uninstall removes the recorded install. With no install recorded
// anywhere (a rollback resumed after its uninstall finished, or a CCM
// applied by a migration before installs were recorded) it deletes objs
// as before, which finds nothing or only what the migration applied.
func (a recordingApplier) Uninstall(ctx context.Context, objs []*unstructured.Unstructured, o apply.Options) ([]apply.Result, error) {
	if !deploy.IsInstall(objs) {
		return a.c.Apply.Uninstall(ctx, objs, o)
	}
	r, err := deploy.Uninstall(ctx, a.c, objs, o.DryRun, o.Progress)
	if errors.Is(err, deploy.ErrNotInstalled) {
		return a.c.Apply.Uninstall(ctx, objs, o)
	}
	return r.Objects, err
}
