package deploy

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// byHand is the field manager of objects a user made with kubectl create.
const byHand = "kubectl-create"

var resources = map[string]schema.GroupVersionResource{
	"ServiceAccount":     {Version: "v1", Resource: "serviceaccounts"},
	"ConfigMap":          {Version: "v1", Resource: "configmaps"},
	"ClusterRole":        {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	"ClusterRoleBinding": {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	"RoleBinding":        {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	"DaemonSet":          {Group: "apps", Version: "v1", Resource: "daemonsets"},
	"Deployment":         {Group: "apps", Version: "v1", Resource: "deployments"},
}

func dyn(t *testing.T) dynamic.Interface {
	t.Helper()
	return dynamic.NewForConfigOrDie(testbed.Get(t).Config)
}

func ri(d dynamic.Interface, u *unstructured.Unstructured) dynamic.ResourceInterface {
	r := d.Resource(resources[u.GetKind()])
	if u.GetNamespace() != "" {
		return r.Namespace(u.GetNamespace())
	}
	return r
}

// makeByHand creates u as a user would (kubectl create) and deletes it at
// the end of the test.
func makeByHand(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	d := dyn(t)
	if _, err := ri(d, u).Create(context.Background(), u, metav1.CreateOptions{FieldManager: byHand}); err != nil {
		t.Fatalf("create %s by hand: %v", apply.Ref(u), err)
	}
	t.Cleanup(func() {
		if err := ri(d, u).Delete(context.Background(), u.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup %s: %v", apply.Ref(u), err)
		}
	})
}

func liveObject(t *testing.T, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	live, err := ri(dyn(t), u).Get(context.Background(), u.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s: %v", apply.Ref(u), err)
	}
	return live
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	for _, u := range objs {
		if u.GetKind() == kind {
			return u
		}
	}
	t.Fatalf("no %s rendered", kind)
	return nil
}

// wantAdopted checks that the inventory of ns records exactly kinds as
// adopted.
func wantAdopted(t *testing.T, c Clients, ns string, objs []*unstructured.Unstructured, when string, kinds ...string) {
	t.Helper()
	inv, err := c.Apply.ReadInventory(context.Background(), ns)
	if err != nil || inv == nil {
		t.Fatalf("%s: inventory %+v, %v", when, inv, err)
	}
	for _, u := range objs {
		m, ok := inv.Lookup(u)
		want := false
		for _, k := range kinds {
			want = want || u.GetKind() == k
		}
		if !ok || m.Adopted != want {
			t.Errorf("%s: inventory of %s: %+v, %v; want adopted=%v", when, apply.Ref(u), m, ok, want)
		}
	}
}

// wantHandedBack checks an adopted object between cycles: it exists, keeps
// the labels and annotations its owner set, and carries neither the
// managed-by label nor any field owned by awsccmctl's field manager.
func wantHandedBack(t *testing.T, u *unstructured.Unstructured, labels, annotations map[string]string, when string) *unstructured.Unstructured {
	t.Helper()
	live := liveObject(t, u)
	for k, v := range labels {
		if got := live.GetLabels()[k]; got != v {
			t.Errorf("%s: %s label %s=%q, want %q", when, apply.Ref(u), k, got, v)
		}
	}
	for k, v := range annotations {
		if got := live.GetAnnotations()[k]; got != v {
			t.Errorf("%s: %s annotation %s=%q, want %q", when, apply.Ref(u), k, got, v)
		}
	}
	if v, ok := live.GetLabels()[apply.ManagedByLabel]; ok && labels[apply.ManagedByLabel] == "" {
		t.Errorf("%s: %s carries %s=%s", when, apply.Ref(u), apply.ManagedByLabel, v)
	}
	for _, e := range live.GetManagedFields() {
		if e.Manager == apply.FieldManager {
			t.Errorf("%s: %s still has fields of %s: %s", when, apply.Ref(u), apply.FieldManager, e.FieldsV1.GetRawString())
		}
	}
	return live
}

func uninstallAll(t *testing.T, c Clients, objs []*unstructured.Unstructured, when string) Report {
	t.Helper()
	r, err := Uninstall(context.Background(), c, objs, "", nil)
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	return r
}

func actionOf(r Report, u *unstructured.Unstructured) string {
	for _, res := range r.Objects {
		if res.Ref == apply.Ref(u) {
			return res.Action
		}
	}
	return ""
}

// TestAdoptedServiceAccountStaysAdopted: a ServiceAccount made by hand
// before the install, then install apply and uninstall twice. Each apply
// records it as adopted and leaves the managed-by label off it; each
// uninstall keeps it, with its owner's label and annotation, and without
// what the install added (the managed-by and name labels, any field of
// awsccmctl's field manager). It used to keep the managed-by label after the
// first uninstall, so the second apply recorded it as created and the
// second uninstall deleted it.
func TestAdoptedServiceAccountStaysAdopted(t *testing.T) {
	c, _, mkns := bed(t)
	ns := mkns("ccm")
	objs := rendered(t, ns, install.WorkloadDaemonSet)
	sa := find(t, objs, "ServiceAccount")

	userLabels := map[string]string{"team": "platform"}
	userAnnotations := map[string]string{"eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/ccm"}
	mine := &unstructured.Unstructured{}
	mine.SetAPIVersion("v1")
	mine.SetKind("ServiceAccount")
	mine.SetNamespace(ns)
	mine.SetName(sa.GetName())
	mine.SetLabels(userLabels)
	mine.SetAnnotations(userAnnotations)
	makeByHand(t, mine)
	cleanup(t, c, objs)

	for cycle := 1; cycle <= 2; cycle++ {
		when := "apply " + string(rune('0'+cycle))
		mustApply(t, c, objs)
		wantAdopted(t, c, ns, objs, when, "ServiceAccount")
		live := liveObject(t, sa)
		if v, ok := live.GetLabels()[apply.ManagedByLabel]; ok {
			t.Errorf("%s: the adopted ServiceAccount got %s=%s", when, apply.ManagedByLabel, v)
		}
		if got := live.GetLabels()[install.LabelName]; got != install.AppName {
			t.Errorf("%s: the install's %s label on the adopted ServiceAccount is %q", when, install.LabelName, got)
		}

		when = "uninstall " + string(rune('0'+cycle))
		r := uninstallAll(t, c, objs, when)
		if got := actionOf(r, sa); got != apply.Kept {
			t.Errorf("%s: ServiceAccount %q, want %q", when, got, apply.Kept)
		}
		live = wantHandedBack(t, sa, userLabels, userAnnotations, when)
		if v, ok := live.GetLabels()[install.LabelName]; ok {
			t.Errorf("%s: the install's label %s=%s stayed on the ServiceAccount", when, install.LabelName, v)
		}
		for _, u := range objs {
			if u.GetKind() == "ServiceAccount" {
				continue
			}
			if live, err := c.Apply.Live(context.Background(), u); err != nil || live != nil {
				t.Errorf("%s: %s (created by the install) is still there: %v", when, apply.Ref(u), err)
			}
		}
	}
}

// TestEveryAdoptedKindStaysAdopted: every object of the install made by
// hand first (with an owner label and the install's own name label), then
// two apply/uninstall cycles. Each stays adopted and is handed back: the
// owner's labels stay, including the name label the install also set
// (shared ownership), the managed-by label never appears, and a field only
// the install set (the ConfigMap's cloud.conf) goes.
func TestEveryAdoptedKindStaysAdopted(t *testing.T) {
	c, _, mkns := bed(t)
	ns := mkns("ccm")
	objs := rendered(t, ns, install.WorkloadDaemonSet)
	userLabels := map[string]string{"owner": "me", install.LabelName: install.AppName}
	var kinds []string
	for _, u := range objs {
		mine := u.DeepCopy()
		mine.SetLabels(userLabels)
		if u.GetKind() == "ConfigMap" {
			unstructured.RemoveNestedField(mine.Object, "data")
		}
		makeByHand(t, mine)
		kinds = append(kinds, u.GetKind())
	}
	cleanup(t, c, objs)

	for cycle := 1; cycle <= 2; cycle++ {
		when := "apply " + string(rune('0'+cycle))
		mustApply(t, c, objs)
		wantAdopted(t, c, ns, objs, when, kinds...)
		cm := liveObject(t, find(t, objs, "ConfigMap"))
		if _, ok, _ := unstructured.NestedString(cm.Object, "data", install.CloudConfigKey); !ok {
			t.Errorf("%s: the adopted ConfigMap did not get the cloud config", when)
		}

		when = "uninstall " + string(rune('0'+cycle))
		r := uninstallAll(t, c, objs, when)
		for _, u := range objs {
			if got := actionOf(r, u); got != apply.Kept {
				t.Errorf("%s: %s %q, want %q", when, apply.Ref(u), got, apply.Kept)
			}
			wantHandedBack(t, u, userLabels, nil, when)
		}
		cm = liveObject(t, find(t, objs, "ConfigMap"))
		if data, ok, _ := unstructured.NestedMap(cm.Object, "data"); ok {
			t.Errorf("%s: the install's data stayed on the adopted ConfigMap: %v", when, data)
		}
		crb := liveObject(t, find(t, objs, "ClusterRoleBinding"))
		if subjects, _, _ := unstructured.NestedSlice(crb.Object, "subjects"); len(subjects) != 1 {
			t.Errorf("%s: the adopted ClusterRoleBinding's subjects: %v", when, subjects)
		}
	}
}

// TestAdoptionSurvivesLostInventory: the inventory ConfigMap deleted while
// installed (by hand, by a namespace cleanup). The next apply tells the
// objects apart from the live ones alone: the ServiceAccount made by hand
// is adopted again (it never got the managed-by label), the objects the
// install created (managed-by label owned by awsccmctl's field manager) are
// the install's again, and uninstall deletes those and keeps the
// ServiceAccount.
func TestAdoptionSurvivesLostInventory(t *testing.T) {
	c, cs, mkns := bed(t)
	ctx := context.Background()
	ns := mkns("ccm")
	objs := rendered(t, ns, install.WorkloadDaemonSet)
	sa := find(t, objs, "ServiceAccount")
	mine := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa.GetName(), Namespace: ns, Labels: map[string]string{"team": "platform"}}}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, mine, metav1.CreateOptions{FieldManager: byHand}); err != nil {
		t.Fatal(err)
	}
	mustApply(t, c, objs)
	cleanup(t, c, objs)
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, apply.InventoryName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	mustApply(t, c, objs)
	wantAdopted(t, c, ns, objs, "apply after the inventory was lost", "ServiceAccount")
	r := uninstallAll(t, c, objs, "uninstall")
	for _, u := range objs {
		want := "deleted"
		if u.GetKind() == "ServiceAccount" {
			want = apply.Kept
		}
		if got := actionOf(r, u); got != want {
			t.Errorf("uninstall: %s %q, want %q", apply.Ref(u), got, want)
		}
	}
	wantHandedBack(t, sa, mine.Labels, nil, "uninstall")
}

