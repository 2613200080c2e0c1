package migrate

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
)

// The cut-over gate is played second by second on a simulated cluster:
// three control-plane nodes, the operator running the node step on one of
// them at a time, both managers electing as client-go does (a retry every
// 2 s, a 15 s lease, the migration lease contended only by a manager that
// holds its own main lease, which is how leader migration starts it). The
// gate looks once a second and keeps its memory between looks.

var (
	coT0    = time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)
	coNodes = []string{"cp-a", "cp-b", "cp-c"}
	// The kube-controller-managers running when the step starts; cp-a's
	// leads, holding Lease kube-controller-manager and the migration lease.
	coKCM = map[string]string{"cp-a": "cp-a_6f0d2c1e", "cp-b": "cp-b_91b7a4d0", "cp-c": "cp-c_2e5f8b33"}
	coCCM = "cp-b_c7e1a9f4"
	// coHidden is a kube-controller-manager started outside the manifest
	// with --cloud-provider=external and leader migration: no mirror Pod
	// shows it (trap C that only the Lease can reveal).
	coHidden = "cp-c_d00dfeed"
	// coBound is the planner's hand-over bound for the default 15 s lease
	// and 2 s retry period: 4*(15s+2s)+30s.
	coBound = 98 * time.Second
)

const coLease = 15 * time.Second

func coAt(s int) time.Time { return coT0.Add(time.Duration(s) * time.Second) }

type coKCMProc struct {
	id, node, mode string
	alive, hidden  bool
	// lag is how far its node's clock is behind: it stamps the Leases it
	// holds with its own time.
	lag time.Duration
}

// coRoll is the operator running `migrate-from-intree node --phase
// control-plane-external` on one node at second at: the kubelet stops the old
// kube-controller-manager a second later, starts the new one (and the mirror
// Pods show the new flags) 3 s after, and the node writes its report 8 s
// after, once the new one answers /healthz.
type coRoll struct {
	node string
	at   int
	// mode of the new kube-controller-manager; "" is "external".
	mode string
	// reportAt overrides when the report is written; -1: never.
	reportAt int
	report   func(*NodeReport)
}

type coSim struct {
	procs                []*coKCMProc
	rolls                []coRoll
	ccmContends          bool // the CCM runs with leader migration
	apiserverStaysInTree bool
	// ccmStopsAt: from then on the CCM cannot reach the apiserver and renews
	// no Lease (its /healthz still lists its controllers); 0: never.
	ccmStopsAt int
	l          leases
	// kcmSeen and migrationSeen are when the candidates last saw Lease
	// kube-controller-manager and the migration lease change: as in
	// client-go, expiry runs on the candidate's clock, from there.
	kcmSeen, migrationSeen time.Time
	mirror                 map[string]string
	apiserverExternal      map[string]bool
	reports                map[string]NodeReport
}

func newCoSim(rolls ...coRoll) *coSim {
	c := &coSim{rolls: rolls, ccmContends: true, mirror: map[string]string{}, apiserverExternal: map[string]bool{}, reports: map[string]NodeReport{}}
	for _, n := range coNodes {
		c.procs = append(c.procs, &coKCMProc{id: coKCM[n], node: n, mode: "in-tree with leader migration", alive: true})
		c.mirror[n] = "in-tree with leader migration"
	}
	held := lease{Exists: true, Holder: coKCM["cp-a"], Acquired: coT0.Add(-time.Hour), Renewed: coT0.Add(-2 * time.Second), Duration: coLease}
	c.l = leases{KCM: held, Migration: held,
		CCM: lease{Exists: true, Holder: coCCM, Acquired: coT0.Add(-10 * time.Minute), Renewed: coT0.Add(-2 * time.Second), Duration: coLease}}
	return c
}

// withHidden adds the hidden kube-controller-manager, first among the
// candidates of every election, its clock lag behind.
func (c *coSim) withHidden(lag time.Duration) *coSim {
	c.procs = append([]*coKCMProc{{id: coHidden, node: "cp-c", mode: "external with leader migration", alive: true, hidden: true, lag: lag}}, c.procs...)
	return c
}

func (c *coSim) proc(id string) *coKCMProc {
	if i := slices.IndexFunc(c.procs, func(p *coKCMProc) bool { return p.id == id }); i >= 0 {
		return c.procs[i]
	}
	return nil
}

