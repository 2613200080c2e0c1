package migrate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
)

// gateResult is one look at a gate: passed, and what was seen.
type gateResult struct {
	ok       bool
	evidence []string
}

func passed(evidence ...string) gateResult  { return gateResult{ok: true, evidence: evidence} }
func waiting(evidence ...string) gateResult { return gateResult{evidence: evidence} }

// stepImpl is what a step kind does. action and undo are idempotent: resume
// runs them again after a crash. A nil action means the step runs on the
// nodes (the node step) and apply only waits at the gate.
type stepImpl struct {
	action   func(context.Context, *env, *Step) error
	gate     func(context.Context, *env, *Step) (gateResult, error)
	undo     func(context.Context, *env, *Step) error
	undoGate func(context.Context, *env, *Step) (gateResult, error)
	// undoPhase is the node phase that undoes a node step, and undoScope
	// the files a restore puts back (control-plane or kubelet).
	undoPhase string
	undoScope string
}

// stepImpls maps a step kind to its implementation.
var stepImpls = map[string]stepImpl{
	StepVerifyCluster: {action: verifyCluster, gate: verifyClusterGate,
		undo: noop, undoGate: always},
	StepMigrationRBAC: {action: applyRBAC, gate: rbacGate,
		undo: deleteRBAC, undoGate: always},
	StepKCMLeaderMigration: {gate: kcmLeaderMigrationGate,
		undoPhase: PhaseRestore, undoScope: ScopeControlPlane, undoGate: kcmInTreeGate},
	StepInstallCCM: {action: installCCM, gate: installCCMGate,
		undo: uninstallCCM, undoGate: uninstallCCMGate},
	StepCutOver: {gate: cutOverGate,
		undoPhase: PhaseControlPlaneLeaderMigration, undoGate: kcmLeaderMigrationMirrorGate},
	StepKCMExternal: {gate: kcmExternalGate,
		undoPhase: PhaseRestore, undoScope: ScopeControlPlane, undoGate: kcmInTreeGate},
	StepKubeadmConfig: {action: editKubeadmConfig, gate: kubeadmConfigGate,
		undo: restoreKubeadmConfig, undoGate: always},
	StepFinalize: {action: finalize, gate: finalizeGate,
		undo: unfinalize, undoGate: unfinalizeGate},
	StepKubeletExternal: {gate: kubeletGate,
		undoPhase: PhaseRestore, undoScope: ScopeKubelet, undoGate: kubeletRestoreGate},
}

// NodePhase returns the node phase (and, for restore, the scope) that runs
// the named step, or undoes it, and the nodes it runs on; ok is false for a
// step that runs in the cluster. What a node-step helper needs.
func (p *MigrationPlan) NodePhase(step string, undo bool) (phase, scope string, nodes []string, ok bool) {
	_, s, found := p.Step(step)
	if !found || s.Runs != RunsNodes {
		return "", "", nil, false
	}
	if !undo {
		return s.Phase, "", s.Nodes, true
	}
	impl := implOf(s)
	return impl.undoPhase, impl.undoScope, s.Nodes, impl.undoPhase != ""
}

func implOf(s *Step) stepImpl {
	base, _, _ := strings.Cut(s.Name, "/")
	return stepImpls[base]
}

func noop(context.Context, *env, *Step) error { return nil }
func always(context.Context, *env, *Step) (gateResult, error) {
	return passed("nothing to wait for"), nil
}

// --- verify-cluster ---------------------------------------------------------

func serverMinor(v *version.Info) (int, error) {
	var minor int
	if _, err := fmt.Sscanf(strings.TrimRight(v.Minor, "+"), "%d", &minor); err != nil {
		return 0, fmt.Errorf("apiserver minor version %q: %w", v.Minor, err)
	}
	return minor, nil
}

// verifyCluster checks that the cluster is still the one planned, and takes
// the guards' baseline once (a resumed run keeps the first).
func verifyCluster(ctx context.Context, e *env, _ *Step) error {
	v, err := e.client.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("read the apiserver version: %w", err)
	}
	if v.GitVersion != e.plan.Spec.Cluster.KubernetesVersion {
		return fmt.Errorf("the apiserver is %s, the plan was made for %s: make a new plan", v.GitVersion, e.plan.Spec.Cluster.KubernetesVersion)
	}
	if e.journal.Baseline == nil {
		b, err := takeBaseline(ctx, e.client)
		if err != nil {
			return err
		}
		if _, err := e.update(ctx, func(j *Journal) error { j.Baseline = b; return nil }); err != nil {
			return err
		}
	}
	return nil
}

