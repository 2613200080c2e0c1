package migrate

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
)

var (
	relStep   = time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC) // the step started
	relOld    = "cp-a_6f0d2c1e"                              // cp-a's kube-controller-manager before the step
	relOther  = "cp-b_91b7a4d0"
	relCCM    = "cp-b_c7e1a9f4"
	relBoth   = []string{leadermigration.KCMLeaseName, leadermigration.LeaseName}
	relExited = relStep.Add(61 * time.Second)
)

func relReport(node string, at time.Duration, d *Departure) NodeReport {
	return NodeReport{Node: node, Phase: PhaseControlPlaneExternal, Time: metav1.NewMicroTime(relStep.Add(at)),
		KCMHealthz: []string{"ping", "log", "leaderElection"}, Departed: d}
}

func relDeparture(identity string, leases ...string) *Departure {
	return &Departure{Identity: identity, Leases: leases, PID: 4242, StartTime: 881234, ExitedAt: metav1.NewMicroTime(relExited)}
}

func relHeld(holder string) lease {
	return lease{Exists: true, Holder: holder, Acquired: relStep.Add(-time.Hour), Renewed: relStep.Add(60 * time.Second), Duration: 15 * time.Second}
}

func TestDepartedHolders(t *testing.T) {
	both := map[string]lease{leadermigration.KCMLeaseName: relHeld(relOld), leadermigration.LeaseName: relHeld(relOld)}
	rel := func(name, node string) release {
		return release{Lease: name, Identity: relOld, Node: node, ExitedAt: relExited}
	}
	for _, tc := range []struct {
		name    string
		reports map[string]NodeReport
		held    map[string]lease
		want    []release
	}{
		{
			name:    "the departed identity still holds both Leases it listed",
			reports: map[string]NodeReport{"cp-a": relReport("cp-a", 68*time.Second, relDeparture(relOld, relBoth...))},
			held:    both,
			want:    []release{rel(leadermigration.KCMLeaseName, "cp-a"), rel(leadermigration.LeaseName, "cp-a")},
		},
		{
			name:    "a Lease that changed hands is not released",
			reports: map[string]NodeReport{"cp-a": relReport("cp-a", 68*time.Second, relDeparture(relOld, relBoth...))},
			held:    map[string]lease{leadermigration.KCMLeaseName: relHeld(relOther), leadermigration.LeaseName: relHeld(relOld)},
			want:    []release{rel(leadermigration.LeaseName, "cp-a")},
		},
		{
			name:    "a Lease the report does not list is not released",
			reports: map[string]NodeReport{"cp-a": relReport("cp-a", 68*time.Second, relDeparture(relOld, leadermigration.KCMLeaseName))},
			held:    both,
			want:    []release{rel(leadermigration.KCMLeaseName, "cp-a")},
		},
		{
			name:    "a report from before the step",
			reports: map[string]NodeReport{"cp-a": relReport("cp-a", -10*time.Minute, relDeparture(relOld, relBoth...))},
			held:    both,
		},
		{
			name:    "a report from 2 s before the step (more than the second of clock skew allowed)",
			reports: map[string]NodeReport{"cp-a": relReport("cp-a", -2*time.Second, relDeparture(relOld, relBoth...))},
			held:    both,
		},
		{
			name:    "a report from half a second before the step (clock skew)",
			reports: map[string]NodeReport{"cp-a": relReport("cp-a", -500*time.Millisecond, relDeparture(relOld, relBoth...))},
			held:    both,
			want:    []release{rel(leadermigration.KCMLeaseName, "cp-a"), rel(leadermigration.LeaseName, "cp-a")},
		},
		{
			name:    "a report without Departed",
			reports: map[string]NodeReport{"cp-a": relReport("cp-a", 68*time.Second, nil)},
			held:    both,
		},
		{
			name:    "a Departed without an identity",
			reports: map[string]NodeReport{"cp-a": relReport("cp-a", 68*time.Second, relDeparture("", relBoth...))},
			held:    map[string]lease{leadermigration.KCMLeaseName: {Exists: true}, leadermigration.LeaseName: {Exists: true}},
		},
		{
			name:    "a Lease already released or gone",
			reports: map[string]NodeReport{"cp-a": relReport("cp-a", 68*time.Second, relDeparture(relOld, relBoth...))},
			held:    map[string]lease{leadermigration.KCMLeaseName: {Exists: true, Renewed: relStep}},
		},
		{
			name: "of two departures, only the one still holding",
			reports: map[string]NodeReport{
				"cp-a": relReport("cp-a", 68*time.Second, relDeparture(relOld, relBoth...)),
				// cp-b's leader was rolled first; its Leases moved on to cp-a's.
				"cp-b": relReport("cp-b", 28*time.Second, relDeparture(relOther, relBoth...)),
			},
			held: both,
			want: []release{rel(leadermigration.KCMLeaseName, "cp-a"), rel(leadermigration.LeaseName, "cp-a")},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := departedHolders(tc.reports, tc.held, relStep)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("departedHolders = %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func relLease(name, holder string) *coordinationv1.Lease {
	acquired, renewed := metav1.NewMicroTime(relStep.Add(-time.Hour)), metav1.NewMicroTime(relStep.Add(60*time.Second))
	d := int32(15)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: leadermigration.LeaseNamespace},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &d, AcquireTime: &acquired, RenewTime: &renewed},
	}
}

