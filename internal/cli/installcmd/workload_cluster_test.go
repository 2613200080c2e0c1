package installcmd_test

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// workloads says which of the CCM's DaemonSet and Deployment exist in ns.
func workloads(t *testing.T, cs kubernetes.Interface, ns string) (daemonSet, deployment bool) {
	t.Helper()
	ctx := context.Background()
	_, err := cs.AppsV1().DaemonSets(ns).Get(ctx, install.AppName, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	daemonSet = err == nil
	_, err = cs.AppsV1().Deployments(ns).Get(ctx, install.AppName, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return daemonSet, err == nil
}

// inventoryData is the install's inventory ConfigMap's data ("" when
// none), to tell that a refused apply did not rewrite it.
func inventoryData(t *testing.T, cs kubernetes.Interface, ns string) string {
	t.Helper()
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), apply.InventoryName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return cm.Data[apply.InventoryKey]
}

// wantRefused runs install apply with args and checks: exit 8, an error
// holding every one of msg, nothing on stdout, and the cluster as before:
// the same workloads, the same inventory.
func wantRefused(t *testing.T, cs kubernetes.Interface, ns string, args []string, msg ...string) {
	t.Helper()
	ds, dep := workloads(t, cs, ns)
	inv := inventoryData(t, cs, ns)
	out, _, err := run(t, append([]string{"install", "apply"}, args...)...)
	if code := exitcode.Of(err); code != exitcode.Mismatch {
		t.Fatalf("install apply %s: exit %d (%v), want %d", strings.Join(args, " "), code, err, exitcode.Mismatch)
	}
	for _, s := range msg {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("install apply %s: error %q lacks %q", strings.Join(args, " "), err, s)
		}
	}
	if out != "" {
		t.Errorf("install apply %s: refused, yet printed %q", strings.Join(args, " "), out)
	}
	if ds2, dep2 := workloads(t, cs, ns); ds2 != ds || dep2 != dep {
		t.Errorf("install apply %s changed the workloads: DaemonSet %v→%v, Deployment %v→%v", strings.Join(args, " "), ds, ds2, dep, dep2)
	}
	if inv2 := inventoryData(t, cs, ns); inv2 != inv {
		t.Errorf("install apply %s rewrote the inventory:\n%s\nwas\n%s", strings.Join(args, " "), inv2, inv)
	}
}

// removeAtEnd removes whatever install the test left in the namespace of
// flags (--kubeconfig, --namespace), with either workload; nothing when
// the test removed it.
func removeAtEnd(t *testing.T, flags []string) {
	t.Cleanup(func() {
		for _, w := range []string{"daemonset", "deployment"} {
			_, _, _ = run(t, append([]string{"install", "uninstall", "--workload", w}, flags...)...)
		}
	})
}