// TestHandMadeObjectWithOurLabelIsAdopted: a ServiceAccount made by hand
// with app.kubernetes.io/managed-by=awsccmctl (copied from install
// manifests' output, say) is not the install's: its label is owned by
// another field manager. It is adopted, and uninstall keeps it, label
// included, twice.
func TestHandMadeObjectWithOurLabelIsAdopted(t *testing.T) {
	c, _, mkns := bed(t)
	ns := mkns("ccm")
	objs := rendered(t, ns, install.WorkloadDaemonSet)
	sa := find(t, objs, "ServiceAccount")
	mine := sa.DeepCopy() // both labels, managed-by included
	makeByHand(t, mine)
	cleanup(t, c, objs)
	for cycle := 1; cycle <= 2; cycle++ {
		when := "cycle " + string(rune('0'+cycle))
		mustApply(t, c, objs)
		wantAdopted(t, c, ns, objs, when, "ServiceAccount")
		r := uninstallAll(t, c, objs, when)
		if got := actionOf(r, sa); got != apply.Kept {
			t.Errorf("%s: ServiceAccount %q, want %q", when, got, apply.Kept)
		}
		wantHandedBack(t, sa, mine.GetLabels(), nil, when)
	}
}

// TestAdoptedWorkloadThatCannotBeHandedBack: a DaemonSet of the install's
// name made by hand with another image is taken over with
// --force-conflicts, so the install alone owns its container's image.
// Removing the install's fields would leave it without an image, which the
// apiserver refuses: uninstall keeps it as it is, says why, and goes on to
// delete what the install created.
func TestAdoptedWorkloadThatCannotBeHandedBack(t *testing.T) {
	c, _, mkns := bed(t)
	ctx := context.Background()
	ns := mkns("ccm")
	objs := rendered(t, ns, install.WorkloadDaemonSet)
	ds := find(t, objs, "DaemonSet")
	mine := ds.DeepCopy()
	mine.SetLabels(map[string]string{"owner": "me"})
	containers, _, _ := unstructured.NestedSlice(mine.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["image"] = "registry.k8s.io/provider-aws/cloud-controller-manager:v1.37.0"
	if err := unstructured.SetNestedSlice(mine.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	makeByHand(t, mine)
	cleanup(t, c, objs)
	if _, err := Apply(ctx, c, objs, ApplyOptions{}); err == nil || !strings.Contains(err.Error(), "--force-conflicts") {
		t.Fatalf("apply over another image: %v, want a conflict", err)
	}
	if _, err := Apply(ctx, c, objs, ApplyOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	wantAdopted(t, c, ns, objs, "forced apply", "DaemonSet")
	r := uninstallAll(t, c, objs, "uninstall")
	if got := actionOf(r, ds); !strings.HasPrefix(got, "kept (existed before the install; awsccmctl's fields left on it: removing them would make it invalid") {
		t.Errorf("uninstall: DaemonSet %q", got)
	}
	if got := actionOf(r, find(t, objs, "ServiceAccount")); got != "deleted" {
		t.Errorf("uninstall: ServiceAccount %q, want deleted", got)
	}
	if live := liveObject(t, ds); live.GetLabels()["owner"] != "me" {
		t.Errorf("the adopted DaemonSet lost its owner's label: %v", live.GetLabels())
	}
}
