package migrate

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
)

// --- finalize ---------------------------------------------------------------

// finalize runs the CCM without leader migration; its gate removes the
// migration's RBAC, the reports and the stale migration lease once a CCM
// without it leads. Safe during
// the CCM's rolling update: a CCM with leader migration contends the
// migration lease only while it holds the main lease, which a CCM without
// it needs before it starts any controller.
func finalize(ctx context.Context, e *env, _ *Step) error {
	if err := e.refuseInTreeKubelets(ctx); err != nil {
		return err
	}
	return e.writeCCM(ctx, false, false, "set spec.cloudControllerManager.enableLeaderMigration=false and `kops update cluster --yes`")
}

// refuseInTreeKubelets stops finalize while a kubelet of the plan may still
// run the in-tree provider: the last report of every planned node must
// show its running kubelet external and healthy (decideKubeletsExternal).
// Without the reports ConfigMap there is nothing to judge: finalize's own
// gate removed it (a resume after that), or the nodes never ran the tool
// (kops, whose nodeup rewrites the kubelet's flags: said, not checked).
func (e *env) refuseInTreeKubelets(ctx context.Context) error {
	if e.kops() {
		fmt.Fprintln(e.out, "  kops: the kubelets' --cloud-provider comes from the cluster spec (kubelet.cloudProvider: external) and `kops rolling-update cluster`; not checked here")
		return nil
	}
	reports, found, err := readNodeReportsFound(ctx, e.client)
	if err != nil {
		return fmt.Errorf("read the node reports: %w", err)
	}
	if !found {
		fmt.Fprintf(e.out, "  the reports ConfigMap %s/%s is gone (removed by an earlier finalize): the kubelets were checked then\n", Namespace, ReportsName)
		return nil
	}
	res := decideKubeletsExternal(e.plan.Spec.NodeGroups, reports)
	if !res.ok {
		return fmt.Errorf("finalize refused: %s", strings.Join(res.evidence, "; "))
	}
	fmt.Fprintln(e.out, "  "+strings.Join(res.evidence, "; "))
	return nil
}

// migratedCCMControllers are the CCM's migrated controllers that run in
// this cluster: the route controller only with cloud routes.
func (e *env) migratedCCMControllers() []string {
	v, _ := e.plan.Values()
	var out []string
	for _, c := range leadermigration.Controllers {
		if c.CCM == "node-route-controller" && !v.ConfigureCloudRoutes {
			continue
		}
		out = append(out, c.CCM)
	}
	return out
}

func unfinalize(ctx context.Context, e *env, s *Step) error {
	if err := applyRBAC(ctx, e, s); err != nil {
		return err
	}
	return installCCM(ctx, e, s)
}

// ccmRolledOut says whether the CCM's DaemonSet or Deployment has rolled
// out its current generation: until then a Pod of the one before may lead.
func (e *env) ccmRolledOut(ctx context.Context) (string, bool, error) {
	ds, err := e.client.AppsV1().DaemonSets(e.ns).Get(ctx, install.AppName, metav1.GetOptions{})
	if err == nil {
		return apply.DaemonSetRolledOut(ds)
	}
	if !apierrors.IsNotFound(err) {
		return "", false, err
	}
	d, err := e.client.AppsV1().Deployments(e.ns).Get(ctx, install.AppName, metav1.GetOptions{})
	if err != nil {
		return "", false, err
	}
	return apply.DeploymentRolledOut(d)
}