// TestApplyOtherWorkloadExitsEight: install apply, then install apply
// --workload deployment, used to create a Deployment beside the recorded
// DaemonSet (two CCMs). It exits 8, names the recorded workload and the way
// to switch (uninstall first), and changes nothing, in a dry run with
// --diff too; so does the reverse order. Uninstall with the other workload
// names the recorded one.
func TestApplyOtherWorkloadExitsEight(t *testing.T) {
	kubeconfig, ns := cluster(t)
	cs := kubernetes.NewForConfigOrDie(testbed.Get(t).Config)
	flags := []string{"--kubeconfig", kubeconfig, "--namespace", ns, "--no-detect"}
	ds := "DaemonSet/" + ns + "/" + install.AppName
	dep := "Deployment/" + ns + "/" + install.AppName

	if _, _, err := run(t, append([]string{"install", "apply"}, flags...)...); err != nil {
		t.Fatal(err)
	}
	removeAtEnd(t, flags[:4])
	for _, extra := range [][]string{nil, {"--dry-run=server", "--diff"}, {"--dry-run=client"}} {
		wantRefused(t, cs, ns, append(append([]string{"--workload", "deployment"}, flags...), extra...),
			"runs the CCM as "+ds+" (--workload daemonset)", "--workload deployment would run a second CCM",
			"awsccmctl install uninstall --namespace "+ns+" --workload daemonset", "nothing was changed")
	}
	_, _, err := run(t, append([]string{"install", "uninstall", "--workload", "deployment"}, flags[:4]...)...)
	if code := exitcode.Of(err); code != exitcode.Mismatch || !strings.Contains(err.Error(), "it runs the CCM as "+ds+"; re-run with --workload daemonset") {
		t.Errorf("uninstall with the other workload: exit %d (%v), want %d naming %s", code, err, exitcode.Mismatch, ds)
	}
	// The documented switch: uninstall, then apply with the other workload.
	if _, _, err := run(t, append([]string{"install", "uninstall"}, flags[:4]...)...); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, append([]string{"install", "apply", "--workload", "deployment"}, flags...)...); err != nil {
		t.Fatal(err)
	}
	if hasDS, hasDep := workloads(t, cs, ns); hasDS || !hasDep {
		t.Fatalf("after the switch: DaemonSet %v, Deployment %v", hasDS, hasDep)
	}
	// The reverse order.
	wantRefused(t, cs, ns, flags,
		"runs the CCM as "+dep+" (--workload deployment)", "--workload daemonset would run a second CCM",
		"awsccmctl install uninstall --namespace "+ns+" --workload deployment", "nothing was changed")
}

// TestApplyOtherWorkloadWithoutRecord: with no install recorded, a live
// workload of the other kind still refuses the apply (exit 8, nothing
// changed): one of awsccmctl's whose inventory was deleted (the message
// says how to record it again), or a DaemonSet of the CCM's name made by
// someone else (another CCM).
func TestApplyOtherWorkloadWithoutRecord(t *testing.T) {
	kubeconfig, ns := cluster(t)
	cs := kubernetes.NewForConfigOrDie(testbed.Get(t).Config)
	ctx := context.Background()
	flags := []string{"--kubeconfig", kubeconfig, "--namespace", ns, "--no-detect"}
	ds := "DaemonSet/" + ns + "/" + install.AppName

	if _, _, err := run(t, append([]string{"install", "apply"}, flags...)...); err != nil {
		t.Fatal(err)
	}
	removeAtEnd(t, flags[:4])
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, apply.InventoryName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, cs, ns, append([]string{"--workload", "deployment"}, flags...),
		ds+" runs the CCM, made by awsccmctl install apply --workload daemonset, but no install records it",
		"awsccmctl install apply --namespace "+ns+" --workload daemonset", "nothing was changed")
	// Recorded again, as the message says; the install is whole again.
	if _, _, err := run(t, append([]string{"install", "apply"}, flags...)...); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, append([]string{"install", "uninstall"}, flags[:4]...)...); err != nil {
		t.Fatal(err)
	}

	// Another tool's DaemonSet of the CCM's name.
	createUpstreamDaemonSet(t, cs, ns, "helm")
	wantRefused(t, cs, ns, append([]string{"--workload", "deployment"}, flags...),
		ds+" exists and was not made by awsccmctl", "--workload deployment would run a second CCM", "remove it first", "nothing was changed")
}

// createUpstreamDaemonSet creates the DaemonSet upstream's manifests make
// (selector k8s-app=<name>, upstream's image) in ns as manager, deleted at
// the end of the test.
func createUpstreamDaemonSet(t *testing.T, cs kubernetes.Interface, ns, manager string) *appsv1.DaemonSet {
	t.Helper()
	ctx := context.Background()
	labels := install.UpstreamSelectorLabels()
	theirs := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: install.AppName, Namespace: ns, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				// Upstream's container name, which is this CCM's too
				// (examples/existing-cluster/base in cloud-provider-aws).
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: install.AppName,
					Image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.37.0"}}},
			},
		},
	}
	ds, err := cs.AppsV1().DaemonSets(ns).Create(ctx, theirs, metav1.CreateOptions{FieldManager: manager})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.AppsV1().DaemonSets(ns).Delete(ctx, install.AppName, metav1.DeleteOptions{}) })
	return ds
}
