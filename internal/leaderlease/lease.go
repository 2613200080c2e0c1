package leaderlease

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// DefaultDuration is client-go's leader-election LeaseDuration and both
// controller managers' --leader-elect-lease-duration default: how long a
// holder keeps a Lease that does not say.
const DefaultDuration = 15 * time.Second

// Record is what a Lease says about its holder. Times are zero when the
// Lease leaves them unset.
type Record struct {
	// Exists is false when there is no such Lease.
	Exists bool
	// Holder is the holder's identity (<host name>_<uuid> for leader
	// election), "" when nobody holds it.
	Holder string
	// Acquired and Renewed are spec.acquireTime and spec.renewTime.
	Acquired, Renewed time.Time
	// Created is the Lease's creation time.
	Created time.Time
	// Duration is spec.leaseDurationSeconds, 0 when unset (see
	// DurationOrDefault).
	Duration time.Duration
}

// Of reads Lease l.
func Of(l *coordinationv1.Lease) Record {
	r := Record{Exists: true, Created: l.CreationTimestamp.Time}
	if l.Spec.HolderIdentity != nil {
		r.Holder = *l.Spec.HolderIdentity
	}
	if l.Spec.AcquireTime != nil {
		r.Acquired = l.Spec.AcquireTime.Time
	}
	if l.Spec.RenewTime != nil {
		r.Renewed = l.Spec.RenewTime.Time
	}
	if l.Spec.LeaseDurationSeconds != nil {
		r.Duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	return r
}

// Get reads Lease namespace/name; a Lease that does not exist is a Record
// with Exists false, not an error.
func Get(ctx context.Context, client kubernetes.Interface, namespace, name string) (Record, error) {
	l, err := client.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return Record{}, nil
	}
	if err != nil {
		return Record{}, fmt.Errorf("read Lease %s/%s: %w", namespace, name, err)
	}
	return Of(l), nil
}

// DurationOrDefault is the Lease's duration, DefaultDuration when it does
// not give a positive one.
func (r Record) DurationOrDefault() time.Duration {
	if r.Duration > 0 {
		return r.Duration
	}
	return DefaultDuration
}

// ReleaseIf clears the holder of Lease namespace/name, as a holder that
// releases does, when held says the current holder is one it may release.
// The update is conditional on the resourceVersion read: a Lease renewed
// or taken since is left alone. It returns the holder it released, "" when
// it released nothing (no Lease, no holder, another holder, or a conflict).
func ReleaseIf(ctx context.Context, client kubernetes.Interface, namespace, name string, held func(holder string) bool, fieldManager string) (string, error) {
	leases := client.CoordinationV1().Leases(namespace)
	l, err := leases.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read Lease %s/%s: %w", namespace, name, err)
	}
	holder := Of(l).Holder
	if holder == "" || !held(holder) {
		return "", nil
	}
	l = l.DeepCopy()
	l.Spec.HolderIdentity = new(string)
	_, err = leases.Update(ctx, l, metav1.UpdateOptions{FieldManager: fieldManager})
	switch {
	case apierrors.IsConflict(err):
		return "", nil // a candidate renewed or took it
	case err != nil:
		return "", fmt.Errorf("release Lease %s/%s held by %s: %w", namespace, name, holder, err)
	}
	return holder, nil
}
