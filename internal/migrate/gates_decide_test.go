package migrate

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/migrate/nodephase"
)

// Each gate's decision, table-tested on observations built by hand: what
// test/migration reaches only through a real cluster in minutes.

var (
	gT0 = time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)
	// gStarted is when the step started.
	gStarted = gT0.Add(time.Minute)
)

const (
	gKCMID = "cp-a_6f0d2c1e"
	gCCMID = "cp-b_c7e1a9f4"
)

func gAt(s int) time.Time { return gStarted.Add(time.Duration(s) * time.Second) }

// gLease is a Lease held by holder, taken and renewed at the given
// seconds from the step's start.
func gLease(holder string, acquired, renewed int) lease {
	return lease{Exists: true, Holder: holder, Acquired: gAt(acquired), Renewed: gAt(renewed), Duration: 15 * time.Second}
}

// gLeases: kube-controller-manager and the CCM lead their own Leases
// (renewed 58 s after the step started); the migration lease is migration.
func gLeases(migration lease) leases {
	return leases{KCM: gLease(gKCMID, -600, 58), CCM: gLease(gCCMID, -300, 58), Migration: migration}
}

func gKCMs(mode string, nodes ...string) kcmView {
	var v kcmView
	for _, n := range nodes {
		v.Pods = append(v.Pods, kcmObserved{Node: n, Mode: mode, LeaderMigrationConfig: mode == kcmModeLeaderMigration})
	}
	return v
}

// gReport is node's report for phase, made s seconds after the step's
// start, of a kube-controller-manager that runs none of the migrated loops.
func gReport(node, phase string, s int) NodeReport {
	return NodeReport{Node: node, Phase: phase, Time: metav1.NewMicroTime(gAt(s)), KCMHealthz: []string{"ping", "leaderElection"}}
}

// checkGate asserts a decision: passed or not, a guard broken or not, and
// the evidence (or the error) containing each of want.
func checkGate(t *testing.T, res gateResult, err error, ok, guard bool, want ...string) {
	t.Helper()
	var ge *GuardError
	if guard != errors.As(err, &ge) {
		t.Fatalf("guard broken: got %v, want %v (err %v)", errors.As(err, &ge), guard, err)
	}
	text := strings.Join(res.evidence, "\n")
	if err != nil {
		text = err.Error()
		if !guard {
			t.Fatalf("unexpected error: %v", err)
		}
	}
	if res.ok != ok {
		t.Errorf("ok = %v, want %v; evidence:\n%s", res.ok, ok, text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("missing %q in:\n%s", w, text)
		}
	}
}

func TestDecideKCMAllIn(t *testing.T) {
	noConfig := gKCMs(kcmModeLeaderMigration, "cp-a", "cp-b")
	noConfig.Pods[1].LeaderMigrationConfig = false
	mixed := gKCMs(kcmModeLeaderMigration, "cp-a")
	mixed.Pods = append(mixed.Pods, kcmObserved{Node: "cp-b", Mode: kcmModeInTree})
	missing := gKCMs(kcmModeInTree, "cp-a")
	missing.Missing = []string{"cp-b"}
	for _, tc := range []struct {
		name string
		v    kcmView
		mode string
		ok   bool
		want []string
	}{
		{"every node in leader-migration mode", gKCMs(kcmModeLeaderMigration, "cp-a", "cp-b"), kcmModeLeaderMigration, true,
			[]string{"cp-a: kube-controller-manager in-tree with leader migration", "cp-b: kube-controller-manager in-tree with leader migration"}},
		{"leader migration without its config file", noConfig, kcmModeLeaderMigration, false,
			[]string{"cp-b: kube-controller-manager in-tree with leader migration but no --leader-migration-config"}},
		{"one node not restarted yet", mixed, kcmModeLeaderMigration, false, []string{"cp-b: kube-controller-manager in-tree"}},
		{"a node without a mirror Pod", missing, kcmModeInTree, false, []string{"cp-b: no kube-controller-manager mirror Pod"}},
		{"in-tree is not external", gKCMs(kcmModeInTree, "cp-a"), kcmModeExternal, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, ev := decideKCMAllIn(tc.v, tc.mode)
			checkGate(t, gateResult{ok: ok, evidence: ev}, nil, tc.ok, false, tc.want...)
		})
	}
}