func verifyClusterGate(ctx context.Context, e *env, _ *Step) (gateResult, error) {
	kcm, err := mirrorPodFlags(ctx, e.client, leadermigration.ComponentKCM)
	if err != nil {
		return gateResult{}, err
	}
	var nodes []string
	for _, k := range kcm {
		nodes = append(nodes, k.Node)
	}
	want := slices.Sorted(slices.Values(e.plan.Spec.Cluster.ControlPlaneNodes))
	if !slices.Equal(nodes, want) {
		return gateResult{}, fmt.Errorf("kube-controller-manager runs on %v, the plan was made for %v: make a new plan", nodes, want)
	}
	return passed(fmt.Sprintf("apiserver %s; kube-controller-manager on %s; baseline: %d Nodes, %d load balancers",
		e.plan.Spec.Cluster.KubernetesVersion, strings.Join(nodes, ", "), len(e.journal.Baseline.ProviderIDs), len(e.journal.Baseline.Hostnames))), nil
}

// --- migration-rbac ---------------------------------------------------------

func applyRBAC(ctx context.Context, e *env, _ *Step) error {
	objs, err := migrationRBAC(e.plan)
	if err != nil {
		return err
	}
	_, err = e.applier.Apply(ctx, objs, apply.Options{Progress: e.out})
	return err
}

// rbacGate asks the apiserver (SubjectAccessReview) whether both managers
// may get and update the migration lease; without it the manager that lacks
// it never takes the lease.
func rbacGate(ctx context.Context, e *env, _ *Step) (gateResult, error) {
	if !e.leaderMigration() {
		if _, err := e.client.CoreV1().ConfigMaps(Namespace).Get(ctx, ReportsName, metav1.GetOptions{}); err != nil {
			return waiting(fmt.Sprintf("ConfigMap %s/%s: %v", Namespace, ReportsName, err)), nil
		}
		return passed(fmt.Sprintf("ConfigMap %s/%s exists; %s may write it", Namespace, ReportsName, NodesGroup)), nil
	}
	v, err := e.plan.Values()
	if err != nil {
		return gateResult{}, err
	}
	v.Default()
	kcm := e.plan.Spec.Cluster.KCMIdentity
	if kcm == "" {
		kcm = DefaultKCMIdentity
	}
	ccm := "system:serviceaccount:" + v.Namespace + ":" + install.ServiceAccountName
	var seen []string
	for _, who := range []struct {
		user   string
		groups []string
	}{{kcm, nil}, {ccm, []string{"system:serviceaccounts", "system:serviceaccounts:" + v.Namespace}}} {
		for _, verb := range []string{"get", "update"} {
			ok, reason, err := canAccessLease(ctx, e.client, who.user, who.groups, verb)
			if err != nil {
				return gateResult{}, err
			}
			if !ok {
				return waiting(fmt.Sprintf("%s may not %s Lease %s/%s yet (%s)", who.user, verb, leadermigration.LeaseNamespace, leadermigration.LeaseName, reason)), nil
			}
		}
		seen = append(seen, who.user+" may get and update the migration lease")
	}
	return passed(seen...), nil
}

// deleteRBAC removes the migration's Roles, RoleBindings and the reports
// ConfigMap (by name: install's uninstall removes only install's objects).
func deleteRBAC(ctx context.Context, e *env, _ *Step) error {
	var errs []error
	del := func(kind, name string, f func() error) {
		err := f()
		switch {
		case err == nil:
			fmt.Fprintf(e.out, "%s/%s/%s deleted\n", kind, Namespace, name)
		case !apierrors.IsNotFound(err):
			errs = append(errs, fmt.Errorf("delete %s %s/%s: %w", kind, Namespace, name, err))
		}
	}
	opts := metav1.DeleteOptions{}
	rbac := e.client.RbacV1()
	for _, name := range []string{MigrationRoleName, ReportsRoleName} {
		del("RoleBinding", name, func() error { return rbac.RoleBindings(Namespace).Delete(ctx, name, opts) })
		del("Role", name, func() error { return rbac.Roles(Namespace).Delete(ctx, name, opts) })
	}
	del("ConfigMap", ReportsName, func() error { return e.client.CoreV1().ConfigMaps(Namespace).Delete(ctx, ReportsName, opts) })
	return errors.Join(errs...)
}

