package leaderlease

import (
	"context"
	"errors"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

func TestOf(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	acquired, renewed := created.Add(time.Minute), created.Add(2*time.Minute)
	tests := []struct {
		name string
		spec coordinationv1.LeaseSpec
		want Record
	}{
		{"held", coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("cp-1_0f1e"), LeaseDurationSeconds: ptr.To[int32](30),
			AcquireTime: &metav1.MicroTime{Time: acquired}, RenewTime: &metav1.MicroTime{Time: renewed},
		}, Record{Exists: true, Holder: "cp-1_0f1e", Acquired: acquired, Renewed: renewed, Created: created, Duration: 30 * time.Second}},
		{"empty spec", coordinationv1.LeaseSpec{}, Record{Exists: true, Created: created}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.Time{Time: created}}, Spec: tc.spec}
			if got := Of(l); got != tc.want {
				t.Errorf("Of = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDurationOrDefault(t *testing.T) {
	for d, want := range map[time.Duration]time.Duration{0: DefaultDuration, -time.Second: DefaultDuration, 40 * time.Second: 40 * time.Second} {
		if got := (Record{Duration: d}).DurationOrDefault(); got != want {
			t.Errorf("Duration %s: %s, want %s", d, got, want)
		}
	}
	if DefaultDuration != 15*time.Second {
		t.Errorf("DefaultDuration = %s, want client-go's 15s", DefaultDuration)
	}
}

func TestGet(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(&coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "cloud-controller-manager"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("cp-1_0f1e")},
	})
	if r, err := Get(ctx, cs, "kube-system", "cloud-controller-manager"); err != nil || !r.Exists || r.Holder != "cp-1_0f1e" {
		t.Errorf("existing Lease: %+v, %v", r, err)
	}
	if r, err := Get(ctx, cs, "kube-system", "kube-controller-manager"); err != nil || r != (Record{}) {
		t.Errorf("missing Lease: %+v, %v; want the zero Record and no error", r, err)
	}
	denied := apierrors.NewForbidden(coordinationv1.Resource("leases"), "kube-controller-manager", errors.New("no"))
	cs.PrependReactor("get", "leases", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, denied })
	if _, err := Get(ctx, cs, "kube-system", "kube-controller-manager"); !apierrors.IsForbidden(err) || err.Error() == denied.Error() {
		t.Errorf("forbidden: %v; want the API error, wrapped naming the Lease", err)
	}
}
