package deploy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/awsccmctl/awsccmctl/internal/install/apply"
)

// MismatchError says the values given do not match the install recorded in
// the cluster (another --namespace or --workload than the install's, or a
// second install beside a recorded one). Nothing was changed.
type MismatchError struct{ Err error }

func (e *MismatchError) Error() string { return e.Err.Error() }
func (e *MismatchError) Unwrap() error { return e.Err }

// ErrNotInstalled is wrapped by the *MismatchError of an Uninstall that
// finds no install recorded anywhere in the cluster (errors.Is).
var ErrNotInstalled = errors.New("no install is recorded in this cluster")

// IsInstall says whether objs are an install: they hold the CCM's
// DaemonSet or Deployment.
func IsInstall(objs []*unstructured.Unstructured) bool { return workload(objs) != nil }

// installNamespace is the namespace objs were rendered for: the workload's.
// (The RoleBinding lives in kube-system whatever it is.)
func installNamespace(objs []*unstructured.Unstructured) (string, error) {
	if w := workload(objs); w != nil {
		return w.GetNamespace(), nil
	}
	return "", errors.New("the rendered objects hold no DaemonSet or Deployment")
}

// workload returns the CCM's DaemonSet or Deployment among objs.
func workload(objs []*unstructured.Unstructured) *unstructured.Unstructured {
	for _, u := range objs {
		switch u.GroupVersionKind().GroupKind().String() {
		case "DaemonSet.apps", "Deployment.apps":
			return u
		}
	}
	return nil
}

func namespaces(invs []*apply.Inventory) []string {
	var out []string
	for _, inv := range invs {
		out = append(out, inv.Namespace)
	}
	return out
}

// planInventory reads the recorded installs and returns the inventory of
// applying objs. A recorded install in another namespace is a
// *MismatchError: two CCMs, each leading in its own namespace, would both
// run the controllers, and they share the ClusterRole and its binding.
func planInventory(ctx context.Context, c Clients, objs []*unstructured.Unstructured) (*apply.Inventory, error) {
	ns, err := installNamespace(objs)
	if err != nil {
		return nil, err
	}
	if err := refuseHelmRelease(ctx, c, objs, "apply"); err != nil {
		return nil, err
	}
	invs, err := c.Apply.Inventories(ctx)
	if err != nil {
		return nil, err
	}
	var prev *apply.Inventory
	var others []string
	for _, inv := range invs {
		if inv.Namespace == ns {
			prev = inv
		} else {
			others = append(others, inv.Namespace)
		}
	}
	if len(others) > 0 {
		return nil, &MismatchError{fmt.Errorf("the CCM is already installed in namespace %s (ConfigMap %s/%s records it); a second install in %s would run a second leader and take over the ClusterRole binding: re-run with --namespace %s, or remove that install first (awsccmctl install uninstall --namespace %s); nothing was changed",
			strings.Join(others, ", "), others[0], apply.InventoryName, ns, others[0], others[0])}
	}
	if err := oneWorkload(ctx, c, prev, objs); err != nil {
		return nil, err
	}
	return c.Apply.PlanInventory(ctx, ns, prev, objs)
}

// workloadFlag is the --workload value that renders a workload of kind.
func workloadFlag(kind string) string { return strings.ToLower(kind) }

// otherWorkload returns the CCM workload of the other kind than w (a
// Deployment for a DaemonSet and the reverse), of the same name.
func otherWorkload(w *unstructured.Unstructured) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetAPIVersion("apps/v1")
	o.SetKind("Deployment")
	if w.GetKind() == "Deployment" {
		o.SetKind("DaemonSet")
	}
	o.SetNamespace(w.GetNamespace())
	o.SetName(w.GetName())
	return o
}

// recordedWorkload returns the CCM workload inv records in another kind
// than w (the install was made with the other --workload), if any. The
// ECR credential provider's DaemonSet has another name.
func recordedWorkload(inv *apply.Inventory, w *unstructured.Unstructured) (apply.Member, bool) {
	if inv == nil {
		return apply.Member{}, false
	}
	return inv.Lookup(otherWorkload(w))
}