// --- control-plane node steps ----------------------------------------------

// kcmFlagsOn returns the kube-controller-manager flags on every planned
// control-plane node, or the nodes still missing a mirror Pod.
func (e *env) kcmFlags(ctx context.Context) ([]staticPodFlags, []string, error) {
	pods, err := mirrorPodFlags(ctx, e.client, leadermigration.ComponentKCM)
	if err != nil {
		return nil, nil, err
	}
	var missing []string
	for _, n := range e.plan.Spec.Cluster.ControlPlaneNodes {
		if !slices.ContainsFunc(pods, func(p staticPodFlags) bool { return p.Node == n }) {
			missing = append(missing, n)
		}
	}
	return pods, missing, nil
}

// kcmMode classifies one kube-controller-manager's flags.
func kcmMode(f nodefiles.Flags) string {
	provider, _ := f.Get("cloud-provider")
	lm := flagTrue(f, "enable-leader-migration")
	switch {
	case provider == "aws" && lm:
		return "in-tree with leader migration"
	case provider == "aws":
		return "in-tree"
	case provider == "external" && lm:
		return "external with leader migration"
	case provider == "external":
		return "external"
	}
	return fmt.Sprintf("--cloud-provider=%q", provider)
}

// flagTrue reads a boolean flag by the kube-controller-manager's own rule
// (nodefiles.ParseBool); a value it refuses is not true.
func flagTrue(f nodefiles.Flags, name string) bool {
	b, err := f.Bool(name, false)
	return err == nil && b
}

// kcmAllIn waits until every control-plane node's kube-controller-manager
// runs in mode.
func (e *env) kcmAllIn(ctx context.Context, mode string) (bool, []string, error) {
	pods, missing, err := e.kcmFlags(ctx)
	if err != nil {
		return false, nil, err
	}
	ok := len(missing) == 0
	var ev []string
	for _, p := range pods {
		m := kcmMode(p.Flags)
		if m != mode {
			ok = false
		}
		if mode == "in-tree with leader migration" && !p.Flags.Has("leader-migration-config") {
			ok = false
			m += " but no --leader-migration-config"
		}
		ev = append(ev, fmt.Sprintf("%s: kube-controller-manager %s", p.Node, m))
	}
	for _, n := range missing {
		ev = append(ev, n+": no kube-controller-manager mirror Pod")
	}
	return ok, ev, nil
}

// kcmLeaderMigrationGate: every kube-controller-manager runs in-tree with
// leader migration, and one of them holds the migration lease.
func kcmLeaderMigrationGate(ctx context.Context, e *env, _ *Step) (gateResult, error) {
	ok, ev, err := e.kcmAllIn(ctx, "in-tree with leader migration")
	if err != nil || !ok {
		return waiting(ev...), err
	}
	return e.kcmHoldsMigrationLease(ctx, ev)
}

// kcmHoldsMigrationLease passes, with ev and the leases as evidence, once a
// kube-controller-manager holds the migration lease and renews it.
func (e *env) kcmHoldsMigrationLease(ctx context.Context, ev []string) (gateResult, error) {
	l, err := readLeases(ctx, e.client)
	if err != nil {
		return gateResult{}, err
	}
	ev = append(ev, l.String())
	if l.migrationHolder() != leadermigration.ComponentKCM || !l.Migration.fresh(e.now()) {
		return waiting(ev...), nil
	}
	return passed(ev...), nil
}

// kcmInTreeGate (undo of kcm-leader-migration and kcm-external): every
// kube-controller-manager is back to the plain in-tree provider, and one of
// them leads again. The cluster is as before only then: until a
// kube-controller-manager holds Lease kube-controller-manager no manager
// runs the cloud loops (after a restart without a release, one lease
// duration).
func kcmInTreeGate(ctx context.Context, e *env, s *Step) (gateResult, error) {
	ok, ev, err := e.kcmAllIn(ctx, "in-tree")
	if err != nil || !ok {
		return waiting(ev...), err
	}
	reports, missing, err := e.nodeReportsFor(ctx, s.Nodes, PhaseRestore)
	if err != nil {
		return gateResult{}, err
	}
	if len(missing) > 0 {
		return waiting(append(ev, "no report of phase restore yet from "+strings.Join(missing, ", "))...), nil
	}
	l, err := readLeases(ctx, e.client)
	if err != nil {
		return gateResult{}, err
	}
	res := decideInTreeLeads(reports, l.KCM, e.now())
	return gateResult{ok: res.ok, evidence: append(ev, res.evidence...)}, nil
}