// A report counts only when it is the phase's final one, written since the
// step started (a second of clock skew allowed).
func TestReportsSince(t *testing.T) {
	inProgress := gReport("cp-e", PhaseRestore, 5)
	inProgress.InProgress = true
	all := map[string]NodeReport{
		"cp-a": gReport("cp-a", PhaseRestore, 5),
		"cp-b": gReport("cp-b", PhaseRestore, -30), // stale: the run before
		"cp-c": gReport("cp-c", PhaseRestore, 0).withTime(gStarted.Add(-500 * time.Millisecond)),
		"cp-d": gReport("cp-d", PhaseControlPlaneExternal, 5),
		"cp-e": inProgress,
	}
	got, missing := reportsSince(all, []string{"cp-a", "cp-b", "cp-c", "cp-d", "cp-e", "cp-f"}, PhaseRestore, gStarted)
	if len(got) != 2 || got["cp-a"].Node != "cp-a" || got["cp-c"].Node != "cp-c" {
		t.Errorf("reports = %v, want cp-a and cp-c", got)
	}
	if want := "cp-b,cp-d,cp-e,cp-f"; strings.Join(missing, ",") != want {
		t.Errorf("missing = %v, want %s", missing, want)
	}
}

func (r NodeReport) withTime(t time.Time) NodeReport {
	r.Time = metav1.NewMicroTime(t)
	return r
}

func TestDecideVerifyCluster(t *testing.T) {
	base := verifyClusterObservation{Planned: []string{"cp-b", "cp-a"}, Version: "v1.26.15", BaselineNodes: 5, BaselineLBs: 2}
	same, more := base, base
	same.KCMNodes = []string{"cp-a", "cp-b"}
	more.KCMNodes = []string{"cp-a", "cp-b", "cp-c"}
	res, err := decideVerifyCluster(same)
	checkGate(t, res, err, true, false, "apiserver v1.26.15; kube-controller-manager on cp-a, cp-b; baseline: 5 Nodes, 2 load balancers")
	if _, err := decideVerifyCluster(more); err == nil || !strings.Contains(err.Error(), "make a new plan") {
		t.Errorf("a control-plane node not in the plan: err = %v", err)
	}
}

func TestDecideRBAC(t *testing.T) {
	allowed := func(user, verb string) leaseAccess { return leaseAccess{User: user, Verb: verb, Allowed: true} }
	for _, tc := range []struct {
		name string
		o    rbacObservation
		ok   bool
		want []string
	}{
		{"restart mode: no reports ConfigMap yet", rbacObservation{ReportsError: `configmaps "awsccmctl-migration-reports" not found`}, false, []string{"not found"}},
		{"restart mode: the reports ConfigMap exists", rbacObservation{}, true, []string{"exists"}},
		{"both managers may", rbacObservation{LeaderMigration: true, Access: []leaseAccess{
			allowed("kcm", "get"), allowed("kcm", "update"), allowed("ccm", "get"), allowed("ccm", "update")}}, true,
			[]string{"kcm may get and update the migration lease", "ccm may get and update the migration lease"}},
		{"the CCM may not update it yet", rbacObservation{LeaderMigration: true, Access: []leaseAccess{
			allowed("kcm", "get"), allowed("kcm", "update"), allowed("ccm", "get"), {User: "ccm", Verb: "update", Reason: "no RBAC policy matched"}}}, false,
			[]string{"ccm may not update Lease kube-system/", "(no RBAC policy matched)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkGate(t, decideRBAC(tc.o), nil, tc.ok, false, tc.want...)
		})
	}
}

