package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// bed returns the clients of the shared control plane and a fresh
// namespace maker. The install's cluster-scoped objects
// (system:cloud-controller-manager) have fixed names, so every test
// removes what it installed.
func bed(t *testing.T) (Clients, kubernetes.Interface, func(prefix string) string) {
	t.Helper()
	cp := testbed.Get(t)
	c, err := NewClients(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cp.Config)
	mkns := func(prefix string) string {
		name := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1e9)
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := cs.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return name
	}
	return c, cs, mkns
}

func rendered(t *testing.T, ns string, w install.Workload) []*unstructured.Unstructured {
	t.Helper()
	v := install.Values{Namespace: ns, Workload: w}
	v.Default()
	objs, err := Objects(v)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// liveRefs says, by Ref, which of objs are live. A client dry run reads
// each object and reports "created" for the missing ones.
func liveRefs(t *testing.T, c Clients, objs []*unstructured.Unstructured) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, u := range objs {
		rs, err := c.Apply.Apply(context.Background(), []*unstructured.Unstructured{u}, apply.Options{DryRun: apply.DryRunClient})
		if err != nil {
			t.Fatal(err)
		}
		out[apply.Ref(u)] = rs[0].Action != "created"
	}
	return out
}

func mustApply(t *testing.T, c Clients, objs []*unstructured.Unstructured) {
	t.Helper()
	if _, err := Apply(context.Background(), c, objs, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
}

// cleanup uninstalls objs' install at the end of the test, whatever it
// left.
func cleanup(t *testing.T, c Clients, objs []*unstructured.Unstructured) {
	t.Cleanup(func() {
		if _, err := Uninstall(context.Background(), c, objs, "", nil); err != nil && !errors.As(err, new(*MismatchError)) {
			t.Errorf("cleanup: %v", err)
		}
	})
}

func wantMismatch(t *testing.T, err error, contains ...string) {
	t.Helper()
	if me := (*MismatchError)(nil); !errors.As(err, &me) {
		t.Fatalf("error %T %v, want a *MismatchError", err, err)
	}
	for _, s := range contains {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
}

func wantAllLive(t *testing.T, c Clients, objs []*unstructured.Unstructured, when string) {
	t.Helper()
	for ref, live := range liveRefs(t, c, objs) {
		if !live {
			t.Errorf("%s: %s is gone", when, ref)
		}
	}
}

// TestUninstallRefusesAnotherNamespace: uninstall given another --namespace
// than the install's deletes nothing (it used to delete the shared
// ClusterRole and bindings of the CCM still running in the install's
// namespace) and names the install's namespace.
func TestUninstallRefusesAnotherNamespace(t *testing.T) {
	c, _, mkns := bed(t)
	ctx := context.Background()
	nsA, nsB := mkns("ccm-a"), mkns("ccm-b")
	objsA := rendered(t, nsA, install.WorkloadDaemonSet)
	mustApply(t, c, objsA)
	cleanup(t, c, objsA)

	for _, dryRun := range []string{apply.DryRunServer, apply.DryRunNone} {
		var progress bytes.Buffer
		r, err := Uninstall(ctx, c, rendered(t, nsB, install.WorkloadDaemonSet), dryRun, &progress)
		wantMismatch(t, err, "no install is recorded in namespace "+nsB, "--namespace "+nsA, "nothing was changed")
		if errors.Is(err, ErrNotInstalled) {
			t.Errorf("an install recorded in another namespace is not ErrNotInstalled: %v", err)
		}
		if len(r.Objects) != 0 || progress.Len() != 0 {
			t.Errorf("refused uninstall reported %+v, progress %q", r, progress.String())
		}
	}
	wantAllLive(t, c, objsA, "after the refused uninstall")
	if inv, err := c.Apply.ReadInventory(ctx, nsA); err != nil || inv == nil {
		t.Fatalf("the install's inventory: %v, %v", inv, err)
	}

	// Another workload than the install's is refused the same way.
	_, err := Uninstall(ctx, c, rendered(t, nsA, install.WorkloadDeployment), "", nil)
	wantMismatch(t, err, "it runs the CCM as DaemonSet/"+nsA+"/"+install.AppName, "--workload daemonset")
	wantAllLive(t, c, objsA, "after the uninstall of another workload")

	// The install's own values remove it, and its record.
	r, err := Uninstall(ctx, c, objsA, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Summary(), fmt.Sprintf("%d deleted", len(objsA)); got != want {
		t.Errorf("uninstall: %q, want %q", got, want)
	}
	for ref, live := range liveRefs(t, c, objsA) {
		if live {
			t.Errorf("%s still there after uninstall", ref)
		}
	}
	if inv, err := c.Apply.ReadInventory(ctx, nsA); err != nil || inv != nil {
		t.Errorf("inventory after uninstall: %+v, %v", inv, err)
	}
	// Nothing recorded any more: refused, nothing to remove.
	_, err = Uninstall(ctx, c, objsA, "", nil)
	wantMismatch(t, err, "no install is recorded in this cluster")
	if !errors.Is(err, ErrNotInstalled) {
		t.Errorf("nothing recorded: %v, want ErrNotInstalled", err)
	}
}

// TestSecondInstallRefused: with an install recorded in one namespace, an
// apply for another namespace (which would take over the shared
// ClusterRoleBinding and run a second leader) is refused before it writes
// anything, and the first install is undisturbed.
func TestSecondInstallRefused(t *testing.T) {
	c, cs, mkns := bed(t)
	ctx := context.Background()
	nsA, nsB := mkns("ccm-a"), mkns("ccm-b")
	objsA := rendered(t, nsA, install.WorkloadDaemonSet)
	mustApply(t, c, objsA)
	cleanup(t, c, objsA)

	objsB := rendered(t, nsB, install.WorkloadDaemonSet)
	for _, o := range []ApplyOptions{{DryRun: apply.DryRunServer, Diff: true, Out: &bytes.Buffer{}}, {}} {
		_, err := Apply(ctx, c, objsB, o)
		wantMismatch(t, err, "already installed in namespace "+nsA, "--namespace "+nsA)
	}
	crb, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, install.ClusterRoleName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(crb.Subjects) != 1 || crb.Subjects[0].Namespace != nsA {
		t.Errorf("the ClusterRoleBinding's subjects are %+v, want the ServiceAccount of %s", crb.Subjects, nsA)
	}
	if sas, err := cs.CoreV1().ServiceAccounts(nsB).List(ctx, metav1.ListOptions{}); err != nil || len(sas.Items) != 0 {
		t.Errorf("the refused install wrote into %s: %v, %v", nsB, sas, err)
	}
	if inv, err := c.Apply.ReadInventory(ctx, nsB); err != nil || inv != nil {
		t.Errorf("the refused install recorded itself: %+v, %v", inv, err)
	}
	wantAllLive(t, c, objsA, "after the refused second install")

	// Re-applying the first install is not a second install.
	if _, err := Apply(ctx, c, objsA, ApplyOptions{}); err != nil {
		t.Fatalf("re-apply: %v", err)
	}
}

// TestUninstallKeepsAdoptedObjects: a ClusterRole of the install's name
// that existed before it (made by hand, or by another tool) is adopted:
// the install applies its fields over it and uninstall leaves it. An object
// awsccmctl made with the managed-by label (an install made before
// inventories) is the install's.
func TestUninstallKeepsAdoptedObjects(t *testing.T) {
	c, cs, mkns := bed(t)
	ctx := context.Background()
	ns := mkns("ccm")
	objs := rendered(t, ns, install.WorkloadDaemonSet)

	var role *rbacv1.ClusterRole
	for _, u := range objs {
		if u.GetKind() == "ClusterRole" {
			role = &rbacv1.ClusterRole{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role); err != nil {
				t.Fatal(err)
			}
		}
	}
	role.Labels = map[string]string{"owner": "someone-else"}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.RbacV1().ClusterRoles().Delete(ctx, role.Name, metav1.DeleteOptions{}) })
	// An install made before inventories: awsccmctl applied the object
	// with its field manager, which owns the managed-by label.
	old := &unstructured.Unstructured{}
	old.SetAPIVersion("v1")
	old.SetKind("ConfigMap")
	old.SetNamespace(ns)
	old.SetName(install.ConfigMapName)
	old.SetLabels(map[string]string{install.LabelManagedBy: install.ManagedBy})
	if _, err := c.Apply.Apply(ctx, []*unstructured.Unstructured{old}, apply.Options{}); err != nil {
		t.Fatal(err)
	}

	var progress bytes.Buffer
	r, err := Apply(ctx, c, objs, ApplyOptions{Progress: &progress})
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, progress.String())
	}
	cleanup(t, c, objs)
	inv, err := c.Apply.ReadInventory(ctx, ns)
	if err != nil || inv == nil {
		t.Fatalf("inventory: %+v, %v", inv, err)
	}
	for _, u := range objs {
		m, ok := inv.Lookup(u)
		if want := u.GetKind() == "ClusterRole"; !ok || m.Adopted != want {
			t.Errorf("inventory of %s: %+v, %v; want adopted=%v", apply.Ref(u), m, ok, want)
		}
	}
	if inv.ID != apply.InventoryID(ns) || inv.Namespace != ns {
		t.Errorf("inventory ID %q namespace %q", inv.ID, inv.Namespace)
	}
	if got := len(r.Objects); got != len(objs) {
		t.Errorf("apply reported %d objects, want %d", got, len(objs))
	}

	// Re-applying keeps the ClusterRole adopted.
	mustApply(t, c, objs)
	r, err = Uninstall(ctx, c, objs, "", &progress)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range r.Objects {
		want := "deleted"
		if strings.HasPrefix(res.Ref, "ClusterRole/") {
			want = apply.Kept
		}
		if res.Action != want {
			t.Errorf("uninstall: %s %s, want %s", res.Ref, res.Action, want)
		}
	}
	if _, err := cs.RbacV1().ClusterRoles().Get(ctx, role.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the adopted ClusterRole is gone: %v", err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, install.ConfigMapName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the labelled ConfigMap of an earlier install is still there: %v", err)
	}
}