// decideInTreeLeads: once every node reported its kube-controller-manager
// restored (each report is written after the new process answered, so no
// process of before is left), a kube-controller-manager that renews Lease
// kube-controller-manager after the last report is a restored one, and a
// plain in-tree kube-controller-manager that leads starts every controller,
// the cloud loops with them. It lists them in /healthz?verbose only once all
// have started (11-13 s after taking the Lease, measured on the test bed),
// and only its node can read that; so the gate waits until the leader has
// held the Lease, renewing it, for one lease duration: a
// kube-controller-manager whose controllers fail to start exits and stops
// renewing well within it.
func decideInTreeLeads(reports map[string]NodeReport, main lease, now time.Time) gateResult {
	var last time.Time
	var shown []string
	for _, n := range slices.Sorted(maps.Keys(reports)) {
		r := reports[n]
		if r.Time.After(last) {
			last = r.Time.Time
		}
		if running := leadermigration.Running(r.KCMHealthz, leadermigration.KCMNames()); len(running) > 0 {
			shown = append(shown, fmt.Sprintf("%s: kube-controller-manager /healthz?verbose lists %v", n, running))
		}
	}
	d := main.Duration
	if d <= 0 {
		d = DefaultLeaseDuration
	}
	ev := []string{fmt.Sprintf("Lease %s: holder %q, acquired %s, renewed %s", leadermigration.KCMLeaseName, main.Holder,
		main.Acquired.UTC().Format("15:04:05.000"), main.Renewed.UTC().Format("15:04:05.000"))}
	switch {
	case !main.fresh(now):
		return waiting(append(ev, "no kube-controller-manager leads yet")...)
	case !main.Renewed.After(last):
		return waiting(append(ev, "waiting for a restored kube-controller-manager to lead")...)
	case main.Renewed.Sub(main.Acquired) < d:
		return waiting(append(ev, fmt.Sprintf("a restored kube-controller-manager leads since %s; waiting until it has led for %s (it starts every controller)", main.Acquired.UTC().Format("15:04:05.000"), d))...)
	}
	return passed(append(append(ev, fmt.Sprintf("a restored kube-controller-manager has led for %s, renewing: it runs every controller, the cloud loops included", main.Renewed.Sub(main.Acquired).Round(time.Second))), shown...)...)
}

// kcmLeaderMigrationMirrorGate (undo of cut-over): kube-controller-manager
// runs in-tree with leader migration again; the CCM keeps the migration
// lease until install-ccm is undone.
func kcmLeaderMigrationMirrorGate(ctx context.Context, e *env, _ *Step) (gateResult, error) {
	ok, ev, err := e.kcmAllIn(ctx, "in-tree with leader migration")
	return gateResult{ok: ok, evidence: ev}, err
}

// --- install-ccm ------------------------------------------------------------

func (e *env) leaderMigration() bool { return e.plan.Spec.Mode == ModeLeaderMigration }

// kops runs its own CCM addon (spec.cloudControllerManager): the steps that
// would apply install's objects only wait at their gates there.
func (e *env) kops() bool { return e.plan.Spec.Cluster.Distribution == DistributionKops }

func installCCM(ctx context.Context, e *env, _ *Step) error {
	return e.writeCCM(ctx, e.leaderMigration(), false,
		"apply the cluster-spec edit for spec.cloudControllerManager (spec.kops of the plan) and `kops update cluster --yes`")
}

// writeCCM applies (or, with remove, deletes) install's objects, with the
// leader-migration file and flags when leaderMigration. On kops it prints
// the kops step instead: kops runs its own CCM addon.
func (e *env) writeCCM(ctx context.Context, leaderMigration, remove bool, kopsStep string) error {
	if e.kops() {
		fmt.Fprintln(e.out, "  kops: "+kopsStep)
		return nil
	}
	objs, err := ccmObjects(e.plan, leaderMigration)
	if err != nil {
		return err
	}
	if remove {
		_, err = e.applier.Uninstall(ctx, objs, apply.Options{Progress: e.out})
	} else {
		_, err = e.applier.Apply(ctx, objs, apply.Options{Progress: e.out})
	}
	return err
}

