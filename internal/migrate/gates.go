package migrate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
)

// The gates: each reads an observation of the cluster and hands it to its
// decision in gates_decide.go. Only finalize's gate acts on passing (it
// removes what no manager contends any more); the cut-over's, which
// records the hand-over, is in cutover.go.

// --- observations -----------------------------------------------------------

// observeKCM reads every kube-controller-manager mirror Pod and the planned
// control-plane nodes without one.
func (e *env) observeKCM(ctx context.Context) (kcmView, error) {
	pods, missing, err := e.kcmFlags(ctx)
	if err != nil {
		return kcmView{}, err
	}
	v := kcmView{Missing: missing}
	for _, p := range pods {
		v.Pods = append(v.Pods, kcmObserved{Node: p.Node, Mode: kcmMode(p.Flags), LeaderMigrationConfig: p.Flags.Has("leader-migration-config")})
	}
	return v, nil
}

// kcmFlags returns the kube-controller-manager flags on every planned
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

// nodeReportsFor reads the node reports and picks the final report of
// phase from each of nodes written since the step started, and the nodes
// missing one.
func (e *env) nodeReportsFor(ctx context.Context, nodes []string, phase string) (map[string]NodeReport, []string, error) {
	all, err := ReadNodeReportsOf(ctx, e.client, nodes)
	if err != nil {
		return nil, nil, err
	}
	got, missing := reportsSince(all, nodes, phase, e.stepStarted)
	return got, missing, nil
}

// ccmReads says what of the CCM a gate observes beyond the Leases and the
// CCM Pods' /healthz?verbose.
type ccmReads struct {
	// KCM: the kube-controller-managers too.
	KCM bool
	// Workload: the CCM's DaemonSet or Deployment and its args; and its
	// rollout when rolloutWhen says the args need it (a DaemonSet that
	// schedules no Pod is an error of the rollout, which a gate reports
	// only once it waits for the rollout).
	Workload    bool
	RolloutWhen func(args []string) bool
	// Healthz: the running CCM Pods' /healthz?verbose (a Pod list and a
	// proxied GET per poll), for the decisions that read CCMChecks.
	Healthz bool
}

// observeCCM reads what r asks for and the Leases, stopping where the
// decisions would wait on what it has read.
func (e *env) observeCCM(ctx context.Context, r ccmReads) (ccmObservation, error) {
	o := ccmObservation{LeaderMigration: e.leaderMigration(), StepStarted: e.stepStarted, Migrated: e.migratedCCMControllers()}
	var err error
	if r.Workload {
		if o.WorkloadArgs, o.WorkloadExists, err = e.ccmWorkloadArgs(ctx); err != nil {
			return o, err
		}
		// The decisions on the workload wait for it and its rollout before
		// anything else: until then the Leases and /healthz are not read,
		// which is every poll of a rollout.
		if !o.WorkloadExists || r.RolloutWhen == nil || !r.RolloutWhen(o.WorkloadArgs) {
			return o, nil
		}
		if o.Rollout, o.RolledOut, err = e.ccmRolledOut(ctx); err != nil || !o.RolledOut {
			return o, err
		}
	}
	if o.Leases, err = readLeases(ctx, e.client); err != nil {
		return o, err
	}
	if r.KCM {
		if o.KCM, err = e.observeKCM(ctx); err != nil {
			return o, err
		}
	}
	if !r.Healthz {
		return o, nil
	}
	if o.CCMPods, o.CCMChecks, err = ccmHealthz(ctx, e.client, e.ns); err != nil {
		o.CCMPods, o.CCMChecks, o.CCMError = "", nil, err.Error()
	}
	return o, nil
}

// ccmWorkloadGone reads whether the CCM's DaemonSet and Deployment are
// both gone (any answer but NotFound counts as still there).
func (e *env) ccmWorkloadGone(ctx context.Context) bool {
	_, err := e.client.AppsV1().DaemonSets(e.ns).Get(ctx, install.AppName, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		return false
	}
	_, err = e.client.AppsV1().Deployments(e.ns).Get(ctx, install.AppName, metav1.GetOptions{})
	return apierrors.IsNotFound(err)
}

// --- the gates --------------------------------------------------------------

func verifyClusterGate(ctx context.Context, e *env, _ *Step) (gateResult, error) {
	kcm, err := mirrorPodFlags(ctx, e.client, leadermigration.ComponentKCM)
	if err != nil {
		return gateResult{}, err
	}
	b, err := e.baseline(ctx)
	if err != nil {
		return gateResult{}, err
	}
	if b == nil {
		return gateResult{}, errors.New("verify-cluster: no baseline in the journal after the step took it")
	}
	o := verifyClusterObservation{Planned: e.plan.Spec.Cluster.ControlPlaneNodes, Version: e.plan.Spec.Cluster.KubernetesVersion,
		BaselineNodes: len(b.ProviderIDs), BaselineLBs: len(b.Hostnames)}
	for _, k := range kcm {
		o.KCMNodes = append(o.KCMNodes, k.Node)
	}
	return decideVerifyCluster(o)
}

