package migrate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

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
	return e.writeCCM(ctx, false, false, "set spec.cloudControllerManager.enableLeaderMigration=false and `kops update cluster --yes`")
}

// finalizeGate: the workload runs without leader migration, a CCM Pod
// started since leads and runs the migrated controllers; then the
// migration lease and RBAC are removed (no manager contends it any more).
func finalizeGate(ctx context.Context, e *env, _ *Step) (gateResult, error) {
	args, ok, err := e.ccmWorkloadArgs(ctx)
	if err != nil {
		return gateResult{}, err
	}
	if !ok || slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--enable-leader-migration") }) {
		return waiting("the CCM's workload still has leader migration"), nil
	}
	// Every Pod without it first: a Pod of before still contends the
	// migration lease, whose RBAC this gate removes.
	if state, done, err := e.ccmRolledOut(ctx); err != nil || !done {
		return waiting("the CCM's workload without leader migration is rolling out: " + state), err
	}
	l, err := readLeases(ctx, e.client)
	if err != nil {
		return gateResult{}, err
	}
	ev := []string{l.String()}
	if l.migrationHolder() == leadermigration.ComponentKCM && l.Migration.fresh(e.now()) {
		return gateResult{}, &GuardError{Problems: []string{"kube-controller-manager holds the migration lease after the cut-over (it still runs with leader migration, trap C): " + l.String()}}
	}
	// In leader-migration mode finalize restarts the CCM: one started since
	// must lead. In restart mode it changes nothing.
	if !l.CCM.fresh(e.now()) || (e.leaderMigration() && l.CCM.Acquired.Before(e.stepStarted.Add(-time.Second))) {
		return waiting(append(ev, "waiting for a CCM without leader migration to lead")...), nil
	}
	pod, checks, err := ccmHealthz(ctx, e.client, e.ns)
	if err != nil {
		return waiting(append(ev, err.Error())...), nil
	}
	ev = append(ev, fmt.Sprintf("CCM Pod %s /healthz?verbose: %s", pod, strings.Join(checks, ", ")))
	if got := leadermigration.Running(checks, e.migratedCCMControllers()); len(got) < len(e.migratedCCMControllers()) {
		return waiting(ev...), nil
	}
	// Clean up: nothing contends the migration lease any more.
	if err := deleteRBAC(ctx, e, nil); err != nil {
		return gateResult{}, err
	}
	err = e.client.CoordinationV1().Leases(leadermigration.LeaseNamespace).Delete(ctx, leadermigration.LeaseName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return gateResult{}, fmt.Errorf("delete the stale migration lease: %w", err)
	}
	return passed(append(ev, "removed the migration RBAC, the reports ConfigMap and Lease "+leadermigration.LeaseName)...), nil
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

// unfinalizeGate: the CCM's workload runs with leader migration again, is
// rolled out (no Pod without it is left to lead), and a CCM started since
// leads.
func unfinalizeGate(ctx context.Context, e *env, s *Step) (gateResult, error) {
	if !e.leaderMigration() {
		return rbacGate(ctx, e, s)
	}
	args, ok, err := e.ccmWorkloadArgs(ctx)
	if err != nil {
		return gateResult{}, err
	}
	if !ok || !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--enable-leader-migration") }) {
		return waiting("the CCM's workload has no leader migration yet"), nil
	}
	state, done, err := e.ccmRolledOut(ctx)
	if err != nil || !done {
		return waiting("the CCM's workload with leader migration is rolling out: " + state), err
	}
	l, err := readLeases(ctx, e.client)
	if err != nil {
		return gateResult{}, err
	}
	// Every Pod was replaced: a CCM that took the Lease since leads (a
	// fresh Lease of a replaced Pod is only waiting to expire, or to be
	// released).
	if !l.CCM.fresh(e.now()) || l.CCM.Acquired.Before(e.stepStarted.Add(-time.Second)) {
		return waiting("the CCM's workload is rolled out ("+state+"); waiting for a CCM started since to lead", l.String()), nil
	}
	return passed("the CCM's workload runs with leader migration again, rolled out: "+state, l.String()), nil
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