// oneWorkload refuses (a *MismatchError) an apply that would run the CCM
// beside another CCM workload of the same name: the install recorded with
// the other --workload, or, recorded or not, a live workload of the other
// kind (the install's whose inventory was lost, or another tool's, which
// is not ours to delete or to merge into). Both
// would run the controllers (each kind leads on its own, and a DaemonSet
// next to a Deployment means two CCMs on every sync), so a switch of
// --workload goes through uninstall.
func oneWorkload(ctx context.Context, c Clients, prev *apply.Inventory, objs []*unstructured.Unstructured) error {
	w := workload(objs)
	want := workloadFlag(w.GetKind())
	if m, ok := recordedWorkload(prev, w); ok {
		have := workloadFlag(m.Kind)
		return &MismatchError{fmt.Errorf("the install recorded in namespace %s (ConfigMap %s/%s) runs the CCM as %s (--workload %s); --workload %s would run a second CCM beside it: give the install's --workload %s, or switch by removing the install first (awsccmctl install uninstall --namespace %s --workload %s) and then applying with --workload %s; nothing was changed",
			prev.Namespace, prev.Namespace, apply.InventoryName, m.Ref(), have, want, have, prev.Namespace, have, want)}
	}
	other := otherWorkload(w)
	live, err := c.Apply.Live(ctx, other)
	if err != nil || live == nil || live.GetDeletionTimestamp() != nil {
		return err
	}
	have := workloadFlag(other.GetKind())
	if apply.CreatedByAwsccmctl(live) {
		return &MismatchError{fmt.Errorf("%s runs the CCM, made by awsccmctl install apply --workload %s, but no install records it (the inventory ConfigMap %s/%s was deleted?); --workload %s would run a second CCM beside it: record it again with awsccmctl install apply --namespace %s --workload %s, then remove it with awsccmctl install uninstall --namespace %s --workload %s before applying with --workload %s; nothing was changed",
			apply.Ref(other), have, w.GetNamespace(), apply.InventoryName, want, w.GetNamespace(), have, w.GetNamespace(), have, want)}
	}
	return &MismatchError{fmt.Errorf("%s exists and was not made by awsccmctl (another install of a CCM?); --workload %s would run a second CCM beside it: remove it first; nothing was changed",
		apply.Ref(other), want)}
}

// recordedInventory returns the inventory of the install objs were rendered
// from. No install recorded in their namespace, or a recorded install that
// does not hold every one of objs, is a *MismatchError.
func recordedInventory(ctx context.Context, c Clients, objs []*unstructured.Unstructured) (*apply.Inventory, error) {
	ns, err := installNamespace(objs)
	if err != nil {
		return nil, err
	}
	// Also with an inventory: helm install --take-ownership adopts an
	// install's objects and leaves its inventory behind.
	if err := refuseHelmRelease(ctx, c, objs, "uninstall"); err != nil {
		return nil, err
	}
	inv, err := c.Apply.ReadInventory(ctx, ns)
	if err != nil {
		return nil, err
	}
	if inv == nil {
		invs, err := c.Apply.Inventories(ctx)
		if err != nil {
			return nil, err
		}
		if len(invs) > 0 {
			others := namespaces(invs)
			return nil, &MismatchError{fmt.Errorf("no install is recorded in namespace %s: the CCM was installed in namespace %s; re-run with --namespace %s (the install's values); nothing was changed",
				ns, strings.Join(others, ", "), others[0])}
		}
		return nil, &MismatchError{fmt.Errorf("%w (no ConfigMap %s/%s): nothing to remove, nothing was changed; an install made by an older awsccmctl is recorded by running install apply once with its values", ErrNotInstalled, ns, apply.InventoryName)}
	}
	var missing []string
	for _, u := range objs {
		if _, ok := inv.Lookup(u); !ok {
			missing = append(missing, apply.Ref(u))
		}
	}
	if m, ok := recordedWorkload(inv, workload(objs)); ok {
		return nil, &MismatchError{fmt.Errorf("the values do not match the install recorded in namespace %s: it runs the CCM as %s; re-run with --workload %s (the install's values); nothing was changed",
			ns, m.Ref(), workloadFlag(m.Kind))}
	}
	if len(missing) > 0 {
		return nil, &MismatchError{fmt.Errorf("the values do not match the install recorded in namespace %s: it holds no %s (another --workload or --config than the install's?); give the install's values; nothing was changed",
			ns, strings.Join(missing, ", "))}
	}
	return inv, nil
}
