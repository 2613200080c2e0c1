// Package migratecmd is `awsccmctl migrate-from-intree`: it turns flags into
// options for internal/migrate and prints. The work (plan, gates, journal,
// node phases) lives in internal/migrate.
package migratecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/migrate"
)

// Streams are where the commands write: results to Out, progress to Err;
// In answers the approval prompts. Output returns the -o format.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
	Output   func() (string, error)
	// IsTerminal reports whether In is a terminal (prompts need one).
	IsTerminal func() bool
}

// NewCommand returns `migrate-from-intree` and its subcommands.
func NewCommand(streams Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate-from-intree",
		Short: "Move a live cluster from the in-tree AWS provider to this CCM, with gates, resume and rollback",
		Long: `migrate-from-intree moves a cluster whose kube-controller-manager runs the
in-tree AWS provider (Kubernetes 1.26 and older) to the external CCM, with
leader migration (KEP-2436) so the cloud loops never run twice.

  plan      read the cluster, run the pre-migrate preflight, write a plan file
  apply     run the plan's steps, stopping at each gate
  status    where the migration stands (from the journal in the cluster)
  resume    continue after a crash or a stop
  rollback  undo completed steps, back to the in-tree provider
  node      the node-local part, run on each node by scripts, SSM or SSH

Exit codes: 0 done, 1 failed, 2 usage error, 3 unreachable, 5 plan refuses
the cluster, 6 a gate or guard failed, 7 another run holds the migration,
130 interrupted. On a terminal, apply, resume and rollback show each step's
wait as one line that updates in place; through a pipe, a line per change.
Guide: docs/migrate-from-intree.md.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newPlanCommand(streams), newApplyCommand(streams, false), newApplyCommand(streams, true),
		newStatusCommand(streams), newRollbackCommand(streams), newNodeCommand(streams))
	return cmd
}

// clusterFlags are kubectl's kubeconfig flags.
type clusterFlags struct {
	kube *genericclioptions.ConfigFlags
}

func newClusterFlags(cmd *cobra.Command) *clusterFlags {
	f := &clusterFlags{kube: genericclioptions.NewConfigFlags(true)}
	f.kube.AddFlags(cmd.Flags())
	return f
}

func (f *clusterFlags) clients() (*rest.Config, kubernetes.Interface, error) {
	cfg, err := f.kube.ToRESTConfig()
	if err != nil {
		return nil, nil, exitcode.UsageError(fmt.Errorf("kubeconfig: %w", err))
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, exitcode.UsageError(fmt.Errorf("kubeconfig: %w", err))
	}
	return cfg, cs, nil
}

// readPlan reads and validates a plan file.
func readPlan(path string) (*migrate.MigrationPlan, error) {
	if path == "" {
		return nil, exitcode.UsageError(errors.New("--plan is required: the file `migrate-from-intree plan` wrote"))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, exitcode.UsageError(fmt.Errorf("--plan: %w", err))
	}
	p, err := migrate.DecodePlan(data)
	if err != nil {
		return nil, exitcode.UsageError(fmt.Errorf("--plan %s: %w", path, err))
	}
	return p, nil
}

// journalPath is the local mirror of the journal, beside the plan.
func journalPath(planPath, flag string) string {
	if flag != "" {
		return flag
	}
	if planPath == "" {
		return ""
	}
	return strings.TrimSuffix(planPath, filepath.Ext(planPath)) + ".journal.json"
}

// holder identifies this run.
func holder(command string) migrate.Holder {
	host, _ := os.Hostname()
	return migrate.Holder{ID: string(uuid.NewUUID()), Host: host, PID: os.Getpid(), Command: "awsccmctl migrate-from-intree " + command}
}

// runError maps the library's errors to exit codes.
func runError(ctx context.Context, err error) error {
	var (
		gate    *migrate.GateError
		guard   *migrate.GuardError
		held    *migrate.HeldError
		refused *migrate.RefusedError
		ce      *exitcode.Error
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return err
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		return &exitcode.Error{Code: exitcode.Interrupted, Err: errors.New("interrupted: the journal says where the run stopped; `migrate-from-intree resume` continues")}
	case errors.As(err, &gate), errors.As(err, &guard):
		return &exitcode.Error{Code: exitcode.GateFailed, Err: err}
	case errors.As(err, &held):
		return &exitcode.Error{Code: exitcode.Busy, Err: err}
	case errors.As(err, &refused):
		return &exitcode.Error{Code: exitcode.Refused, Err: err}
	}
	// Anything else, a declined step (NotApprovedError) included, is a
	// failed run.
	return &exitcode.Error{Code: exitcode.Failed, Err: err}
}