// The migration lease is held by whom: kube-controller-manager must hold
// it, and renew it.
func TestDecideKCMLeaderMigration(t *testing.T) {
	lm := gKCMs(kcmModeLeaderMigration, "cp-a", "cp-b")
	for _, tc := range []struct {
		name string
		o    leaderMigrationObservation
		ok   bool
		want []string
	}{
		{"a node still plain in-tree", leaderMigrationObservation{KCM: gKCMs(kcmModeInTree, "cp-a"), Leases: gLeases(gLease(gKCMID, 0, 58))}, false, []string{"cp-a: kube-controller-manager in-tree"}},
		{"kube-controller-manager holds it", leaderMigrationObservation{KCM: lm, Leases: gLeases(gLease(gKCMID, 10, 58))}, true, []string{"(held by kube-controller-manager)"}},
		{"nobody holds it yet", leaderMigrationObservation{KCM: lm, Leases: gLeases(lease{})}, false, []string{"(held by nobody)"}},
		{"the CCM holds it", leaderMigrationObservation{KCM: lm, Leases: gLeases(gLease(gCCMID, 10, 58))}, false, []string{"(held by cloud-controller-manager)"}},
		{"kube-controller-manager stopped renewing it", leaderMigrationObservation{KCM: lm, Leases: gLeases(gLease(gKCMID, 10, 40))}, false, nil},
		{"an unknown identity holds it", leaderMigrationObservation{KCM: lm, Leases: gLeases(gLease("cp-c_d00dfeed", 10, 58))}, false, []string{"an unknown identity cp-c_d00dfeed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkGate(t, decideKCMLeaderMigration(tc.o, gAt(60)), nil, tc.ok, false, tc.want...)
		})
	}
}

// The undo of the control-plane steps: the mirror Pods back in-tree, every
// node's restore report, then decideInTreeLeads (intree_test.go).
func TestDecideKCMInTree(t *testing.T) {
	reports := map[string]NodeReport{"cp-a": gReport("cp-a", PhaseRestore, 10), "cp-b": gReport("cp-b", PhaseRestore, 20)}
	leads := gLease(gKCMID, 25, 58)
	for _, tc := range []struct {
		name string
		o    inTreeObservation
		ok   bool
		want []string
	}{
		{"a node still with leader migration", inTreeObservation{KCM: gKCMs(kcmModeLeaderMigration, "cp-a", "cp-b"), Reports: reports, KCMMain: leads}, false,
			[]string{"cp-a: kube-controller-manager in-tree with leader migration"}},
		{"a node has not reported", inTreeObservation{KCM: gKCMs(kcmModeInTree, "cp-a", "cp-b"), Reports: map[string]NodeReport{"cp-a": reports["cp-a"]}, Missing: []string{"cp-b"}, KCMMain: leads}, false,
			[]string{"no report of phase restore yet from cp-b"}},
		{"a restored kube-controller-manager led for a lease duration", inTreeObservation{KCM: gKCMs(kcmModeInTree, "cp-a", "cp-b"), Reports: reports, KCMMain: leads}, true,
			[]string{"has led for 33s"}},
		{"it leads, but not for long enough", inTreeObservation{KCM: gKCMs(kcmModeInTree, "cp-a", "cp-b"), Reports: reports, KCMMain: gLease(gKCMID, 50, 58)}, false,
			[]string{"waiting until it has led for 15s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkGate(t, decideKCMInTree(tc.o, gAt(60)), nil, tc.ok, false, tc.want...)
		})
	}
}

func TestDecideInstallCCM(t *testing.T) {
	lm := func(f func(*ccmObservation)) ccmObservation {
		o := ccmObservation{LeaderMigration: true, StepStarted: gStarted, KCM: gKCMs(kcmModeLeaderMigration, "cp-a", "cp-b"),
			Leases: gLeases(gLease(gKCMID, -600, 58)), CCMPods: "ccm-x", CCMChecks: []string{"ping", "leaderElection", "cloud-node-controller"}}
		o.Leases.CCM = gLease(gCCMID, 20, 58)
		if f != nil {
			f(&o)
		}
		return o
	}
	for _, tc := range []struct {
		name      string
		o         ccmObservation
		ok, guard bool
		want      []string
	}{
		{"leader migration: the CCM leads, runs cloud-node, kube-controller-manager keeps the migration lease", lm(nil), true, false,
			[]string{"CCM Pod ccm-x /healthz?verbose: ping, leaderElection, cloud-node-controller"}},
		{"a kube-controller-manager without leader migration", lm(func(o *ccmObservation) { o.KCM.Pods[1].Mode = kcmModeInTree }), false, true,
			[]string{"split brain risk: kube-controller-manager on cp-b runs the in-tree provider without leader migration"}},
		{"the CCM does not lead yet", lm(func(o *ccmObservation) { o.Leases.CCM = lease{} }), false, false,
			[]string{"the CCM does not lead its lease yet"}},
		{"the CCM's lease was last renewed before the step (a CCM of before)", lm(func(o *ccmObservation) { o.Leases.CCM = gLease(gCCMID, -30, -5) }), false, false,
			[]string{"the CCM does not lead its lease yet"}},
		{"its /healthz cannot be read", lm(func(o *ccmObservation) { o.CCMError = "no running CCM Pod in kube-system" }), false, false,
			[]string{"no running CCM Pod in kube-system"}},
		{"the CCM runs a migrated loop under leader migration", lm(func(o *ccmObservation) { o.CCMChecks = append(o.CCMChecks, "service-lb-controller") }), false, true,
			[]string{"split brain: the CCM runs [service-lb-controller] while kube-controller-manager holds the migration lease"}},
		{"the CCM holds the migration lease", lm(func(o *ccmObservation) { o.Leases.Migration = gLease(gCCMID, 20, 58) }), false, false,
			[]string{"the migration lease is not held by kube-controller-manager"}},
		{"no cloud-node-controller yet", lm(func(o *ccmObservation) { o.CCMChecks = []string{"ping"} }), false, false,
			[]string{"the CCM does not run cloud-node-controller yet"}},
		{"restart mode: the CCM runs the migrated loops", lm(func(o *ccmObservation) {
			o.LeaderMigration, o.KCM = false, kcmView{Pods: []kcmObserved{{Node: "cp-a", Mode: kcmModeInTree}}}
			o.CCMChecks = append(o.CCMChecks, "service-lb-controller")
		}), true, false, nil},
		{"restart mode: none of them yet", lm(func(o *ccmObservation) { o.LeaderMigration = false }), false, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := decideInstallCCM(tc.o, gAt(60))
			checkGate(t, res, err, tc.ok, tc.guard, tc.want...)
		})
	}
}

