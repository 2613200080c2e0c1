package migrate

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The undo of kcm-leader-migration: the operator restores one node every
// 20 s; each report is written once the node's restored
// kube-controller-manager answers. The gate passes once a
// kube-controller-manager renewed Lease kube-controller-manager after the
// last report, having held it for a lease duration.
func TestDecideInTreeLeads(t *testing.T) {
	t0 := time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	report := func(node string, s int, checks ...string) NodeReport {
		return NodeReport{Node: node, Phase: PhaseRestore, Time: metav1.NewMicroTime(at(s)), KCMHealthz: append([]string{"ping", "log", "leaderElection"}, checks...)}
	}
	// cp-c reports last, at 68 s.
	reports := map[string]NodeReport{"cp-a": report("cp-a", 28), "cp-b": report("cp-b", 48), "cp-c": report("cp-c", 68)}
	main := func(holder string, acquired, renewed int) lease {
		return lease{Exists: true, Holder: holder, Acquired: at(acquired), Renewed: at(renewed), Duration: 15 * time.Second}
	}
	for _, tc := range []struct {
		name    string
		reports map[string]NodeReport
		main    lease
		now     int
		ok      bool
		want    []string // in the evidence
	}{
		{
			name: "the Lease expired: nobody leads",
			main: main("cp-c_2e5f8b33", 36, 60), now: 80,
			want: []string{"no kube-controller-manager leads yet"},
		},
		{
			name: "the Lease was released",
			main: lease{Exists: true, Acquired: at(36), Renewed: at(62), Duration: 15 * time.Second}, now: 70,
			want: []string{`holder ""`, "no kube-controller-manager leads yet"},
		},
		{
			name: "no Lease",
			now:  70,
			want: []string{"no kube-controller-manager leads yet"},
		},
		{
			name: "fresh, but last renewed before the last report",
			main: main("cp-c_2e5f8b33", 36, 66), now: 70,
			want: []string{"waiting for a restored kube-controller-manager to lead"},
		},
		{
			name: "renewed after the first reports, before the last",
			main: main("cp-b_91b7a4d0", 36, 50), now: 60,
			want: []string{"waiting for a restored kube-controller-manager to lead"},
		},
		{
			name: "renewed at the time of the last report",
			main: main("cp-a_0000001f", 44, 68), now: 70,
			want: []string{"waiting for a restored kube-controller-manager to lead"},
		},
		{
			name: "acquired after the last report, not renewed since",
			main: main("cp-a_0000005f", 84, 84), now: 85,
			want: []string{"acquired 10:01:24.000, renewed 10:01:24.000", "waiting until it has led for 15s"},
		},
		{
			name: "renewed after the last report, leading for less than a lease duration",
			main: main("cp-a_0000005f", 84, 98), now: 99,
			want: []string{"a restored kube-controller-manager leads since 10:01:24.000; waiting until it has led for 15s"},
		},
		{
			name: "led for a lease duration, renewing, after the last report",
			main: main("cp-a_0000005f", 84, 99), now: 100, ok: true,
			want: []string{`Lease kube-controller-manager: holder "cp-a_0000005f"`, "a restored kube-controller-manager has led for 15s, renewing: it runs every controller"},
		},
		{
			name: "the lease duration is the Lease's: 16 s of a 20 s lease is not enough",
			main: lease{Exists: true, Holder: "cp-a_0000005f", Acquired: at(84), Renewed: at(100), Duration: 20 * time.Second}, now: 101,
			want: []string{"waiting until it has led for 20s"},
		},
		{
			name: "a Lease without a duration: the default 15 s",
			main: lease{Exists: true, Holder: "cp-a_0000005f", Acquired: at(84), Renewed: at(98)}, now: 99,
			want: []string{"waiting until it has led for 15s"},
		},
		{
			name: "a restored leader that took the Lease before the last report",
			main: main("cp-a_0000001f", 44, 70), now: 71, ok: true,
			want: []string{"a restored kube-controller-manager has led for 26s"},
		},
		{
			name:    "passed, showing the nodes whose kube-controller-manager runs the cloud loops",
			reports: map[string]NodeReport{"cp-a": report("cp-a", 28), "cp-b": report("cp-b", 48, "garbagecollector", "service", "route"), "cp-c": report("cp-c", 68)},
			main:    main("cp-b_0000002f", 44, 70), now: 71, ok: true,
			want: []string{"cp-b: kube-controller-manager /healthz?verbose lists [route service]"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := tc.reports
			if rs == nil {
				rs = reports
			}
			res := decideInTreeLeads(rs, tc.main, at(tc.now))
			if res.ok != tc.ok {
				t.Errorf("ok = %v, want %v; evidence:\n  %s", res.ok, tc.ok, strings.Join(res.evidence, "\n  "))
			}
			for _, w := range tc.want {
				if !slices.ContainsFunc(res.evidence, func(e string) bool { return strings.Contains(e, w) }) {
					t.Errorf("evidence lacks %q:\n  %s", w, strings.Join(res.evidence, "\n  "))
				}
			}
		})
	}
}
