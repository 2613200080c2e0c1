package migrate

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/migrate/nodephase"
)

// The gates' decisions: each judges one observation (what gates.go read
// from the cluster) at a moment, without reading anything itself, so a
// gate's rule is changed and tested in gates_decide_test.go in seconds. A
// decision returns passed, waiting (with what it waits for), or an error
// that stops the run (GuardError: a guard broke). The cut-over's, which
// keeps memory between looks, is in cutover.go.

// kcmModeLeaderMigration and kcmModeInTree are the kcmMode values the
// gates wait for.
const (
	kcmModeInTree          = "in-tree"
	kcmModeLeaderMigration = "in-tree with leader migration"
	kcmModeExternal        = "external"
)

// kcmView is every kube-controller-manager mirror Pod, by node, and the
// planned control-plane nodes that have none.
type kcmView struct {
	Pods    []kcmObserved
	Missing []string
}

// decideKCMAllIn: every planned control-plane node's
// kube-controller-manager runs in mode (in leader-migration mode also with
// --leader-migration-config).
func decideKCMAllIn(v kcmView, mode string) (bool, []string) {
	ok := len(v.Missing) == 0
	var ev []string
	for _, p := range v.Pods {
		m := p.Mode
		if m != mode {
			ok = false
		}
		if mode == kcmModeLeaderMigration && !p.LeaderMigrationConfig {
			ok = false
			m += " but no --leader-migration-config"
		}
		ev = append(ev, fmt.Sprintf("%s: kube-controller-manager %s", p.Node, m))
	}
	for _, n := range v.Missing {
		ev = append(ev, n+": no kube-controller-manager mirror Pod")
	}
	return ok, ev
}

// reportsSince picks, of every node report, the final report of phase
// from each of nodes written since the step started; a report from before
// (a second's clock skew allowed) is a node that has not run the step yet.
func reportsSince(all map[string]NodeReport, nodes []string, phase string, started time.Time) (map[string]NodeReport, []string) {
	got := map[string]NodeReport{}
	var missing []string
	for _, n := range nodes {
		r, ok := all[n]
		if !ok || r.Phase != phase || r.InProgress || r.Time.Time.Before(started.Add(-time.Second)) {
			missing = append(missing, n)
			continue
		}
		got[n] = r
	}
	return got, missing
}

// verifyClusterObservation: the nodes kube-controller-manager runs on, and
// what the plan and the baseline say.
type verifyClusterObservation struct {
	KCMNodes []string // sorted
	Planned  []string
	Version  string
	// BaselineNodes and BaselineLBs count the guards' baseline.
	BaselineNodes, BaselineLBs int
}

// decideVerifyCluster: kube-controller-manager runs on exactly the planned
// control-plane nodes, else the plan is stale.
func decideVerifyCluster(o verifyClusterObservation) (gateResult, error) {
	want := slices.Sorted(slices.Values(o.Planned))
	if !slices.Equal(o.KCMNodes, want) {
		return gateResult{}, fmt.Errorf("kube-controller-manager runs on %v, the plan was made for %v: make a new plan", o.KCMNodes, want)
	}
	return passed(fmt.Sprintf("apiserver %s; kube-controller-manager on %s; baseline: %d Nodes, %d load balancers",
		o.Version, strings.Join(o.KCMNodes, ", "), o.BaselineNodes, o.BaselineLBs)), nil
}

// leaseAccess is one SubjectAccessReview on the migration lease.
type leaseAccess struct {
	User, Verb string
	Allowed    bool
	Reason     string
}

// rbacObservation: in leader-migration mode the access reviews (in order,
// up to the first denied one); in restart mode whether the reports
// ConfigMap could be read.
type rbacObservation struct {
	LeaderMigration bool
	ReportsError    string
	Access          []leaseAccess
}

