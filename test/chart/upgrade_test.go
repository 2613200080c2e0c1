package chart

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/install"
)

// upstreamSelector is the DaemonSet selector upstream's chart writes. A
// DaemonSet's selector cannot change, so a release made by upstream's
// chart keeps it for life.
var upstreamSelector = map[string]string{"k8s-app": install.AppName}

// The release upstream's chart makes: its name and namespace, where nearly
// every upstream release runs.
const upstreamReleaseName, upstreamNS = "aws-cloud-controller-manager", "kube-system"

// upstreamRelease installs upstream's chart with its values.yaml verbatim,
// as upstreamReleaseName in upstreamNS, uninstalled at the end of the test; it returns the
// kubeconfig, a client and the values.
func upstreamRelease(t *testing.T) (kubeconfig string, cs kubernetes.Interface, values []byte) {
	t.Helper()
	kubeconfig, _, cs, _ = coexistCluster(t)
	values, err := os.ReadFile(filepath.Join(upstreamChart(t), "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := Install(t, upstreamChart(t), values, upstreamReleaseName, upstreamNS, kubeconfig)
	if err != nil {
		t.Fatalf("helm install of upstream's chart: %v", err)
	}
	t.Cleanup(func() { _, _ = Uninstall(t, upstreamReleaseName, upstreamNS, kubeconfig) })
	if rel.Revision != 1 || rel.Status != "deployed" {
		t.Fatalf("upstream's release: %+v", rel)
	}
	return kubeconfig, cs, values
}

// TestUpgradeFromUpstreamRelease: a release of upstream's chart becomes a
// release of this chart by `helm upgrade` with the same values file and
// nothing else (docs/helm.md, "Switch from upstream's chart"). The API
// server refuses a new DaemonSet selector, so the chart keeps upstream's
// where the live DaemonSet has it; every other object is updated in place
// under the same names, nothing is deleted, a second upgrade changes no
// pod, and helm uninstall removes it all.
func TestUpgradeFromUpstreamRelease(t *testing.T) {
	kubeconfig, cs, values := upstreamRelease(t)
	before := daemonSet(t, cs)
	if !maps.Equal(before.Spec.Selector.MatchLabels, upstreamSelector) {
		t.Fatalf("upstream's DaemonSet selects %v, want %v: the test's premise", before.Spec.Selector.MatchLabels, upstreamSelector)
	}
	upstreamObjects := liveObjects(t, cs)

	rel, err := Upgrade(t, chartDir(t), values, upstreamReleaseName, upstreamNS, kubeconfig)
	if err != nil {
		t.Fatalf("helm upgrade to this chart with the same values: %v", err)
	}
	if rel.Revision != 2 || rel.Status != "deployed" {
		t.Errorf("after the upgrade: %+v, want revision 2 deployed", rel)
	}
	ds := daemonSet(t, cs)
	if ds.UID != before.UID {
		t.Errorf("the DaemonSet was recreated (uid %s, was %s): its pods would all go at once", ds.UID, before.UID)
	}
	if !maps.Equal(ds.Spec.Selector.MatchLabels, upstreamSelector) {
		t.Errorf("selector %v, want upstream's %v kept", ds.Spec.Selector.MatchLabels, upstreamSelector)
	}
	podLabels := ds.Spec.Template.Labels
	for k, v := range upstreamSelector {
		if podLabels[k] != v {
			t.Errorf("pod labels %v lack the selector's %s=%s: the DaemonSet would own no pod", podLabels, k, v)
		}
	}
	if podLabels[install.LabelName] != install.AppName {
		t.Errorf("pod labels %v lack %s=%s, which this chart's pods carry", podLabels, install.LabelName, install.AppName)
	}
	c := ds.Spec.Template.Spec.Containers[0]
	if !strings.HasPrefix(c.Image, install.ImageRepository+":") || !strings.Contains(strings.Join(c.Args, " "), "--cloud-config=") {
		t.Errorf("the DaemonSet runs %s %v, want this chart's image and flags", c.Image, c.Args)
	}
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType ||
		ds.Spec.UpdateStrategy.RollingUpdate == nil || ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable.IntValue() != 1 {
		t.Errorf("update strategy %+v, want a rolling update one node at a time", ds.Spec.UpdateStrategy)
	}
	// Same names: Helm updates upstream's objects in place and deletes none.
	after := liveObjects(t, cs)
	for name, uid := range upstreamObjects {
		if after[name] != uid {
			t.Errorf("%s: uid %q after the upgrade, %q before: deleted or recreated", name, after[name], uid)
		}
	}

	// Settled: the next upgrade finds its own DaemonSet, keeps the
	// selector, and rolls no pod.
	rel, err = Upgrade(t, chartDir(t), values, upstreamReleaseName, upstreamNS, kubeconfig)
	if err != nil || rel.Revision != 3 {
		t.Fatalf("second upgrade: %+v, %v", rel, err)
	}
	again := daemonSet(t, cs)
	if again.Generation != ds.Generation || !maps.Equal(again.Spec.Selector.MatchLabels, upstreamSelector) {
		t.Errorf("second upgrade: generation %d → %d, selector %v; want no change", ds.Generation, again.Generation, again.Spec.Selector.MatchLabels)
	}

	if _, err := Uninstall(t, upstreamReleaseName, upstreamNS, kubeconfig); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	for name := range liveObjects(t, cs) {
		t.Errorf("helm uninstall left %s", name)
	}
}

// TestHelmTemplateSwitchNeedsTheOrphanStep holds the other half of
// docs/helm.md's upgrade: a renderer without a cluster (helm template,
// Argo CD) gets this chart's own selector, so its sync over upstream's
// DaemonSet is refused as immutable, and succeeds once that DaemonSet is
// deleted with its pods orphaned, as the documented steps do.
func TestHelmTemplateSwitchNeedsTheOrphanStep(t *testing.T) {
	_, cs, values := upstreamRelease(t)
	objs, err := Render(t, chartDir(t), values, upstreamReleaseName, upstreamNS)
	if err != nil {
		t.Fatal(err)
	}
	var rendered *unstructured.Unstructured
	for i := range objs {
		if objs[i].GetKind() == "DaemonSet" && objs[i].GetName() == install.AppName {
			rendered = &objs[i]
		}
	}
	if rendered == nil {
		t.Fatal("helm template rendered no CCM DaemonSet")
	}
	resource := dynamicResource(t)
	sync := func() error {
		_, err := resource(rendered).Apply(t.Context(), rendered.GetName(), rendered, metav1.ApplyOptions{FieldManager: "argocd-controller", Force: true})
		return err
	}
	if err := sync(); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "field is immutable") {
		t.Fatalf("syncing helm template's DaemonSet over upstream's: %v, want the API server's immutable-selector refusal the docs name", err)
	}
	orphan := metav1.DeletePropagationOrphan
	if err := cs.AppsV1().DaemonSets(upstreamNS).Delete(t.Context(), install.AppName, metav1.DeleteOptions{PropagationPolicy: &orphan}); err != nil {
		t.Fatal(err)
	}
	// The test bed runs no garbage collector (kube-controller-manager),
	// which finishes an orphan delete: it takes the orphan finalizer off
	// once the dependents are released. There are no pods here to release.
	if _, err := cs.AppsV1().DaemonSets(upstreamNS).Patch(t.Context(), install.AppName, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := cs.AppsV1().DaemonSets(upstreamNS).Get(ctx, install.AppName, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatalf("upstream's DaemonSet is still there after the orphan delete: %v", err)
	}
	if err := sync(); err != nil {
		t.Fatalf("sync after the orphan delete: %v", err)
	}
	if ds := daemonSet(t, cs); !maps.Equal(ds.Spec.Selector.MatchLabels, map[string]string{install.LabelName: install.AppName}) {
		t.Errorf("the synced DaemonSet selects %v, want this chart's selector", ds.Spec.Selector.MatchLabels)
	}
}

// daemonSet is the CCM's DaemonSet in kube-system, where upstream's chart
// puts it.
func daemonSet(t *testing.T, cs kubernetes.Interface) *appsv1.DaemonSet {
	t.Helper()
	ds, err := cs.AppsV1().DaemonSets("kube-system").Get(t.Context(), install.AppName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// liveObjects maps "Kind name" to the uid of each object both charts make
// under upstream's names.
func liveObjects(t *testing.T, cs kubernetes.Interface) map[string]string {
	t.Helper()
	ctx := t.Context()
	got := map[string]string{}
	note := func(kind string, m metav1.Object, err error) {
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			t.Fatal(err)
		default:
			got[kind+" "+m.GetName()] = string(m.GetUID())
		}
	}
	ds, err := cs.AppsV1().DaemonSets(upstreamNS).Get(ctx, install.AppName, metav1.GetOptions{})
	note("DaemonSet", ds, err)
	sa, err := cs.CoreV1().ServiceAccounts(upstreamNS).Get(ctx, install.ServiceAccountName, metav1.GetOptions{})
	note("ServiceAccount", sa, err)
	cr, err := cs.RbacV1().ClusterRoles().Get(ctx, install.ClusterRoleName, metav1.GetOptions{})
	note("ClusterRole", cr, err)
	crb, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, install.ClusterRoleName, metav1.GetOptions{})
	note("ClusterRoleBinding", crb, err)
	rb, err := cs.RbacV1().RoleBindings(upstreamNS).Get(ctx, "cloud-controller-manager:apiserver-authentication-reader", metav1.GetOptions{})
	note("RoleBinding", rb, err)
	return got
}