// The undo of install-ccm.
func TestDecideUninstallCCM(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    ccmObservation
		ok   bool
		want []string
	}{
		{"the workload still exists", ccmObservation{WorkloadExists: true, LeaderMigration: true}, false, []string{"the CCM's workload still exists"}},
		{"restart mode: gone", ccmObservation{}, true, []string{"the CCM's workload is gone"}},
		{"gone, kube-controller-manager took the migration lease back", ccmObservation{LeaderMigration: true, Leases: gLeases(gLease(gKCMID, 40, 58))}, true,
			[]string{"the CCM's workload is gone", "(held by kube-controller-manager)"}},
		{"gone, the CCM's migration lease has not expired", ccmObservation{LeaderMigration: true, Leases: gLeases(gLease(gCCMID, -300, 50))}, false,
			[]string{"(held by cloud-controller-manager)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkGate(t, decideUninstallCCM(tc.o, gAt(60)), nil, tc.ok, false, tc.want...)
		})
	}
}

func TestDecideFinalize(t *testing.T) {
	migrated := []string{"service-lb-controller", "cloud-node-lifecycle-controller"}
	obs := func(f func(*ccmObservation)) ccmObservation {
		o := ccmObservation{LeaderMigration: true, StepStarted: gStarted, WorkloadExists: true, WorkloadArgs: []string{"--cloud-provider=aws", "--v=2"},
			Rollout: "2 of 2 updated", RolledOut: true, Migrated: migrated,
			Leases: gLeases(gLease(gCCMID, -300, 40)), CCMPods: "ccm-y", CCMChecks: append([]string{"ping"}, migrated...)}
		o.Leases.CCM = gLease(gCCMID, 30, 58)
		if f != nil {
			f(&o)
		}
		return o
	}
	for _, tc := range []struct {
		name      string
		o         ccmObservation
		ok, guard bool
		want      []string
	}{
		{"a CCM without leader migration leads and runs the migrated loops", obs(nil), true, false, []string{"CCM Pod ccm-y /healthz?verbose"}},
		{"the workload still has leader migration", obs(func(o *ccmObservation) { o.WorkloadArgs = append(o.WorkloadArgs, "--enable-leader-migration") }), false, false,
			[]string{"the CCM's workload still has leader migration"}},
		{"no workload", obs(func(o *ccmObservation) { o.WorkloadExists = false }), false, false, []string{"still has leader migration"}},
		{"rolling out", obs(func(o *ccmObservation) { o.RolledOut, o.Rollout = false, "1 of 2 updated" }), false, false,
			[]string{"rolling out: 1 of 2 updated"}},
		{"trap C: kube-controller-manager renews the migration lease", obs(func(o *ccmObservation) { o.Leases.Migration = gLease(gKCMID, 50, 58) }), false, true,
			[]string{"kube-controller-manager holds the migration lease after the cut-over"}},
		{"kube-controller-manager's migration lease long expired is no guard break", obs(func(o *ccmObservation) { o.Leases.Migration = gLease(gKCMID, -300, -200) }), true, false, nil},
		{"leader migration: the leading CCM took its lease before the step", obs(func(o *ccmObservation) { o.Leases.CCM = gLease(gCCMID, -300, 58) }), false, false,
			[]string{"waiting for a CCM without leader migration to lead"}},
		{"restart mode: the CCM leads since before the step", obs(func(o *ccmObservation) { o.LeaderMigration, o.Leases.CCM = false, gLease(gCCMID, -300, 58) }), true, false, nil},
		{"a migrated loop not running yet", obs(func(o *ccmObservation) { o.CCMChecks = []string{"ping", "service-lb-controller"} }), false, false, nil},
		{"its /healthz cannot be read", obs(func(o *ccmObservation) { o.CCMError = "GET /healthz?verbose: timeout" }), false, false, []string{"timeout"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := decideFinalize(tc.o, gAt(60))
			checkGate(t, res, err, tc.ok, tc.guard, tc.want...)
		})
	}
}