// decideRBAC: both managers may get and update the migration lease (a
// manager that may not never takes it); in restart mode the reports
// ConfigMap exists.
func decideRBAC(o rbacObservation) gateResult {
	if !o.LeaderMigration {
		if o.ReportsError != "" {
			return waiting(fmt.Sprintf("ConfigMap %s/%s: %s", Namespace, ReportsName, o.ReportsError))
		}
		return passed(fmt.Sprintf("ConfigMap %s/%s exists; %s may write it", Namespace, ReportsName, NodesGroup))
	}
	var seen []string
	for i, a := range o.Access {
		if !a.Allowed {
			return waiting(fmt.Sprintf("%s may not %s Lease %s/%s yet (%s)", a.User, a.Verb, leadermigration.LeaseNamespace, leadermigration.LeaseName, a.Reason))
		}
		if i == len(o.Access)-1 || o.Access[i+1].User != a.User {
			seen = append(seen, a.User+" may get and update the migration lease")
		}
	}
	return passed(seen...)
}

// leaderMigrationObservation: the kube-controller-managers and the Leases,
// for the gates that wait for kube-controller-manager to lead under
// leader migration.
type leaderMigrationObservation struct {
	KCM    kcmView
	Leases leases
}

// decideKCMLeaderMigration: every kube-controller-manager runs in-tree
// with leader migration, and one of them holds the migration lease.
func decideKCMLeaderMigration(o leaderMigrationObservation, now time.Time) gateResult {
	ok, ev := decideKCMAllIn(o.KCM, kcmModeLeaderMigration)
	if !ok {
		return waiting(ev...)
	}
	return decideKCMHoldsMigrationLease(o.Leases, ev, now)
}

// decideKCMHoldsMigrationLease passes, with ev and the leases as
// evidence, once a kube-controller-manager holds the migration lease and
// renews it.
func decideKCMHoldsMigrationLease(l leases, ev []string, now time.Time) gateResult {
	ev = append(ev, l.String())
	if l.migrationHolder() != leadermigration.ComponentKCM || !l.Migration.fresh(now) {
		return waiting(ev...)
	}
	return passed(ev...)
}

// inTreeObservation: the kube-controller-managers, the restore reports
// written since the step started, and Lease kube-controller-manager.
type inTreeObservation struct {
	KCM     kcmView
	Reports map[string]NodeReport
	Missing []string // nodes without a report of phase restore
	KCMMain lease
}

