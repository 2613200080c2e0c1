package migrate

import (
	"context"
	"errors"
	"net"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/procwatch"
)

const (
	lkLocal = "cp-a_6f0d2c1e" // the identity of the kube-controller-manager in this process
	lkOther = "cp-b_91b7a4d0"
)

var lkT0 = time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)

func lkLease(name, holder string, acquired time.Time) *coordinationv1.Lease {
	a, r := metav1.NewMicroTime(acquired), metav1.NewMicroTime(lkT0)
	d := int32(15)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: leadermigration.LeaseNamespace},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &d, AcquireTime: &a, RenewTime: &r},
	}
}

// lkListen listens on a free loopback port in this process, so that
// procwatch finds the test process as the kube-controller-manager.
func lkListen(t *testing.T) int {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

func TestIdentifyLocalKCM(t *testing.T) {
	ctx := context.Background()
	proc, err := procwatch.New("")
	if err != nil {
		t.Fatal(err)
	}
	leader := []string{"ping", "log", "leaderElection", "attachdetach", "garbagecollector", "route", "service", "cloud-node-lifecycle"}
	candidate := []string{"ping", "log", "leaderElection"}
	// moved returns a healthz answering checks after replacing Lease name
	// (with holder and acquireTime) in the clientset: a Lease that changed
	// between the reads before and after /healthz.
	moved := func(cs *fake.Clientset, checks []string, name, holder string, acquired time.Time) func(context.Context) ([]string, error) {
		return func(ctx context.Context) ([]string, error) {
			if _, err := cs.CoordinationV1().Leases(leadermigration.LeaseNamespace).Update(ctx, lkLease(name, holder, acquired), metav1.UpdateOptions{}); err != nil {
				return nil, err
			}
			return checks, nil
		}
	}
	answer := func(checks []string) func(*fake.Clientset) func(context.Context) ([]string, error) {
		return func(*fake.Clientset) func(context.Context) ([]string, error) {
			return func(context.Context) ([]string, error) { return checks, nil }
		}
	}
	acquired := lkT0.Add(-time.Hour)
	for _, tc := range []struct {
		name    string
		leases  []*coordinationv1.Lease
		healthz func(*fake.Clientset) func(context.Context) ([]string, error)
		// noListener closes the port before the call.
		noListener   bool
		wantNil      bool
		wantErr      string
		wantIdentity string
		wantLeases   []string
	}{
		{
			name:         "the leader holds both Leases",
			leases:       []*coordinationv1.Lease{lkLease(leadermigration.KCMLeaseName, lkLocal, acquired), lkLease(leadermigration.LeaseName, lkLocal, acquired)},
			healthz:      answer(leader),
			wantIdentity: lkLocal,
			wantLeases:   []string{leadermigration.KCMLeaseName, leadermigration.LeaseName},
		},
		{
			name:   "a leader not running the cloud loops holds Lease kube-controller-manager only",
			leases: []*coordinationv1.Lease{lkLease(leadermigration.KCMLeaseName, lkLocal, acquired), lkLease(leadermigration.LeaseName, lkLocal, acquired)},
			// The migration lease still names it (say, after a restart in
			// external mode) but it runs none of the migrated loops.
			healthz:      answer([]string{"ping", "log", "leaderElection", "garbagecollector"}),
			wantIdentity: lkLocal,
			wantLeases:   []string{leadermigration.KCMLeaseName},
		},
		{
			name:    "a candidate claims no Lease",
			leases:  []*coordinationv1.Lease{lkLease(leadermigration.KCMLeaseName, lkOther, acquired), lkLease(leadermigration.LeaseName, lkOther, acquired)},
			healthz: answer(candidate),
		},
		{
			// Only the holder differs (a writer that keeps acquireTime).
			name:   "Lease kube-controller-manager got a new holder during the read",
			leases: []*coordinationv1.Lease{lkLease(leadermigration.KCMLeaseName, lkLocal, acquired), lkLease(leadermigration.LeaseName, lkLocal, acquired)},
			healthz: func(cs *fake.Clientset) func(context.Context) ([]string, error) {
				return moved(cs, leader, leadermigration.KCMLeaseName, lkOther, acquired)
			},
			wantIdentity: lkLocal,
			wantLeases:   []string{leadermigration.LeaseName},
		},
		{
			name:   "the migration lease was acquired anew during the read",
			leases: []*coordinationv1.Lease{lkLease(leadermigration.KCMLeaseName, lkLocal, acquired), lkLease(leadermigration.LeaseName, lkLocal, acquired)},
			healthz: func(cs *fake.Clientset) func(context.Context) ([]string, error) {
				return moved(cs, leader, leadermigration.LeaseName, lkLocal, lkT0)
			},
			wantIdentity: lkLocal,
			wantLeases:   []string{leadermigration.KCMLeaseName},
		},
		{
			name:   "the only Lease it could hold got a new holder during the read",
			leases: []*coordinationv1.Lease{lkLease(leadermigration.KCMLeaseName, lkLocal, acquired), lkLease(leadermigration.LeaseName, lkOther, acquired)},
			healthz: func(cs *fake.Clientset) func(context.Context) ([]string, error) {
				return moved(cs, []string{"ping", "log", "leaderElection", "garbagecollector"}, leadermigration.KCMLeaseName, lkOther, lkT0)
			},
		},
		{
			name:    "no Leases yet",
			healthz: answer(leader),
		},
		{
			name:    "running the loops of Leases held by two identities",
			leases:  []*coordinationv1.Lease{lkLease(leadermigration.KCMLeaseName, lkLocal, acquired), lkLease(leadermigration.LeaseName, lkOther, acquired)},
			healthz: answer(leader),
			wantErr: "runs under Leases of two identities (" + lkLocal + ", " + lkOther + ")",
		},
		{
			name:   "/healthz fails",
			leases: []*coordinationv1.Lease{lkLease(leadermigration.KCMLeaseName, lkLocal, acquired)},
			healthz: func(*fake.Clientset) func(context.Context) ([]string, error) {
				return func(context.Context) ([]string, error) { return nil, errors.New("503 Service Unavailable") }
			},
			wantErr: "kube-controller-manager /healthz?verbose: 503 Service Unavailable",
		},
		{
			name:   "nothing listens on the port",
			leases: []*coordinationv1.Lease{lkLease(leadermigration.KCMLeaseName, lkLocal, acquired), lkLease(leadermigration.LeaseName, lkLocal, acquired)},
			healthz: func(*fake.Clientset) func(context.Context) ([]string, error) {
				return func(context.Context) ([]string, error) {
					t.Error("healthz read with nothing listening")
					return leader, nil
				}
			},
			noListener: true,
			wantNil:    true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset()
			for _, l := range tc.leases {
				if _, err := cs.CoordinationV1().Leases(leadermigration.LeaseNamespace).Create(ctx, l, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			port := lkListen(t)
			if tc.noListener {
				ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp4", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				port = ln.Addr().(*net.TCPAddr).Port
				_ = ln.Close()
			}
			got, err := IdentifyLocalKCM(ctx, cs, proc, port, tc.healthz(cs))
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one with %q", err, tc.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			case tc.wantNil:
				if got != nil {
					t.Fatalf("IdentifyLocalKCM = %+v, want nil", got)
				}
				return
			case got == nil:
				t.Fatal("IdentifyLocalKCM = nil, want the local kube-controller-manager")
			}
			if got.Process.PID != os.Getpid() || got.Process.StartTime == 0 {
				t.Errorf("Process = %s, want this test process (pid %d)", got.Process, os.Getpid())
			}
			if got.Identity != tc.wantIdentity || !reflect.DeepEqual(got.Leases, tc.wantLeases) {
				t.Errorf("Identity %q, Leases %v; want %q, %v", got.Identity, got.Leases, tc.wantIdentity, tc.wantLeases)
			}
			if len(got.Checks) == 0 {
				t.Errorf("Checks empty, want the /healthz?verbose answer")
			}
		})
	}
}

func TestLocalKCMDeparture(t *testing.T) {
	exited := lkT0.Add(61 * time.Second)
	p := procwatch.Process{PID: 4242, StartTime: 881234, Comm: "kube-controller"}
	for _, tc := range []struct {
		name  string
		local *LocalKCM
		want  *Departure
	}{
		{"nothing listened", nil, nil},
		{"a candidate, holding no Lease", &LocalKCM{Process: p, Checks: []string{"leaderElection"}}, nil},
		{
			"the leader",
			&LocalKCM{Process: p, Identity: lkLocal, Leases: []string{leadermigration.KCMLeaseName, leadermigration.LeaseName}},
			&Departure{Identity: lkLocal, Leases: []string{leadermigration.KCMLeaseName, leadermigration.LeaseName}, PID: 4242, StartTime: 881234, ExitedAt: metav1.NewMicroTime(exited)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.local.Departure(exited); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Departure = %+v, want %+v", got, tc.want)
			}
		})
	}
}
