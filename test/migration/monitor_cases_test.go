package migration

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
)

func TestMonitorAnalysis(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 0, 16, 27, 0, time.UTC)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 200 * time.Millisecond) }
	const (
		host   = "ip-10-0-1-10.ec2.internal"
		kcmID  = host + "_0a23f34a-kcm"
		kcm2ID = host + "_77aa0b1c-kcm"
		// The CCM runs on the same host: its identity starts the same.
		ccmID = host + "_5e1d2c3b-ccm"
	)
	kcm := func(external bool, checks ...string) targetState {
		return targetState{Name: "kcm/" + host, Kind: kindKCM, Hostname: host, External: external, Checks: checks}
	}
	ccm := func(checks ...string) targetState {
		return targetState{Name: "ccm", Kind: kindCCM, Checks: checks}
	}
	down := func(ts targetState) targetState {
		ts.Checks, ts.Err = nil, "connection refused"
		return ts
	}
	// A leading in-tree kube-controller-manager, a non-leader, and the CCM
	// before and after it takes the migration lease.
	kcmLeader := kcm(false, "ping", "log", "leaderElection", "attachdetach", "nodeipam", "route", "service", "cloud-node-lifecycle")
	kcmExternalLeader := kcm(true, "ping", "log", "leaderElection", "attachdetach", "nodeipam")
	kcmWaiting := kcm(true, "ping", "log", "leaderElection")
	ccmWaiting := ccm("ping", "log", "leaderElection", "cloud-node-controller")
	ccmMigrated := ccm("ping", "log", "leaderElection", "cloud-node-controller", "node-route-controller", "service-lb-controller", "cloud-node-lifecycle-controller")
	leases := func(kcmHolder, ccmHolder, migHolder string, migRenew time.Time) map[string]leaseState {
		return map[string]leaseState{
			leadermigration.KCMLeaseName: {Holder: kcmHolder, RenewTime: migRenew},
			install.LeaseName:            {Holder: ccmHolder, RenewTime: migRenew},
			leadermigration.LeaseName:    {Holder: migHolder, AcquireTime: t0, RenewTime: migRenew},
		}
	}
	snap := func(i int, l map[string]leaseState, ts ...targetState) sample {
		return sample{Time: at(i), Targets: ts, Leases: l}
	}
	wantWindows := func(t *testing.T, field string, got, want []window) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", field, got, want)
		}
	}

	for _, tc := range []struct {
		name    string
		samples []sample
		check   func(t *testing.T, r monitorReport)
	}{{
		name: "SplitBrain: the KCM lists service while the CCM lists service-lb-controller",
		samples: []sample{
			snap(0, nil, kcmLeader, ccmWaiting),
			snap(1, nil, kcm(false, "leaderElection", "attachdetach", "service"), ccm("leaderElection", "service-lb-controller")),
			snap(2, nil, kcmWaiting, ccmMigrated),
		},
		check: func(t *testing.T, r monitorReport) {
			if len(r.SplitBrain) != 1 {
				t.Fatalf("SplitBrain = %q, want one line", r.SplitBrain)
			}
			line := r.SplitBrain[0]
			for _, want := range []string{at(1).Format(stampFormat), "service on kcm/" + host + " (service) and ccm (service-lb-controller)"} {
				if !strings.Contains(line, want) {
					t.Errorf("SplitBrain line %q does not say %q", line, want)
				}
			}
			if strings.Contains(line, "cloud-node-lifecycle") || strings.Contains(line, "route") {
				t.Errorf("SplitBrain line %q names a loop only one process runs", line)
			}
		},
	}, {
		name: "SplitBrain: none when the managers take turns",
		samples: []sample{
			snap(0, nil, kcmLeader, ccmWaiting),
			snap(1, nil, down(kcmLeader), ccmMigrated),
			snap(2, nil, kcmWaiting, ccmMigrated),
			snap(3, nil, kcmExternalLeader, ccmMigrated),
		},
		check: func(t *testing.T, r monitorReport) {
			if len(r.SplitBrain) != 0 {
				t.Errorf("SplitBrain = %q, want none", r.SplitBrain)
			}
			if r.Samples != 4 {
				t.Errorf("Samples = %d, want 4", r.Samples)
			}
		},
	}, {
		name: "SplitBrain: an unreachable process lists nothing",
		samples: []sample{
			snap(0, nil, targetState{Name: "kcm/" + host, Kind: kindKCM, Hostname: host, Checks: []string{"service"}, Err: "timeout"}, ccmMigrated),
		},
		check: func(t *testing.T, r monitorReport) {
			if len(r.SplitBrain) != 0 {
				t.Errorf("SplitBrain = %q, want none", r.SplitBrain)
			}
		},
	}, {
		name: "Gaps: from the KCM's last listing to the CCM's first",
		samples: []sample{
			// Before any process runs the loops: not a gap.
			snap(0, nil, down(kcmLeader), ccmWaiting),
			snap(1, nil, kcmLeader, ccmWaiting),
			snap(2, nil, kcmLeader, ccmWaiting),
			snap(3, nil, down(kcmLeader), ccmWaiting), // the cut-over stops it
			snap(4, nil, down(kcmLeader), ccmWaiting),
			snap(5, nil, kcmWaiting, ccmWaiting),
			snap(9, nil, kcmWaiting, ccmWaiting),
			snap(10, nil, kcmWaiting, ccmMigrated), // the CCM wins the lease
			snap(11, nil, kcmWaiting, ccmMigrated),
		},
		check: func(t *testing.T, r monitorReport) {
			wantWindows(t, "Gaps", r.Gaps, []window{{From: at(3), To: at(10)}})
			if got, want := r.LongestGap(), 1400*time.Millisecond; got != want {
				t.Errorf("LongestGap = %s, want %s", got, want)
			}
			if s := r.String(); !strings.Contains(s, at(3).Format(stampFormat)+" for 1.4s") {
				t.Errorf("String does not show the gap's start and length:\n%s", s)
			}
		},
	}, {
		name: "Gaps: one still open at Stop ends at the last sample",
		samples: []sample{
			snap(0, nil, kcmLeader, ccmWaiting),
			snap(1, nil, kcmWaiting, ccmWaiting),
			snap(2, nil, kcmWaiting, ccmMigrated),
			snap(3, nil, kcmWaiting, down(ccmMigrated)),
			snap(6, nil, kcmWaiting, ccmWaiting),
		},
		check: func(t *testing.T, r monitorReport) {
			wantWindows(t, "Gaps", r.Gaps, []window{{From: at(1), To: at(2)}, {From: at(3), To: at(6)}})
			if got, want := r.LongestGap(), 600*time.Millisecond; got != want {
				t.Errorf("LongestGap = %s, want %s", got, want)
			}
		},
	}, {
		name: "ExternalKCMRenews: an external KCM renews the migration lease (trap C)",
		samples: []sample{
			snap(0, leases(kcmID, ccmID, kcmID, at(0)), kcmExternalLeader, ccmWaiting),
			snap(1, leases(kcmID, ccmID, kcmID, at(0)), kcmExternalLeader, ccmWaiting), // not renewed since
			snap(2, leases(kcmID, ccmID, kcmID, at(2)), kcmExternalLeader, ccmWaiting),
			// The migration lease could not be read: compared with the last reading.
			{Time: at(3), Targets: []targetState{kcmExternalLeader, ccmWaiting}, Leases: map[string]leaseState{leadermigration.LeaseName: {Err: "timeout"}}},
			snap(4, leases(kcmID, ccmID, kcmID, at(2)), kcmExternalLeader, ccmWaiting),
		},
		check: func(t *testing.T, r monitorReport) {
			if len(r.ExternalKCMRenews) != 1 {
				t.Fatalf("ExternalKCMRenews = %q, want one line", r.ExternalKCMRenews)
			}
			line := r.ExternalKCMRenews[0]
			for _, want := range []string{at(2).Format(stampFormat), kcmID, "kcm/" + host} {
				if !strings.Contains(line, want) {
					t.Errorf("ExternalKCMRenews line %q does not say %q", line, want)
				}
			}
		},
	}, {
		// The node step replaced the in-tree process between two samples;
		// its last renewal, made before it stopped, is first seen with the
		// external one running.
		name: "ExternalKCMRenews: none for the renewal of the process of before, first seen once the node runs external",
		samples: []sample{
			snap(0, leases(kcmID, ccmID, kcmID, at(0)), kcmLeader, ccmWaiting),
			snap(1, leases(kcmID, ccmID, kcmID, at(1)), kcmExternalLeader, ccmWaiting),
			snap(2, leases(kcmID, ccmID, kcmID, at(1)), kcmExternalLeader, ccmWaiting),
		},
		check: func(t *testing.T, r monitorReport) {
			if len(r.ExternalKCMRenews) != 0 {
				t.Errorf("ExternalKCMRenews = %q, want none", r.ExternalKCMRenews)
			}
		},
	}, {
		name: "ExternalKCMRenews: an external KCM acquiring the lease counts",
		samples: []sample{
			snap(0, leases(kcmID, "", "", time.Time{}), kcmExternalLeader),
			snap(1, leases(kcmID, "", kcmID, at(1)), kcmExternalLeader),
		},
		check: func(t *testing.T, r monitorReport) {
			if len(r.ExternalKCMRenews) != 1 {
				t.Errorf("ExternalKCMRenews = %q, want one line", r.ExternalKCMRenews)
			}
		},
	}, {
		name: "ExternalKCMRenews: none when the CCM on the same host renews it",
		samples: []sample{
			snap(0, leases(kcmID, ccmID, ccmID, at(0)), kcmExternalLeader, ccmMigrated),
			snap(1, leases(kcmID, ccmID, ccmID, at(1)), kcmExternalLeader, ccmMigrated),
			// The CCM's lease unreadable in this sample: still the CCM.
			{Time: at(2), Targets: []targetState{kcmExternalLeader, ccmMigrated}, Leases: map[string]leaseState{
				leadermigration.LeaseName: {Holder: ccmID, RenewTime: at(2)}, install.LeaseName: {Err: "timeout"}}},
		},
		check: func(t *testing.T, r monitorReport) {
			if len(r.ExternalKCMRenews) != 0 {
				t.Errorf("ExternalKCMRenews = %q, want none", r.ExternalKCMRenews)
			}
		},
	}, {
		name: "ExternalKCMRenews: none when the renewing KCM is in-tree",
		samples: []sample{
			snap(0, leases(kcmID, ccmID, kcmID, at(0)), kcmLeader, ccmWaiting),
			snap(1, leases(kcmID, ccmID, kcmID, at(1)), kcmLeader, ccmWaiting),
			snap(2, leases(kcmID, ccmID, kcmID, at(2)), kcmLeader, ccmWaiting),
		},
		check: func(t *testing.T, r monitorReport) {
			if len(r.ExternalKCMRenews) != 0 {
				t.Errorf("ExternalKCMRenews = %q, want none", r.ExternalKCMRenews)
			}
		},
	}, {
		name: "ExternalKCMRenews: of two KCMs on one host, the leading one holds the lease",
		samples: func() []sample {
			// Two control-plane nodes' KCMs on one machine: the in-tree
			// one leads; the other, already external, waits.
			second, secondLeading := kcmWaiting, kcmExternalLeader
			second.Name, secondLeading.Name = "kcm/ip-10-0-1-11.ec2.internal", "kcm/ip-10-0-1-11.ec2.internal"
			return []sample{
				snap(0, leases(kcmID, ccmID, kcmID, at(0)), kcmLeader, second, ccmWaiting),
				snap(1, leases(kcmID, ccmID, kcmID, at(1)), kcmLeader, second, ccmWaiting),
				// Now the external one leads and renews under its identity.
				snap(2, leases(kcm2ID, ccmID, kcm2ID, at(2)), down(kcmLeader), secondLeading, ccmWaiting),
			}
		}(),
		check: func(t *testing.T, r monitorReport) {
			if len(r.ExternalKCMRenews) != 1 || !strings.HasPrefix(r.ExternalKCMRenews[0], at(2).Format(stampFormat)) ||
				!strings.Contains(r.ExternalKCMRenews[0], "(kcm/ip-10-0-1-11.ec2.internal,") {
				t.Errorf("ExternalKCMRenews = %q, want one line at %s naming kcm/ip-10-0-1-11.ec2.internal", r.ExternalKCMRenews, at(2).Format(stampFormat))
			}
		},
	}, {
		name: "KCMLeaderless: runs with no leading KCM",
		samples: []sample{
			snap(0, nil, kcmLeader, ccmMigrated),
			snap(1, nil, down(kcmLeader), ccmMigrated),
			snap(2, nil, kcmWaiting, ccmMigrated),
			// Base checks and migrated loops alone are no sign of leading.
			snap(3, nil, kcm(false, "ping", "log", "leaderElection", "service"), ccmMigrated),
			snap(4, nil, kcmExternalLeader, ccmMigrated),
			snap(5, nil, kcmExternalLeader, ccmMigrated),
			snap(6, nil, down(kcmLeader), ccmMigrated),
			snap(8, nil, kcmWaiting, ccmMigrated),
		},
		check: func(t *testing.T, r monitorReport) {
			wantWindows(t, "KCMLeaderless", r.KCMLeaderless, []window{{From: at(1), To: at(4)}, {From: at(6), To: at(8)}})
		},
	}, {
		name:    "Marks: kept in the report",
		samples: []sample{snap(0, nil, kcmLeader)},
		check: func(t *testing.T, r monitorReport) {
			want := []string{"00:16:27.100 cut-over started"}
			if !slices.Equal(r.Marks, want) {
				t.Errorf("Marks = %q, want %q", r.Marks, want)
			}
			if !strings.Contains(r.String(), want[0]) {
				t.Errorf("String does not show the mark:\n%s", r.String())
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var marks []string
			if strings.HasPrefix(tc.name, "Marks") {
				marks = []string{"00:16:27.100 cut-over started"}
			}
			r := analyze(tc.samples, marks)
			tc.check(t, r)
			if t.Failed() {
				t.Logf("report:\n%s", r)
			}
		})
	}
}