// The undo of finalize, leader-migration mode.
func TestDecideUnfinalize(t *testing.T) {
	obs := func(f func(*ccmObservation)) ccmObservation {
		o := ccmObservation{LeaderMigration: true, StepStarted: gStarted, WorkloadExists: true, WorkloadArgs: []string{"--enable-leader-migration"},
			Rollout: "2 of 2 updated", RolledOut: true, Leases: gLeases(lease{})}
		o.Leases.CCM = gLease(gCCMID, 30, 58)
		if f != nil {
			f(&o)
		}
		return o
	}
	for _, tc := range []struct {
		name string
		o    ccmObservation
		ok   bool
		want []string
	}{
		{"rolled out, a CCM started since leads", obs(nil), true, []string{"runs with leader migration again, rolled out: 2 of 2 updated"}},
		{"no leader migration yet", obs(func(o *ccmObservation) { o.WorkloadArgs = nil }), false, []string{"has no leader migration yet"}},
		{"rolling out", obs(func(o *ccmObservation) { o.RolledOut = false }), false, []string{"rolling out"}},
		{"the leader's Lease is a replaced Pod's", obs(func(o *ccmObservation) { o.Leases.CCM = gLease(gCCMID, -300, 58) }), false,
			[]string{"waiting for a CCM started since to lead"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkGate(t, decideUnfinalize(tc.o, gAt(60)), nil, tc.ok, false, tc.want...)
		})
	}
}

// Restart mode's control-plane step: a node reporting a
// kube-controller-manager that still runs a cloud loop breaks the guard.
func TestDecideKCMExternal(t *testing.T) {
	ext := gKCMs(kcmModeExternal, "cp-a")
	quiet := map[string]NodeReport{"cp-a": gReport("cp-a", PhaseControlPlaneExternal, 10)}
	broken := quiet["cp-a"]
	broken.KCMHealthz = append(broken.KCMHealthz, "service")
	unread := quiet["cp-a"]
	unread.KCMHealthzError = "connection refused"
	for _, tc := range []struct {
		name      string
		o         kcmExternalObservation
		ok, guard bool
		want      []string
	}{
		{"external, reported quiet", kcmExternalObservation{KCM: ext, Reports: quiet}, true, false, []string{"cp-a: kube-controller-manager runs none of [route service cloud-node-lifecycle]"}},
		{"still in-tree", kcmExternalObservation{KCM: gKCMs(kcmModeInTree, "cp-a"), Reports: quiet}, false, false, []string{"cp-a: kube-controller-manager in-tree"}},
		{"not reported yet", kcmExternalObservation{KCM: ext, Phase: PhaseControlPlaneExternal, Missing: []string{"cp-a"}}, false, false,
			[]string{"cp-a: no report of phase control-plane-external yet (`migrate-from-intree node --phase control-plane-external"}},
		{"its /healthz could not be read", kcmExternalObservation{KCM: ext, Reports: map[string]NodeReport{"cp-a": unread}}, false, false, []string{"connection refused"}},
		{"it still runs a cloud loop", kcmExternalObservation{KCM: ext, Reports: map[string]NodeReport{"cp-a": broken}}, false, true,
			[]string{"split brain: kube-controller-manager on cp-a still runs [service] after the cut-over"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := decideKCMExternal(tc.o)
			checkGate(t, res, err, tc.ok, tc.guard, tc.want...)
		})
	}
}