// installCCMGate, leader-migration mode: the CCM leads its own lease and
// runs the cloud-node controller, the migration lease stays with
// kube-controller-manager, and the CCM runs none of the migrated loops.
// Restart mode: the CCM leads and runs the migrated loops.
func installCCMGate(ctx context.Context, e *env, s *Step) (gateResult, error) {
	l, err := readLeases(ctx, e.client)
	if err != nil {
		return gateResult{}, err
	}
	ev := []string{l.String()}
	if e.leaderMigration() {
		pods, _, err := e.kcmFlags(ctx)
		if err != nil {
			return gateResult{}, err
		}
		for _, p := range pods {
			if kcmMode(p.Flags) == "in-tree" {
				return gateResult{}, &GuardError{Problems: []string{fmt.Sprintf(
					"split brain risk: kube-controller-manager on %s runs the in-tree provider without leader migration; it runs the cloud loops whenever it leads, whoever holds the migration lease: run `migrate-from-intree node --phase %s` there", p.Node, PhaseControlPlaneLeaderMigration)}}
			}
		}
	}
	if !l.CCM.fresh(e.now()) || l.CCM.Renewed.Before(e.stepStarted.Add(-time.Second)) {
		return waiting(append(ev, "the CCM does not lead its lease yet")...), nil
	}
	pod, checks, err := ccmHealthz(ctx, e.client, e.ns)
	if err != nil {
		return waiting(append(ev, err.Error())...), nil
	}
	ev = append(ev, fmt.Sprintf("CCM Pod %s /healthz?verbose: %s", pod, strings.Join(checks, ", ")))
	running := leadermigration.Running(checks, leadermigration.CCMNames())
	if !e.leaderMigration() {
		return gateResult{ok: len(running) > 0, evidence: ev}, nil
	}
	if len(running) > 0 {
		return gateResult{}, &GuardError{Problems: []string{fmt.Sprintf(
			"split brain: the CCM runs %v while kube-controller-manager holds the migration lease (%s)", running, l)}}
	}
	if l.migrationHolder() != leadermigration.ComponentKCM {
		return waiting(append(ev, "the migration lease is not held by kube-controller-manager")...), nil
	}
	if !slices.Contains(checks, "cloud-node-controller") {
		return waiting(append(ev, "the CCM does not run cloud-node-controller yet")...), nil
	}
	return passed(ev...), nil
}

func uninstallCCM(ctx context.Context, e *env, _ *Step) error {
	return e.writeCCM(ctx, e.leaderMigration(), true,
		"`kops edit cluster --unset=cluster.spec.cloudControllerManager` and `kops update cluster --yes`")
}

// uninstallCCMGate: the CCM's workload is gone and, in leader-migration
// mode, kube-controller-manager holds the migration lease again (about one
// lease duration after the CCM stopped).
func uninstallCCMGate(ctx context.Context, e *env, _ *Step) (gateResult, error) {
	var ev []string
	for _, get := range []func() error{
		func() error {
			_, err := e.client.AppsV1().DaemonSets(e.ns).Get(ctx, install.AppName, metav1.GetOptions{})
			return err
		},
		func() error {
			_, err := e.client.AppsV1().Deployments(e.ns).Get(ctx, install.AppName, metav1.GetOptions{})
			return err
		},
	} {
		if err := get(); !apierrors.IsNotFound(err) {
			return waiting("the CCM's workload still exists"), nil
		}
	}
	ev = append(ev, "the CCM's workload is gone")
	if !e.leaderMigration() {
		return passed(ev...), nil
	}
	return e.kcmHoldsMigrationLease(ctx, ev)
}

// ccmWorkloadArgs returns the CCM container's args of the installed
// workload.
func (e *env) ccmWorkloadArgs(ctx context.Context) ([]string, bool, error) {
	var tmplArgs []string
	ds, err := e.client.AppsV1().DaemonSets(e.ns).Get(ctx, install.AppName, metav1.GetOptions{})
	switch {
	case err == nil:
		tmplArgs = containerArgs(ds.Spec.Template.Spec.Containers)
	case apierrors.IsNotFound(err):
		var d *appsv1.Deployment
		d, err = e.client.AppsV1().Deployments(e.ns).Get(ctx, install.AppName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		tmplArgs = containerArgs(d.Spec.Template.Spec.Containers)
	default:
		return nil, false, err
	}
	return tmplArgs, true, nil
}

func containerArgs(cs []corev1.Container) []string {
	for _, c := range cs {
		if c.Name == install.AppName {
			return c.Args
		}
	}
	return nil
}
