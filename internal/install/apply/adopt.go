package apply

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Adoption. An object of the install's name that exists before the install
// is adopted: the install applies its fields over it and uninstall leaves
// the object. Two rules keep an adopted object adopted across any number
// of apply/uninstall cycles, even when the inventory is lost:
//
//   - the managed-by label means "created by awsccmctl": the install never
//     applies it to an adopted object (Inventory.Objects), so it cannot be
//     mistaken for one of ours later;
//   - uninstall hands an adopted object back: it applies an empty
//     configuration with the install's field manager, so the apiserver
//     removes every field only the install owned and leaves the fields the
//     object's owner set, including those the install set to the same
//     value (shared ownership).

// CreatedByAwsccmctl says whether live, an object the inventory does not
// record, was created by awsccmctl (an install made before installs kept
// inventories, or one whose inventory was lost): it carries the managed-by
// label and only awsccmctl's field manager owns that label. A label set by
// hand (kubectl create, kubectl apply of install manifests' output, another
// tool) has another owner, and such an object is adopted: wrongly keeping
// one of ours is a nuisance, wrongly deleting someone's ServiceAccount is
// an outage.
func CreatedByAwsccmctl(live *unstructured.Unstructured) bool {
	if live.GetLabels()[ManagedByLabel] != ManagedByValue {
		return false
	}
	owned := false
	for _, e := range live.GetManagedFields() {
		if !ownsLabel(e, ManagedByLabel) {
			continue
		}
		if e.Manager != FieldManager {
			return false
		}
		owned = true
	}
	return owned
}

// ownsLabel says whether the managed fields entry e owns label key.
func ownsLabel(e metav1.ManagedFieldsEntry, key string) bool {
	if e.FieldsV1 == nil {
		return false
	}
	var fields map[string]any
	if err := json.Unmarshal(e.FieldsV1.GetRawBytes(), &fields); err != nil {
		return false
	}
	meta, _ := fields["f:metadata"].(map[string]any)
	labels, _ := meta["f:labels"].(map[string]any)
	_, ok := labels["f:"+key]
	return ok
}

// withoutManagedBy returns a copy of u without the managed-by label: what
// the install applies to an adopted object.
func withoutManagedBy(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	labels := c.GetLabels()
	if _, ok := labels[ManagedByLabel]; !ok {
		return c
	}
	delete(labels, ManagedByLabel)
	if len(labels) == 0 {
		unstructured.RemoveNestedField(c.Object, "metadata", "labels")
	} else {
		c.SetLabels(labels)
	}
	return c
}

// Kept is the uninstall's action on an adopted object.
const (
	Kept            = "kept (existed before the install; awsccmctl's fields removed)"
	keptNotReleased = "kept (existed before the install; awsccmctl's fields left on it: "
)

// release hands the adopted member m back to its owner: an empty
// configuration applied with the install's field manager removes the fields
// only the install owns. A field the install took over with
// --force-conflicts is owned by the install alone, so it goes too; when
// that would leave the object invalid (a workload's container image), the
// apiserver refuses and the object is kept as it is, said so in the action.
func (c *Client) release(ctx context.Context, m Member, o Options) (Result, error) {
	u := m.object()
	ref := Ref(u)
	ri, live, err := c.lookup(ctx, u)
	switch {
	case err != nil:
		return Result{}, err
	case live == nil:
		return Result{Ref: ref, Action: "not found"}, nil
	case o.DryRun == DryRunClient:
		return Result{Ref: ref, Action: Kept}, nil
	}
	opts := metav1.ApplyOptions{FieldManager: FieldManager}
	if o.DryRun == DryRunServer {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if _, err := ri.Apply(ctx, u.GetName(), u, opts); err != nil {
		if apierrors.IsInvalid(err) {
			return Result{Ref: ref, Action: keptNotReleased + "removing them would make it invalid: " + err.Error() + ")"}, nil
		}
		return Result{}, fmt.Errorf("%s: remove awsccmctl's fields from the object that existed before the install: %w", ref, err)
	}
	return Result{Ref: ref, Action: Kept}, nil
}

// Live returns the live object of u's kind, namespace and name, nil when
// there is none.
func (c *Client) Live(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	_, live, err := c.lookup(ctx, u)
	return live, err
}