func TestDecideKubeadmConfig(t *testing.T) {
	original := "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\ncontrollerManager:\n  extraArgs:\n    cloud-provider: aws\n"
	edited, err := nodephase.EditClusterConfiguration([]byte(original), nodephase.Phase(PhaseControlPlaneExternal), nodephase.LeaderMigrationConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    kubeadmConfigObservation
		ok   bool
		want []string
	}{
		{"no kubeadm-config (kops)", kubeadmConfigObservation{Distribution: DistributionKops}, true, []string{"nothing to change (kops)"}},
		{"not edited yet", kubeadmConfigObservation{Exists: true, Original: original, Current: original}, false, []string{"is not the edited one"}},
		{"edited", kubeadmConfigObservation{Exists: true, Original: original, Current: string(edited)}, true, []string{"--cloud-provider=external"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := decideKubeadmConfig(tc.o)
			checkGate(t, res, err, tc.ok, false, tc.want...)
		})
	}
}

// A step's gate still waiting after its timeout stops the run with what
// it last saw; at the timeout itself it still waits.
func TestDecideTimeout(t *testing.T) {
	s := &Step{Name: StepInstallCCM, Timeout: metav1.Duration{Duration: 5 * time.Minute}}
	last := waiting("the CCM does not lead its lease yet")
	if err := decideTimeout(s, gStarted, gStarted.Add(5*time.Minute), last); err != nil {
		t.Errorf("at the timeout: %v", err)
	}
	err := decideTimeout(s, gStarted, gStarted.Add(5*time.Minute+time.Millisecond), last)
	var ge *GateError
	if !errors.As(err, &ge) || ge.Step != StepInstallCCM || !strings.Contains(err.Error(), "within 5m0s; last seen: the CCM does not lead its lease yet") {
		t.Errorf("after the timeout: %v", err)
	}
}

// Both guards report every problem at once, each from the baseline.
func TestDecideGuards(t *testing.T) {
	b := &Baseline{ProviderIDs: map[string]string{"w-1": "aws:///us-east-1a/i-1", "w-2": "aws:///us-east-1a/i-2", "cp-1": "aws:///us-east-1a/i-3"},
		Hostnames: map[string]string{"default/web": "web-lb", "default/api": "api-lb"}}
	nodeWith := func(id string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{Spec: corev1.NodeSpec{ProviderID: id, Taints: taints}}
	}
	intact := guardObservation{
		Nodes:     map[string]*corev1.Node{"w-1": nodeWith("aws:///us-east-1a/i-1"), "w-2": nodeWith("aws:///us-east-1a/i-2"), "cp-1": nodeWith("aws:///us-east-1a/i-3"), "w-new": nodeWith("")},
		Hostnames: map[string]string{"default/web": "web-lb", "default/api": "api-lb", "default/new": ""},
	}
	if err := decideGuards(intact, b); err != nil {
		t.Fatalf("intact: %v", err)
	}
	broken := guardObservation{
		Nodes: map[string]*corev1.Node{"w-1": nodeWith("aws:///us-east-1b/i-9"),
			"cp-1": nodeWith("aws:///us-east-1a/i-3", corev1.Taint{Key: taintUninitialized, Effect: corev1.TaintEffectNoSchedule})},
		Hostnames: map[string]string{"default/web": "other-lb"},
	}
	err := decideGuards(broken, b)
	var ge *GuardError
	if !errors.As(err, &ge) {
		t.Fatalf("broken: %v", err)
	}
	want := []string{
		"Node cp-1 is tainted " + taintUninitialized + " again",
		`Node w-1's providerID changed from "aws:///us-east-1a/i-1" to "aws:///us-east-1b/i-9"`,
		"Node w-2 was deleted",
		"Service default/api was deleted",
		`Service default/web's load balancer changed from "web-lb" to "other-lb"`,
	}
	if len(ge.Problems) != len(want) {
		t.Fatalf("problems = %q, want %d", ge.Problems, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(ge.Problems[i], w) {
			t.Errorf("problem %d = %q, want %q", i, ge.Problems[i], w)
		}
	}
}