// decideKCMInTree (undo of kcm-leader-migration and kcm-external): every
// kube-controller-manager is back to the plain in-tree provider, and one
// of them leads again. The cluster is as before only then: until a
// kube-controller-manager holds Lease kube-controller-manager no manager
// runs the cloud loops (after a restart without a release, one lease
// duration).
func decideKCMInTree(o inTreeObservation, now time.Time) gateResult {
	ok, ev := decideKCMAllIn(o.KCM, kcmModeInTree)
	if !ok {
		return waiting(ev...)
	}
	if len(o.Missing) > 0 {
		return waiting(append(ev, "no report of phase restore yet from "+strings.Join(o.Missing, ", "))...)
	}
	res := decideInTreeLeads(o.Reports, o.KCMMain, now)
	return gateResult{ok: res.ok, evidence: append(ev, res.evidence...)}
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

// ccmObservation is the CCM as the gates see it: its workload, its Pods'
// /healthz?verbose, and the Leases.
type ccmObservation struct {
	LeaderMigration bool
	StepStarted     time.Time
	Leases          leases
	// KCM: the kube-controller-managers (install-ccm, leader-migration
	// mode).
	KCM kcmView
	// WorkloadExists, WorkloadArgs: the CCM's DaemonSet or Deployment and
	// its container's args; Rollout and RolledOut its rollout.
	WorkloadExists bool
	WorkloadArgs   []string
	Rollout        string
	RolledOut      bool
	// CCMPods and CCMChecks are /healthz?verbose of the running CCM Pods,
	// or CCMError why it was not read.
	CCMPods   string
	CCMChecks []string
	CCMError  string
	// Migrated are the CCM's migrated controllers that must run.
	Migrated []string
}

// ccmLeadsSince: the CCM leads its lease, renewed (or, with acquired,
// taken) since the step started.
func ccmLeadsSince(l lease, t, started, now time.Time) bool {
	return l.fresh(now) && !t.Before(started.Add(-time.Second))
}

// decideInstallCCM, leader-migration mode: the CCM leads its own lease and
// runs the cloud-node controller, the migration lease stays with
// kube-controller-manager, and the CCM runs none of the migrated loops.
// Restart mode: the CCM leads and runs the migrated loops.
func decideInstallCCM(o ccmObservation, now time.Time) (gateResult, error) {
	l := o.Leases
	ev := []string{l.String()}
	if o.LeaderMigration {
		for _, p := range o.KCM.Pods {
			if p.Mode == kcmModeInTree {
				return gateResult{}, &GuardError{Problems: []string{fmt.Sprintf(
					"split brain risk: kube-controller-manager on %s runs the in-tree provider without leader migration; it runs the cloud loops whenever it leads, whoever holds the migration lease: run `migrate-from-intree node --phase %s` there", p.Node, PhaseControlPlaneLeaderMigration)}}
			}
		}
	}
	if !ccmLeadsSince(l.CCM, l.CCM.Renewed, o.StepStarted, now) {
		return waiting(append(ev, "the CCM does not lead its lease yet")...), nil
	}
	if o.CCMError != "" {
		return waiting(append(ev, o.CCMError)...), nil
	}
	ev = append(ev, fmt.Sprintf("CCM Pod %s /healthz?verbose: %s", o.CCMPods, strings.Join(o.CCMChecks, ", ")))
	running := leadermigration.Running(o.CCMChecks, leadermigration.CCMNames())
	if !o.LeaderMigration {
		return gateResult{ok: len(running) > 0, evidence: ev}, nil
	}
	if len(running) > 0 {
		return gateResult{}, &GuardError{Problems: []string{fmt.Sprintf(
			"split brain: the CCM runs %v while kube-controller-manager holds the migration lease (%s)", running, l)}}
	}
	if l.migrationHolder() != leadermigration.ComponentKCM {
		return waiting(append(ev, "the migration lease is not held by kube-controller-manager")...), nil
	}
	if !slices.Contains(o.CCMChecks, "cloud-node-controller") {
		return waiting(append(ev, "the CCM does not run cloud-node-controller yet")...), nil
	}
	return passed(ev...), nil
}

// decideUninstallCCM: the CCM's workload is gone and, in leader-migration
// mode, kube-controller-manager holds the migration lease again (about one
// lease duration after the CCM stopped).
func decideUninstallCCM(o ccmObservation, now time.Time) gateResult {
	if o.WorkloadExists {
		return waiting("the CCM's workload still exists")
	}
	ev := []string{"the CCM's workload is gone"}
	if !o.LeaderMigration {
		return passed(ev...)
	}
	return decideKCMHoldsMigrationLease(o.Leases, ev, now)
}

func hasLeaderMigrationFlag(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--enable-leader-migration") })
}

// decideFinalize: the workload runs without leader migration and is rolled
// out (a Pod of before still contends the migration lease, whose RBAC the
// gate removes on passing), a CCM Pod started since leads (in
// leader-migration mode finalize restarts the CCM; in restart mode it
// changes nothing) and runs the migrated controllers. A
// kube-controller-manager renewing the migration lease now is trap C.
func decideFinalize(o ccmObservation, now time.Time) (gateResult, error) {
	if !o.WorkloadExists || hasLeaderMigrationFlag(o.WorkloadArgs) {
		return waiting("the CCM's workload still has leader migration"), nil
	}
	if !o.RolledOut {
		return waiting("the CCM's workload without leader migration is rolling out: " + o.Rollout), nil
	}
	l := o.Leases
	ev := []string{l.String()}
	if l.migrationHolder() == leadermigration.ComponentKCM && l.Migration.fresh(now) {
		return gateResult{}, &GuardError{Problems: []string{"kube-controller-manager holds the migration lease after the cut-over (it still runs with leader migration, trap C): " + l.String()}}
	}
	if !l.CCM.fresh(now) || (o.LeaderMigration && !ccmLeadsSince(l.CCM, l.CCM.Acquired, o.StepStarted, now)) {
		return waiting(append(ev, "waiting for a CCM without leader migration to lead")...), nil
	}
	if o.CCMError != "" {
		return waiting(append(ev, o.CCMError)...), nil
	}
	ev = append(ev, fmt.Sprintf("CCM Pod %s /healthz?verbose: %s", o.CCMPods, strings.Join(o.CCMChecks, ", ")))
	if got := leadermigration.Running(o.CCMChecks, o.Migrated); len(got) < len(o.Migrated) {
		return waiting(ev...), nil
	}
	return passed(ev...), nil
}

// decideUnfinalize (leader-migration mode): the CCM's workload runs with
// leader migration again, is rolled out (no Pod without it is left to
// lead), and a CCM that took the Lease since leads (a fresh Lease of a
// replaced Pod is only waiting to expire, or to be released).
func decideUnfinalize(o ccmObservation, now time.Time) gateResult {
	if !o.WorkloadExists || !hasLeaderMigrationFlag(o.WorkloadArgs) {
		return waiting("the CCM's workload has no leader migration yet")
	}
	if !o.RolledOut {
		return waiting("the CCM's workload with leader migration is rolling out: " + o.Rollout)
	}
	l := o.Leases
	if !ccmLeadsSince(l.CCM, l.CCM.Acquired, o.StepStarted, now) {
		return waiting("the CCM's workload is rolled out ("+o.Rollout+"); waiting for a CCM started since to lead", l.String())
	}
	return passed("the CCM's workload runs with leader migration again, rolled out: "+o.Rollout, l.String())
}

// kcmExternalObservation: the kube-controller-managers and the reports of
// the step's phase written since it started.
type kcmExternalObservation struct {
	KCM     kcmView
	Phase   string
	Reports map[string]NodeReport
	Missing []string
}

// decideKCMExternal (restart mode): every kube-controller-manager runs
// external and every node reported that its new one runs none of the
// migrated loops; one that still runs one breaks the split-brain guard.
func decideKCMExternal(o kcmExternalObservation) (gateResult, error) {
	ok, ev := decideKCMAllIn(o.KCM, kcmModeExternal)
	if !ok {
		return waiting(ev...), nil
	}
	for _, n := range o.Missing {
		ev = append(ev, fmt.Sprintf("%s: no report of phase %s yet (`migrate-from-intree node --phase %s --kubeconfig ...` writes it)", n, o.Phase, o.Phase))
	}
	ok = len(o.Missing) == 0
	for _, n := range slices.Sorted(maps.Keys(o.Reports)) {
		r := o.Reports[n]
		if r.KCMHealthzError != "" {
			ok = false
			ev = append(ev, fmt.Sprintf("%s: kube-controller-manager /healthz?verbose: %s", n, r.KCMHealthzError))
			continue
		}
		if running := leadermigration.Running(r.KCMHealthz, leadermigration.KCMNames()); len(running) > 0 {
			return gateResult{}, &GuardError{Problems: []string{fmt.Sprintf("split brain: kube-controller-manager on %s still runs %v after the cut-over", n, running)}}
		}
		ev = append(ev, fmt.Sprintf("%s: kube-controller-manager runs none of %v", n, leadermigration.KCMNames()))
	}
	return gateResult{ok: ok, evidence: ev}, nil
}

// kubeadmConfigObservation: kube-system/kubeadm-config's
// ClusterConfiguration, and the original the journal kept.
type kubeadmConfigObservation struct {
	Exists       bool
	Distribution Distribution
	Current      string
	Original     string
}

// decideKubeadmConfig: the ClusterConfiguration is the original edited for
// the external provider (nothing to change without kubeadm-config).
func decideKubeadmConfig(o kubeadmConfigObservation) (gateResult, error) {
	if !o.Exists {
		return passed("no kubeadm-config: nothing to change (" + string(o.Distribution) + ")"), nil
	}
	want, err := nodephase.EditClusterConfiguration([]byte(o.Original), nodephase.Phase(PhaseControlPlaneExternal), nodephase.LeaderMigrationConfigPath)
	if err != nil {
		return gateResult{}, err
	}
	if o.Current != string(want) {
		return waiting("kubeadm-config's ClusterConfiguration is not the edited one"), nil
	}
	return passed("kubeadm-config's ClusterConfiguration: kube-controller-manager --cloud-provider=external, kube-apiserver without the in-tree flags"), nil
}