func relReports(t *testing.T, reports ...NodeReport) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ReportsName, Namespace: Namespace}, Data: map[string]string{}}
	for _, r := range reports {
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		cm.Data[reportKey(r.Node)] = string(data)
	}
	return cm
}

var leasesResource = coordinationv1.SchemeGroupVersion.WithResource("leases")

func TestReleaseDeparted(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		objects func(t *testing.T) []runtime.Object
		// react, when set, is prepended to the clientset's reactors.
		react func(cs *fake.Clientset)
		// wantCleared are the Leases released; every other one must be
		// exactly as before.
		wantCleared   []string
		wantMigration bool // e.migrationReleased set
		// heldBy overrides the holder a Lease not released has afterwards
		// (by default, its holder before).
		heldBy map[string]string
	}{
		{
			name: "the departed holder's Lease is cleared, one held by another identity and the CCM's are not",
			objects: func(t *testing.T) []runtime.Object {
				return []runtime.Object{
					relLease(leadermigration.KCMLeaseName, relOld),
					relLease(leadermigration.LeaseName, relOther),
					relLease(install.LeaseName, relCCM),
					relReports(t, relReport("cp-a", 68*time.Second, relDeparture(relOld, relBoth...))),
				}
			},
			wantCleared: []string{leadermigration.KCMLeaseName},
		},
		{
			name: "both Leases of the departed holder, the migration lease recorded",
			objects: func(t *testing.T) []runtime.Object {
				return []runtime.Object{
					relLease(leadermigration.KCMLeaseName, relOld),
					relLease(leadermigration.LeaseName, relOld),
					relLease(install.LeaseName, relCCM),
					relReports(t, relReport("cp-a", 68*time.Second, relDeparture(relOld, relBoth...))),
				}
			},
			wantCleared:   relBoth,
			wantMigration: true,
		},
		{
			name: "the CCM's Lease is never released, even when a report names it and its holder",
			objects: func(t *testing.T) []runtime.Object {
				return []runtime.Object{
					relLease(install.LeaseName, relCCM),
					relReports(t, relReport("cp-b", 68*time.Second, relDeparture(relCCM, install.LeaseName))),
				}
			},
		},
		{
			name: "a report from before the step releases nothing",
			objects: func(t *testing.T) []runtime.Object {
				return []runtime.Object{
					relLease(leadermigration.KCMLeaseName, relOld),
					relLease(leadermigration.LeaseName, relOld),
					relReports(t, relReport("cp-a", -5*time.Minute, relDeparture(relOld, relBoth...))),
				}
			},
		},
		{
			name: "reports without a departure release nothing",
			objects: func(t *testing.T) []runtime.Object {
				return []runtime.Object{
					relLease(leadermigration.KCMLeaseName, relOld),
					relReports(t, relReport("cp-a", 68*time.Second, nil)),
				}
			},
		},
		{
			name: "a Lease that a candidate took between the reads is left alone",
			objects: func(t *testing.T) []runtime.Object {
				return []runtime.Object{
					relLease(leadermigration.KCMLeaseName, relOld),
					relLease(leadermigration.LeaseName, relOld),
					relReports(t, relReport("cp-a", 68*time.Second, relDeparture(relOld, relBoth...))),
				}
			},
			react: func(cs *fake.Clientset) {
				gets := 0
				cs.PrependReactor("get", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
					if a.(k8stesting.GetAction).GetName() != leadermigration.KCMLeaseName {
						return false, nil, nil
					}
					if gets++; gets == 2 { // the read before the release
						if err := cs.Tracker().Update(leasesResource, relLease(leadermigration.KCMLeaseName, relOther), leadermigration.LeaseNamespace); err != nil {
							return true, nil, err
						}
					}
					return false, nil, nil
				})
			},
			wantCleared:   []string{leadermigration.LeaseName},
			wantMigration: true,
			heldBy:        map[string]string{leadermigration.KCMLeaseName: relOther},
		},
		{
			name: "an update that conflicts (a candidate renewed) is skipped",
			objects: func(t *testing.T) []runtime.Object {
				return []runtime.Object{
					relLease(leadermigration.KCMLeaseName, relOld),
					relLease(leadermigration.LeaseName, relOld),
					relReports(t, relReport("cp-a", 68*time.Second, relDeparture(relOld, relBoth...))),
				}
			},
			react: func(cs *fake.Clientset) {
				cs.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
					l := a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease)
					if l.Name != leadermigration.LeaseName {
						return false, nil, nil
					}
					return true, nil, apierrors.NewConflict(leasesResource.GroupResource(), l.Name, nil)
				})
			},
			wantCleared: []string{leadermigration.KCMLeaseName},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := tc.objects(t)
			cs := fake.NewClientset(objs...)
			before := map[string]*coordinationv1.Lease{}
			for _, name := range []string{leadermigration.KCMLeaseName, leadermigration.LeaseName, install.LeaseName} {
				if l, err := cs.CoordinationV1().Leases(leadermigration.LeaseNamespace).Get(ctx, name, metav1.GetOptions{}); err == nil {
					before[name] = l
				}
			}
			if tc.react != nil {
				tc.react(cs)
			}
			var out bytes.Buffer
			e := &env{client: cs, out: &out, stepStarted: relStep, now: func() time.Time { return relStep.Add(69 * time.Second) }}
			done, err := e.releaseDeparted(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var released []string
			for _, r := range done {
				released = append(released, r.Lease)
				if r.Identity != relOld || r.Node != "cp-a" || !r.ExitedAt.Equal(relExited) {
					t.Errorf("release %+v, want of %s on cp-a, exited at %s", r, relOld, relExited)
				}
				if !strings.Contains(out.String(), "released Lease kube-system/"+r.Lease+" held by "+relOld+": its process on cp-a exited at 10:01:01.000") {
					t.Errorf("output lacks the release of %s:\n%s", r.Lease, out.String())
				}
			}
			if !reflect.DeepEqual(released, tc.wantCleared) {
				t.Errorf("released %v, want %v", released, tc.wantCleared)
			}
			if got := e.migrationReleased != nil; got != tc.wantMigration || got && e.migrationReleased.Lease != leadermigration.LeaseName {
				t.Errorf("migrationReleased = %+v, want set: %v", e.migrationReleased, tc.wantMigration)
			}
			for name, b := range before {
				after, err := cs.CoordinationV1().Leases(leadermigration.LeaseNamespace).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				cleared := after.Spec.HolderIdentity != nil && *after.Spec.HolderIdentity == ""
				switch want := slices.Contains(tc.wantCleared, name); {
				case want && !cleared:
					t.Errorf("Lease %s holder %q, want cleared", name, *after.Spec.HolderIdentity)
				case want:
					if !after.Spec.RenewTime.Equal(b.Spec.RenewTime) || !after.Spec.AcquireTime.Equal(b.Spec.AcquireTime) {
						t.Errorf("Lease %s: the release changed more than the holder: %+v, was %+v", name, after.Spec, b.Spec)
					}
				default:
					holder := *b.Spec.HolderIdentity
					if h, ok := tc.heldBy[name]; ok {
						holder = h
					}
					if *after.Spec.HolderIdentity != holder {
						t.Errorf("Lease %s holder %q, want %q", name, *after.Spec.HolderIdentity, holder)
					}
				}
			}
			if tc.react == nil {
				for _, a := range cs.Actions() {
					if a.GetVerb() == "update" {
						l := a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease)
						if !slices.Contains(tc.wantCleared, l.Name) {
							t.Errorf("updated Lease %s, want it untouched", l.Name)
						}
					}
				}
			}
		})
	}
}