// The sampler against stand-ins: one snapshot per tick, a target that does
// not answer in time counts as unreachable without holding the tick up, and
// the report comes from the samples. Needs no test bed (the Leases then
// read as errors).
func TestMonitorSampling(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "[+]ping ok\n[+]log ok\n[+]leaderElection ok\n[+]attachdetach ok\n[+]service ok\nhealthz check passed\n")
	}))
	defer srv.Close()
	manifest := filepath.Join(t.TempDir(), "kube-controller-manager.yaml")
	writeFile(t, manifest, []byte("    - --cloud-provider=external\n"))

	const interval = 100 * time.Millisecond
	m := startMonitor(t, interval, func() []managerTarget {
		return []managerTarget{
			{Name: "kcm/a", Kind: kindKCM, Hostname: "a", Healthz: healthzOverHTTPS(srv.URL), External: manifestRunsExternal(manifest)},
			{Name: "ccm", Kind: kindCCM, Healthz: func(context.Context) ([]string, error) {
				return []string{"leaderElection", "service-lb-controller"}, nil
			}},
			{Name: "kcm/stuck", Kind: kindKCM, Hostname: "b", Healthz: func(ctx context.Context) ([]string, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			}},
			{Name: "kcm/ignores-ctx", Kind: kindKCM, Hostname: "c", Healthz: func(context.Context) ([]string, error) {
				time.Sleep(10 * interval)
				return []string{"attachdetach"}, nil
			}},
		}
	})
	time.Sleep(5 * interval)
	m.Mark("half-way")
	time.Sleep(5 * interval)
	start := time.Now()
	r := m.Stop()
	// At most the tick under way, whose reads time out within the interval.
	if d := time.Since(start); d > 5*interval {
		t.Errorf("Stop took %s", d)
	}
	if r2 := m.Stop(); r2.String() != r.String() {
		t.Errorf("second Stop returned another report:\n%s\nvs\n%s", r2, r)
	}
	t.Logf("report:\n%s", r)

	m.mu.Lock()
	samples := slices.Clone(m.samples)
	m.mu.Unlock()
	// Roughly one sample per interval (a loaded machine may take fewer),
	// and not one per answer of the target that sleeps for 10 intervals.
	if len(samples) < 4 || len(samples) > 12 {
		t.Errorf("%d samples in %s at %s", len(samples), 10*interval, interval)
	}
	for i, s := range samples {
		if i > 0 {
			if d := s.Time.Sub(samples[i-1].Time); d < interval-5*time.Millisecond {
				t.Errorf("sample %d %s after the previous one, want at least %s", i, d, interval)
			}
		}
		byName := map[string]targetState{}
		for _, ts := range s.Targets {
			byName[ts.Name] = ts
		}
		if ts := byName["kcm/a"]; ts.Err != "" || !ts.External || !slices.Equal(ts.Checks, []string{"ping", "log", "leaderElection", "attachdetach", "service"}) {
			t.Errorf("sample %d: kcm/a = %+v", i, ts)
		}
		for _, name := range []string{"kcm/stuck", "kcm/ignores-ctx"} {
			if ts := byName[name]; ts.Err == "" || ts.running() != nil {
				t.Errorf("sample %d: %s = %+v, want unreachable", i, name, ts)
			}
		}
		if len(s.Leases) != 3 {
			t.Errorf("sample %d: Leases %v, want the three", i, s.Leases)
		}
	}
	if r.Samples != len(samples) || len(r.SplitBrain) != len(samples) {
		t.Errorf("report: %d samples, %d split-brain lines; want %d of each", r.Samples, len(r.SplitBrain), len(samples))
	}
	if len(r.Marks) != 1 || !strings.HasSuffix(r.Marks[0], " half-way") {
		t.Errorf("Marks = %q", r.Marks)
	}
	if len(r.KCMLeaderless) != 0 || len(r.Gaps) != 0 {
		t.Errorf("KCMLeaderless %v, Gaps %v: want none", r.KCMLeaderless, r.Gaps)
	}
}

// TestMonitorHandoffs: a holder change is measured from the last renewal
// of the holder before, across a release (empty holder) in between.
func TestMonitorHandoffs(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	lease := func(holder string, acquired, renewed float64) map[string]leaseState {
		return map[string]leaseState{leadermigration.LeaseName: {Holder: holder, AcquireTime: at(acquired), RenewTime: at(renewed)}}
	}
	samples := []sample{
		{Time: at(0), Leases: lease("a_1", 0, 0)},
		{Time: at(1), Leases: lease("a_1", 0, 1)},
		{Time: at(2), Leases: lease("", 0, 2)}, // released
		{Time: at(3), Leases: lease("b_2", 2.5, 2.5)},
		{Time: at(4), Leases: lease("b_2", 2.5, 3.5)},
	}
	got := handoffs(samples, leadermigration.LeaseName)
	if len(got) != 1 || got[0].From != "a_1" || got[0].To != "b_2" || got[0].Gap() != 1500*time.Millisecond {
		t.Fatalf("handoffs = %+v, want one a_1 -> b_2 of 1.5s", got)
	}
	if got := handoffs(samples[:2], leadermigration.LeaseName); len(got) != 0 {
		t.Errorf("renewals by one holder are no hand-off: %+v", got)
	}
}