// rbacGate asks the apiserver (SubjectAccessReview) whether both managers
// may get and update the migration lease.
func rbacGate(ctx context.Context, e *env, _ *Step) (gateResult, error) {
	o := rbacObservation{LeaderMigration: e.leaderMigration()}
	if !o.LeaderMigration {
		if _, err := e.client.CoreV1().ConfigMaps(Namespace).Get(ctx, ReportsName, metav1.GetOptions{}); err != nil {
			o.ReportsError = err.Error()
		}
		return decideRBAC(o), nil
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
	for _, who := range []struct {
		user   string
		groups []string
	}{{kcm, nil}, {ccm, []string{"system:serviceaccounts", "system:serviceaccounts:" + v.Namespace}}} {
		for _, verb := range []string{"get", "update"} {
			ok, reason, err := canAccessLease(ctx, e.client, who.user, who.groups, verb)
			if err != nil {
				return gateResult{}, err
			}
			o.Access = append(o.Access, leaseAccess{User: who.user, Verb: verb, Allowed: ok, Reason: reason})
			if !ok {
				return decideRBAC(o), nil
			}
		}
	}
	return decideRBAC(o), nil
}

func (e *env) observeLeaderMigration(ctx context.Context) (leaderMigrationObservation, error) {
	var o leaderMigrationObservation
	var err error
	if o.KCM, err = e.observeKCM(ctx); err != nil {
		return o, err
	}
	o.Leases, err = readLeases(ctx, e.client)
	return o, err
}

// kcmLeaderMigrationGate: every kube-controller-manager runs in-tree with
// leader migration, and one of them holds the migration lease.
func kcmLeaderMigrationGate(ctx context.Context, e *env, _ *Step) (gateResult, error) {
	o, err := e.observeLeaderMigration(ctx)
	if err != nil {
		return gateResult{}, err
	}
	return decideKCMLeaderMigration(o, e.now()), nil
}

// kcmLeaderMigrationMirrorGate (undo of cut-over): kube-controller-manager
// runs in-tree with leader migration again; the CCM keeps the migration
// lease until install-ccm is undone.
func kcmLeaderMigrationMirrorGate(ctx context.Context, e *env, _ *Step) (gateResult, error) {
	v, err := e.observeKCM(ctx)
	if err != nil {
		return gateResult{}, err
	}
	ok, ev := decideKCMAllIn(v, kcmModeLeaderMigration)
	return gateResult{ok: ok, evidence: ev}, nil
}

// kcmInTreeGate (undo of kcm-leader-migration and kcm-external).
func kcmInTreeGate(ctx context.Context, e *env, s *Step) (gateResult, error) {
	var o inTreeObservation
	var err error
	if o.KCM, err = e.observeKCM(ctx); err != nil {
		return gateResult{}, err
	}
	if o.Reports, o.Missing, err = e.nodeReportsFor(ctx, s.Nodes, PhaseRestore); err != nil {
		return gateResult{}, err
	}
	l, err := readLeases(ctx, e.client)
	if err != nil {
		return gateResult{}, err
	}
	o.KCMMain = l.KCM
	return decideKCMInTree(o, e.now()), nil
}

// kcmExternalGate (restart mode).
func kcmExternalGate(ctx context.Context, e *env, s *Step) (gateResult, error) {
	o := kcmExternalObservation{Phase: s.Phase}
	var err error
	if o.KCM, err = e.observeKCM(ctx); err != nil {
		return gateResult{}, err
	}
	if o.Reports, o.Missing, err = e.nodeReportsFor(ctx, s.Nodes, s.Phase); err != nil {
		return gateResult{}, err
	}
	return decideKCMExternal(o)
}

func installCCMGate(ctx context.Context, e *env, _ *Step) (gateResult, error) {
	o, err := e.observeCCM(ctx, ccmReads{KCM: e.leaderMigration(), Healthz: true})
	if err != nil {
		return gateResult{}, err
	}
	return decideInstallCCM(o, e.now())
}

func uninstallCCMGate(ctx context.Context, e *env, _ *Step) (gateResult, error) {
	if !e.ccmWorkloadGone(ctx) {
		return decideUninstallCCM(ccmObservation{WorkloadExists: true}, e.now()), nil
	}
	o := ccmObservation{LeaderMigration: e.leaderMigration()}
	if o.LeaderMigration {
		var err error
		if o.Leases, err = readLeases(ctx, e.client); err != nil {
			return gateResult{}, err
		}
	}
	return decideUninstallCCM(o, e.now()), nil
}

// finalizeGate removes the migration's RBAC, the reports and the stale
// migration lease once its decision passes: no manager contends the lease
// any more.
func finalizeGate(ctx context.Context, e *env, _ *Step) (gateResult, error) {
	o, err := e.observeCCM(ctx, ccmReads{Workload: true, RolloutWhen: func(args []string) bool { return !hasLeaderMigrationFlag(args) }, Healthz: true})
	if err != nil {
		return gateResult{}, err
	}
	res, err := decideFinalize(o, e.now())
	if err != nil || !res.ok {
		return res, err
	}
	if err := deleteRBAC(ctx, e, nil); err != nil {
		return gateResult{}, err
	}
	err = e.client.CoordinationV1().Leases(leadermigration.LeaseNamespace).Delete(ctx, leadermigration.LeaseName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return gateResult{}, fmt.Errorf("delete the stale migration lease: %w", err)
	}
	return passed(append(res.evidence, "removed the migration RBAC, the reports ConfigMap and Lease "+leadermigration.LeaseName)...), nil
}

// unfinalizeGate: in restart mode the migration RBAC is back (rbacGate).
func unfinalizeGate(ctx context.Context, e *env, s *Step) (gateResult, error) {
	if !e.leaderMigration() {
		return rbacGate(ctx, e, s)
	}
	o, err := e.observeCCM(ctx, ccmReads{Workload: true, RolloutWhen: hasLeaderMigrationFlag})
	if err != nil {
		return gateResult{}, err
	}
	return decideUnfinalize(o, e.now()), nil
}

func kubeletGate(ctx context.Context, e *env, s *Step) (gateResult, error) {
	return e.kubeletsGate(ctx, s, PhaseKubeletExternal)
}

func kubeletRestoreGate(ctx context.Context, e *env, s *Step) (gateResult, error) {
	return e.kubeletsGate(ctx, s, PhaseRestore)
}

// kubeletsGate judges the reports of a kubelet phase (decideKubelets), read
// at most every reportsEvery: between reads it answers what it last saw.
func (e *env) kubeletsGate(ctx context.Context, s *Step, phase string) (gateResult, error) {
	last := e.kubeletReports
	if last.step == s.Name && last.phase == phase && !last.at.Before(e.stepStarted) && e.now().Sub(last.at) < reportsEvery(len(s.Nodes)) {
		return last.res, nil
	}
	reports, missing, err := e.nodeReportsFor(ctx, s.Nodes, phase)
	if err != nil {
		return gateResult{}, err
	}
	res, err := decideKubelets(kubeletObservation{Nodes: s.Nodes, Phase: phase, Reports: reports, Missing: missing})
	if err == nil {
		e.kubeletReports = kubeletReportsRead{step: s.Name, phase: phase, at: e.now(), res: res}
	}
	return res, err
}

// reportsEvery is how often a kubelet gate over n nodes reads their
// reports: at every poll up to 1,000 nodes, then once a second per 1,000.
// Each read takes the report ConfigMaps whole, 2.5 MiB at 5,000 nodes
// (make bench-migration: 69% of what apply read, 44 MiB a minute at a
// poll a second); a gate that passes a few seconds later over thousands
// of nodes costs nothing.
func reportsEvery(n int) time.Duration { return time.Duration(n/1000) * time.Second }

// kubeletReportsRead is a kubelet gate's last read.
type kubeletReportsRead struct {
	step, phase string
	at          time.Time
	res         gateResult
}

func kubeadmConfigGate(ctx context.Context, e *env, _ *Step) (gateResult, error) {
	o := kubeadmConfigObservation{Distribution: e.plan.Spec.Cluster.Distribution, Original: e.journal.KubeadmConfigOriginal}
	cm, err := e.client.CoreV1().ConfigMaps(Namespace).Get(ctx, kubeadmConfigName, metav1.GetOptions{})
	switch {
	case err == nil:
		o.Exists, o.Current = true, cm.Data[kubeadmConfigKey]
	case !apierrors.IsNotFound(err):
		// Not a verdict: only NotFound means there is no kubeadm-config; an
		// apiserver that did not answer is asked again.
		return waiting(fmt.Sprintf("ConfigMap %s/%s: %v", Namespace, kubeadmConfigName, err)), nil
	}
	return decideKubeadmConfig(o)
}
