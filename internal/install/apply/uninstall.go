package apply

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ManagedByLabel marks every object install creates; Uninstall deletes
// only objects that carry it with ManagedByValue.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "awsccmctl"
)

// Uninstall deletes objs in reverse order (the workload before the RBAC it
// runs with). An object that is gone already is reported, not an error; a
// live object without the managed-by label was not created by install and
// is left alone.
func (c *Client) Uninstall(ctx context.Context, objs []*unstructured.Unstructured, o Options) ([]Result, error) {
	var results []Result
	for _, u := range slices.Backward(objs) {
		r, err := c.deleteOne(ctx, u, o)
		if err != nil {
			return results, err
		}
		results = append(results, r)
		progress(o, r)
	}
	return results, nil
}

func (c *Client) deleteOne(ctx context.Context, u *unstructured.Unstructured, o Options) (Result, error) {
	ref := Ref(u)
	ri, live, err := c.lookup(ctx, u)
	switch {
	case meta.IsNoMatchError(err):
		// Its CRD is gone (prometheus-operator's, for a monitoring
		// install): no object of the kind can be left to delete.
		return Result{Ref: ref, Action: "not found (the cluster no longer serves " + u.GetKind() + ")"}, nil
	case err != nil:
		return Result{}, err
	case live == nil:
		return Result{Ref: ref, Action: "not found"}, nil
	case live.GetDeletionTimestamp() != nil:
		return Result{Ref: ref, Action: "being deleted"}, nil
	case live.GetLabels()[ManagedByLabel] != ManagedByValue:
		return Result{Ref: ref, Action: fmt.Sprintf("skipped (no %s=%s label: not created by awsccmctl install)", ManagedByLabel, ManagedByValue)}, nil
	case o.DryRun == DryRunClient:
		return Result{Ref: ref, Action: "deleted"}, nil
	}
	// Background, as kubectl: the object goes now, the garbage collector
	// removes its Pods after it.
	policy := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &policy,
		// Delete the object that was read, not one recreated since.
		Preconditions: &metav1.Preconditions{UID: ptrUID(live)}}
	if o.DryRun == DryRunServer {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if err := ri.Delete(ctx, u.GetName(), opts); err != nil && !apierrors.IsNotFound(err) {
		return Result{}, fmt.Errorf("%s: delete: %w", ref, err)
	}
	return Result{Ref: ref, Action: "deleted"}, nil
}