func (c *coSim) tick(s int) cutOverObservation {
	now := coAt(s)
	for _, r := range c.rolls {
		switch s {
		case r.at + 1:
			for _, p := range c.procs {
				if p.node == r.node && !p.hidden {
					p.alive = false
				}
			}
		case r.at + 3:
			mode := cmp.Or(r.mode, "external")
			c.procs = append(c.procs, &coKCMProc{id: fmt.Sprintf("%s_%08x", r.node, s), node: r.node, mode: mode, alive: true})
			c.mirror[r.node] = mode
			c.apiserverExternal[r.node] = !c.apiserverStaysInTree
		}
		reportAt := r.at + 8
		if r.reportAt != 0 {
			reportAt = r.reportAt
		}
		if s == reportAt {
			rep := NodeReport{Node: r.node, Phase: PhaseControlPlaneExternal, Time: metav1.NewMicroTime(now),
				Changed:    []string{"/etc/kubernetes/manifests/kube-apiserver.yaml", "/etc/kubernetes/manifests/kube-controller-manager.yaml"},
				KCMHealthz: []string{"ping", "log", "leaderElection"}}
			if r.report != nil {
				r.report(&rep)
			}
			c.reports[r.node] = rep
		}
	}
	if s%2 == 0 {
		c.elect(now, s)
	}
	return c.observe(now)
}

func (c *coSim) elect(now time.Time, s int) {
	if c.kcmSeen.IsZero() {
		c.kcmSeen, c.migrationSeen = c.l.KCM.Renewed, c.l.Migration.Renewed
	}
	ccmUp := c.ccmStopsAt == 0 || s < c.ccmStopsAt
	if h := c.proc(c.l.KCM.Holder); h != nil && h.alive {
		c.l.KCM.Renewed, c.kcmSeen = now.Add(-h.lag), now
	} else if now.Sub(c.kcmSeen) > coLease {
		if i := slices.IndexFunc(c.procs, func(p *coKCMProc) bool { return p.alive }); i >= 0 {
			p := c.procs[i]
			c.l.KCM = lease{Exists: true, Holder: p.id, Acquired: now.Add(-p.lag), Renewed: now.Add(-p.lag), Duration: coLease}
			c.kcmSeen = now
		}
	}
	if ccmUp {
		c.l.CCM.Renewed = now
	}
	h := c.proc(c.l.Migration.Holder)
	switch {
	case h != nil && h.alive:
		c.l.Migration.Renewed, c.migrationSeen = now.Add(-h.lag), now
	case c.l.Migration.Holder == coCCM && ccmUp:
		c.l.Migration.Renewed, c.migrationSeen = now, now
	case now.Sub(c.migrationSeen) > coLease:
		if m := c.proc(c.l.KCM.Holder); m != nil && m.alive && strings.HasSuffix(m.mode, "with leader migration") {
			c.l.Migration = lease{Exists: true, Holder: m.id, Acquired: now.Add(-m.lag), Renewed: now.Add(-m.lag), Duration: coLease}
			c.migrationSeen = now
		} else if c.ccmContends && ccmUp {
			c.l.Migration = lease{Exists: true, Holder: coCCM, Acquired: now, Renewed: now, Duration: coLease}
			c.migrationSeen = now
		}
	}
}

func (c *coSim) observe(now time.Time) cutOverObservation {
	o := cutOverObservation{Now: now, Reports: maps.Clone(c.reports), Leases: c.l, APIServerExternal: true}
	for _, n := range coNodes {
		o.KCMs = append(o.KCMs, kcmObserved{Node: n, Mode: c.mirror[n]})
		if !c.apiserverExternal[n] {
			o.APIServerExternal = false
			o.APIServerEvidence = append(o.APIServerEvidence, n+": kube-apiserver keeps --cloud-provider=aws")
		}
	}
	o.CCMChecks = []string{"ping", "log", "leaderElection", "cloud-node-controller"}
	// The CCM starts the migrated controllers a second after it takes the
	// migration lease.
	if c.l.Migration.Holder == coCCM && now.After(c.l.Migration.Acquired) {
		o.CCMChecks = append(o.CCMChecks, leadermigration.CCMNames()...)
	}
	return o
}

type coLook struct {
	s   int
	o   cutOverObservation
	res gateResult
	m   cutOverMemory
}

// run looks once a second up to until, stopping at the first pass or error.
func (c *coSim) run(until int) ([]coLook, error) {
	p := cutOverPolicy{Step: StepCutOver, Phase: PhaseControlPlaneExternal, Nodes: coNodes, Bound: coBound, Migrated: leadermigration.CCMNames()}
	var m cutOverMemory
	var trace []coLook
	for s := 0; s <= until; s++ {
		o := c.tick(s)
		res, err := decideCutOver(o, &m, p)
		trace = append(trace, coLook{s: s, o: o, res: res, m: m})
		if err != nil || res.ok {
			return trace, err
		}
	}
	return trace, nil
}

func coLookAt(t *testing.T, trace []coLook, s int) coLook {
	t.Helper()
	if s >= len(trace) {
		t.Fatalf("no look at %ds: the run stopped at %ds", s, len(trace)-1)
	}
	return trace[s]
}

func coEvidenceHas(t *testing.T, l coLook, want string) {
	t.Helper()
	if !slices.ContainsFunc(l.res.evidence, func(e string) bool { return strings.Contains(e, want) }) {
		t.Errorf("evidence at %ds lacks %q:\n  %s", l.s, want, strings.Join(l.res.evidence, "\n  "))
	}
}

func TestDecideCutOver(t *testing.T) {
	kcmB := coKCM["cp-b"]
	for _, tc := range []struct {
		name  string
		sim   func() *coSim
		until int
		// passAt is the second of the first passing look; -1: none up to
		// until, every look waiting.
		passAt int
		// wantErr is "guard" (*GuardError) or "gate" (*GateError), at errAt,
		// its message holding errHas.
		wantErr string
		errAt   int
		errHas  []string
		check   func(t *testing.T, trace []coLook)
	}{
		{
			// The old false trap C: it fired on a renewal more than 15 s after
			// the step started.
			name: "holder renews the migration lease for minutes while the operator reaches its node",
			sim: func() *coSim {
				return newCoSim(coRoll{node: "cp-b", at: 20}, coRoll{node: "cp-c", at: 40}, coRoll{node: "cp-a", at: 300})
			},
			// cp-a's last renewal is at 300; the CCM takes the lease when it
			// expires (316) and runs the controllers from 317.
			until: 400, passAt: 317,
			check: func(t *testing.T, trace []coLook) {
				l := coLookAt(t, trace, 298)
				if l.o.Leases.Migration.Holder != coKCM["cp-a"] || l.o.Leases.migrationHolder() != leadermigration.ComponentKCM || !l.o.Leases.Migration.Renewed.Equal(coAt(298)) {
					t.Errorf("at 298s the migration lease is %+v, want renewed then by cp-a's in-tree kube-controller-manager", l.o.Leases.Migration)
				}
				if _, ok := l.o.Reports["cp-b"]; !ok || l.o.KCMs[1].Mode != "external" || l.o.KCMs[2].Mode != "external" {
					t.Errorf("at 298s cp-b and cp-c are not yet external and reported: %+v, reports %v", l.o.KCMs, slices.Sorted(maps.Keys(l.o.Reports)))
				}
				coEvidenceHas(t, l, "cp-a: kube-controller-manager in-tree with leader migration")
				if last := trace[len(trace)-1].m.KCMLastRenew; !last.Equal(coAt(300)) {
					t.Errorf("KCMLastRenew = %s, want cp-a's last renewal at 300s", last)
				}
			},
		},
		{
			name: "holder rolled last: the CCM takes the lease after the dead holder's expires and passes once it runs the migrated controllers",
			sim: func() *coSim {
				return newCoSim(coRoll{node: "cp-b", at: 20}, coRoll{node: "cp-c", at: 40}, coRoll{node: "cp-a", at: 60})
			},
			until: 200, passAt: 77,
			check: func(t *testing.T, trace []coLook) {
				last := trace[len(trace)-1]
				if !last.m.ExternalSince.Equal(coAt(63)) || !last.m.RestartedAt.Equal(coAt(68)) || last.m.Baseline.Holder != coKCM["cp-a"] {
					t.Errorf("memory = %+v, want ExternalSince 63s, RestartedAt 68s, Baseline held by cp-a's old kube-controller-manager", last.m)
				}
				// The dead holder is still named in both Leases after the last
				// report, its renewTime unchanged: not trap C.
				if l := coLookAt(t, trace, 74); l.o.Leases.migrationHolder() != leadermigration.ComponentKCM || l.o.Leases.Migration.Holder != coKCM["cp-a"] {
					t.Errorf("at 74s the migration lease is held by %s, want still cp-a's old kube-controller-manager", l.o.Leases.migrationHolder())
				}
				if l := coLookAt(t, trace, 76); l.res.ok || l.o.Leases.Migration.Holder != coCCM {
					t.Errorf("at 76s (CCM holds, controllers not yet running) ok = %v, holder %s; want waiting with the CCM holding", l.res.ok, l.o.Leases.Migration.Holder)
				}
				coEvidenceHas(t, last, "CCM /healthz?verbose: ")
				coEvidenceHas(t, last, "cp-a: kube-controller-manager runs none of [route service cloud-node-lifecycle]")
				if !last.m.KCMLastRenew.Equal(coAt(60)) {
					t.Errorf("KCMLastRenew = %s, want 60s", last.m.KCMLastRenew)
				}
			},
		},
		{
			name: "holder rolled first: a still in-tree kube-controller-manager takes the migration lease before the last node",
			sim: func() *coSim {
				return newCoSim(coRoll{node: "cp-a", at: 20}, coRoll{node: "cp-b", at: 40}, coRoll{node: "cp-c", at: 60})
			},
			// cp-b's in-tree one takes both Leases at 36, cp-c's at 56; cp-c's
			// last renewal is at 60, the CCM takes the lease at 76.
			until: 200, passAt: 77,
			check: func(t *testing.T, trace []coLook) {
				if l := coLookAt(t, trace, 38); l.o.Leases.Migration.Holder != kcmB || l.o.Leases.migrationHolder() != leadermigration.ComponentKCM || l.o.KCMs[1].Mode != "in-tree with leader migration" {
					t.Errorf("at 38s the migration lease is held by %q (%s), cp-b runs %q; want cp-b's in-tree kube-controller-manager", l.o.Leases.Migration.Holder, l.o.Leases.migrationHolder(), l.o.KCMs[1].Mode)
				}
				if l := coLookAt(t, trace, 58); l.o.Leases.Migration.Holder != coKCM["cp-c"] || !l.m.RestartedAt.IsZero() {
					t.Errorf("at 58s the migration lease is held by %q, RestartedAt %s; want cp-c's in-tree kube-controller-manager, not restarted", l.o.Leases.Migration.Holder, l.m.RestartedAt)
				}
				if last := trace[len(trace)-1].m.KCMLastRenew; !last.Equal(coAt(60)) {
					t.Errorf("KCMLastRenew = %s, want cp-c's last renewal at 60s", last)
				}
			},
		},
		{
			name: "trap C by flags: a kube-controller-manager comes back external with leader migration",
			sim: func() *coSim {
				return newCoSim(coRoll{node: "cp-b", at: 20, mode: "external with leader migration"}, coRoll{node: "cp-c", at: 40}, coRoll{node: "cp-a", at: 60})
			},
			until: 200, wantErr: "guard", errAt: 23, errHas: []string{"trap C", "on cp-b", "--phase control-plane-external"},
		},
		{
			name: "trap C by Lease: a kube-controller-manager identity acquires both Leases after every node reported",
			sim: func() *coSim {
				return newCoSim(coRoll{node: "cp-b", at: 20}, coRoll{node: "cp-c", at: 40}, coRoll{node: "cp-a", at: 60}).withHidden(0)
			},
			// Every node reported at 68; the hidden one takes both Leases
			// when cp-a's old one's expire, at 76. From 68 to 75 the Leases
			// still name cp-a's old one, unchanged: no error then.
			until: 200, wantErr: "guard", errAt: 76, errHas: []string{"trap C", coHidden, "renewed the migration lease"},
			check: func(t *testing.T, trace []coLook) {
				if l := coLookAt(t, trace, 75); !l.m.RestartedAt.Equal(coAt(68)) || l.m.Baseline.Holder != coKCM["cp-a"] {
					t.Errorf("at 75s RestartedAt %s, Baseline holder %q; want 68s and cp-a's old kube-controller-manager", l.m.RestartedAt, l.m.Baseline.Holder)
				}
			},
		},
		{
			name: "trap C by Lease: the identity of the baseline renews after every node reported",
			sim: func() *coSim {
				return newCoSim(coRoll{node: "cp-a", at: 20}, coRoll{node: "cp-b", at: 40}, coRoll{node: "cp-c", at: 60}).withHidden(0)
			},
			// The hidden one leads from 36; the last report is at 68, the
			// baseline its renewal at 68; it renews at 70.
			until: 200, wantErr: "guard", errAt: 70, errHas: []string{"trap C", coHidden},
			check: func(t *testing.T, trace []coLook) {
				l := coLookAt(t, trace, 68)
				if l.m.Baseline.Holder != coHidden || !l.m.Baseline.Renewed.Equal(coAt(68)) || l.o.Leases.migrationHolder() != leadermigration.ComponentKCM {
					t.Errorf("baseline at 68s = %+v, want the hidden kube-controller-manager's renewal at 68s", l.m.Baseline)
				}
			},
		},
		{
			// Its node's clock is 20 s behind: its renewTime at 76 (56) is
			// not after the baseline's (60); only the change of holder tells.
			name: "trap C by Lease: a kube-controller-manager identity whose clock lags acquires both Leases",
			sim: func() *coSim {
				return newCoSim(coRoll{node: "cp-b", at: 20}, coRoll{node: "cp-c", at: 40}, coRoll{node: "cp-a", at: 60}).withHidden(20 * time.Second)
			},
			until: 200, wantErr: "guard", errAt: 76, errHas: []string{"trap C", coHidden, "2025-03-04T10:00:56Z"},
		},
		{
			name: "a plain in-tree kube-controller-manager during the cut-over",
			sim: func() *coSim {
				return newCoSim(coRoll{node: "cp-a", at: 20}, coRoll{node: "cp-b", at: 40, mode: "in-tree"}, coRoll{node: "cp-c", at: 60})
			},
			until: 200, wantErr: "guard", errAt: 43, errHas: []string{"on cp-b", "without leader migration"},
		},
		{
			name: "split brain: a node's kube-controller-manager still runs a migrated loop",
			sim: func() *coSim {
				return newCoSim(coRoll{node: "cp-b", at: 20}, coRoll{node: "cp-c", at: 40, report: func(r *NodeReport) {
					r.KCMHealthz = []string{"ping", "log", "leaderElection", "garbagecollector", "service"}
				}}, coRoll{node: "cp-a", at: 60})
			},
			until: 200, wantErr: "guard", errAt: 48, errHas: []string{"split brain", "on cp-c", "[service]"},
		},
		{
			name: "hand-over bound: every kube-controller-manager external and the CCM never takes the lease",
			sim: func() *coSim {
				c := newCoSim(coRoll{node: "cp-b", at: 20}, coRoll{node: "cp-c", at: 40}, coRoll{node: "cp-a", at: 60})
				c.ccmContends = false
				return c
			},
			// Every mirror Pod is external from 63; the bound is 98 s.
			until: 400, wantErr: "gate", errAt: 162, errHas: []string{"step cut-over", "within the hand-over bound 1m38s"},
			check: func(t *testing.T, trace []coLook) {
				if l := coLookAt(t, trace, 161); l.res.ok || !l.m.ExternalSince.Equal(coAt(63)) {
					t.Errorf("at 161s ok = %v, ExternalSince %s; want waiting since 63s", l.res.ok, l.m.ExternalSince)
				}
			},
		},
		{
			name: "missing report: waiting while the CCM runs the loops, passed on the report",
			sim: func() *coSim {
				return newCoSim(coRoll{node: "cp-b", at: 20}, coRoll{node: "cp-c", at: 40, reportAt: 200}, coRoll{node: "cp-a", at: 60})
			},
			until: 400, passAt: 200,
			check: func(t *testing.T, trace []coLook) {
				l := coLookAt(t, trace, 199)
				coEvidenceHas(t, l, "cp-c: no report of phase control-plane-external yet")
				if l.o.Leases.Migration.Holder != coCCM || !l.m.RestartedAt.IsZero() {
					t.Errorf("at 199s migration holder %q, RestartedAt %s; want the CCM, not restarted", l.o.Leases.Migration.Holder, l.m.RestartedAt)
				}
			},
		},
		{
			name: "report with a /healthz error: waiting",
			sim: func() *coSim {
				return newCoSim(coRoll{node: "cp-b", at: 20}, coRoll{node: "cp-c", at: 40, report: func(r *NodeReport) {
					r.KCMHealthz, r.KCMHealthzError = nil, `Get "https://127.0.0.1:10257/healthz?verbose": dial tcp 127.0.0.1:10257: connect: connection refused`
				}}, coRoll{node: "cp-a", at: 60})
			},
			until: 300, passAt: -1,
			check: func(t *testing.T, trace []coLook) {
				l := trace[len(trace)-1]
				coEvidenceHas(t, l, "cp-c: reported, but its kube-controller-manager /healthz?verbose: Get ")
				if l.o.Leases.Migration.Holder != coCCM || !l.m.RestartedAt.IsZero() {
					t.Errorf("at %ds migration holder %q, RestartedAt %s; want the CCM, not restarted", l.s, l.o.Leases.Migration.Holder, l.m.RestartedAt)
				}
			},
		},
		{
			// It took the lease at 76 and renews nothing from 80 (its
			// /healthz still lists the controllers); cp-c reports at 120.
			name: "the CCM stops renewing the migration lease: no pass, the bound fires",
			sim: func() *coSim {
				c := newCoSim(coRoll{node: "cp-b", at: 20}, coRoll{node: "cp-c", at: 40, reportAt: 120}, coRoll{node: "cp-a", at: 60})
				c.ccmStopsAt = 80
				return c
			},
			until: 400, wantErr: "gate", errAt: 162, errHas: []string{"did not take the migration lease within the hand-over bound"},
			check: func(t *testing.T, trace []coLook) {
				if l := coLookAt(t, trace, 120); l.o.Leases.Migration.Holder != coCCM || !l.o.Leases.Migration.Renewed.Equal(coAt(78)) || !slices.Contains(l.o.CCMChecks, "service-lb-controller") {
					t.Errorf("at 120s the migration lease is %+v, CCM checks %v; want held by the CCM, last renewed at 78s, its controllers listed", l.o.Leases.Migration, l.o.CCMChecks)
				}
			},
		},
		{
			name: "kube-apiserver keeps the in-tree flags: waiting",
			sim: func() *coSim {
				c := newCoSim(coRoll{node: "cp-b", at: 20}, coRoll{node: "cp-c", at: 40}, coRoll{node: "cp-a", at: 60})
				c.apiserverStaysInTree = true
				return c
			},
			until: 300, passAt: -1,
			check: func(t *testing.T, trace []coLook) {
				coEvidenceHas(t, trace[len(trace)-1], "cp-a: kube-apiserver keeps --cloud-provider=aws")
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trace, err := tc.sim().run(tc.until)
			last := trace[len(trace)-1]
			switch tc.wantErr {
			case "":
				if err != nil {
					t.Fatalf("error at %ds: %v", last.s, err)
				}
				if tc.passAt >= 0 && (!last.res.ok || last.s != tc.passAt) {
					t.Errorf("last look at %ds ok = %v, want the first pass at %ds; evidence:\n  %s", last.s, last.res.ok, tc.passAt, strings.Join(last.res.evidence, "\n  "))
				}
				if tc.passAt < 0 && (last.res.ok || last.s != tc.until) {
					t.Errorf("passed at %ds, want waiting up to %ds", last.s, tc.until)
				}
			default:
				var guard *GuardError
				var gate *GateError
				switch {
				case err == nil:
					t.Fatalf("no error up to %ds (ok = %v), want a %s error at %ds", last.s, last.res.ok, tc.wantErr, tc.errAt)
				case tc.wantErr == "guard" && !errors.As(err, &guard), tc.wantErr == "gate" && !errors.As(err, &gate):
					t.Fatalf("error at %ds is %T (%v), want a %s error", last.s, err, err, tc.wantErr)
				}
				if last.s != tc.errAt {
					t.Errorf("error at %ds, want at %ds: %v", last.s, tc.errAt, err)
				}
				for _, want := range tc.errHas {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q lacks %q", err, want)
					}
				}
				if gate != nil && (gate.Step != StepCutOver || gate.Timeout != coBound) {
					t.Errorf("GateError step %q timeout %s, want %s and %s", gate.Step, gate.Timeout, StepCutOver, coBound)
				}
			}
			if tc.check != nil {
				tc.check(t, trace)
			}
		})
	}
}
