package rbac

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/deploy"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
)

// TestInstallWaitUninstall is the round trip: install apply --wait returns
// only once the CCM rolled out, leads and has initialised every Node; a
// second apply changes nothing; uninstall removes every object install
// created. The test bed has no DaemonSet controller and no kubelet, so the
// test plays both: it starts the CCM binary with the rendered
// ServiceAccount's token, as the kubelet would run the Pod, and writes the
// DaemonSet status the controller would then report.
func TestInstallWaitUninstall(t *testing.T) {
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(env.cp.Config)
	objs := rendered(t)

	// Nodes waiting for a CCM: --wait must not return before they are
	// initialised.
	registerNode(t, cs, "ip-10-0-3-30.ec2.internal", "", true)
	registerNode(t, cs, running1, "", true)

	clients, err := deploy.NewClients(env.cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	var out, progress bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := deploy.Apply(ctx, clients, objs, deploy.ApplyOptions{Wait: true, Timeout: 90 * time.Second, Out: &out, Progress: &progress})
		done <- err
	}()

	// The DaemonSet controller and the kubelet.
	ds := ofKind(objs, "DaemonSet")[0]
	waitFor(t, 30*time.Second, "the DaemonSet", func(ctx context.Context) (bool, error) {
		_, err := cs.AppsV1().DaemonSets(ds.GetNamespace()).Get(ctx, ds.GetName(), metav1.GetOptions{})
		return err == nil, nil
	})
	startCCM(t, objs, "ccm-roundtrip")
	// The Pod the kubelet would report for it: --wait wants the Lease held
	// by a Pod of the DaemonSet (hostNetwork: identity "<node host name>_<uuid>").
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: ds.GetName() + "-roundtrip", Namespace: ds.GetNamespace(), Labels: map[string]string{install.LabelName: install.AppName}},
		Spec: corev1.PodSpec{NodeName: host, HostNetwork: true, ServiceAccountName: install.ServiceAccountName, Containers: []corev1.Container{{Name: install.AppName, Image: "ccm"}}}}
	if _, err := cs.CoreV1().Pods(ds.GetNamespace()).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Pods(ds.GetNamespace()).Delete(ctx, pod.Name, metav1.DeleteOptions{}) })
	live, err := cs.AppsV1().DaemonSets(ds.GetNamespace()).Get(ctx, ds.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.Status = appsv1.DaemonSetStatus{ObservedGeneration: live.Generation, DesiredNumberScheduled: 1, CurrentNumberScheduled: 1,
		UpdatedNumberScheduled: 1, NumberReady: 1, NumberAvailable: 1}
	if _, err := cs.AppsV1().DaemonSets(ds.GetNamespace()).UpdateStatus(ctx, live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("install apply --wait: %v\nprogress:\n%s", err, progress.String())
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("install apply --wait did not return\nprogress:\n%s", progress.String())
	}
	t.Logf("install apply --wait:\n%s%s", out.String(), progress.String())
	for _, want := range []string{
		"DaemonSet/" + ds.GetNamespace() + "/" + ds.GetName() + " created",
		"1 of 1 Pods updated, 1 available",
		"Lease/kube-system/" + install.LeaseName + ": held by ",
		"[nodes-uninitialized]",
	} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q", want)
		}
	}
	for _, name := range []string{"ip-10-0-3-30.ec2.internal", running1} {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if id, err := providerid.Parse(n.Spec.ProviderID); err != nil || id.Zone == "" {
			t.Errorf("Node %s has providerID %q after --wait returned", name, n.Spec.ProviderID)
		}
	}

	// Safe to re-run.
	again, err := deploy.Apply(ctx, clients, objs, deploy.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := again.Summary(), fmt.Sprintf("%d unchanged", len(objs)); got != want {
		t.Errorf("second apply: %q, want %q", got, want)
	}

	// Uninstall removes exactly what install created.
	if _, err := deploy.Uninstall(ctx, clients, objs, "", &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, u := range objs {
		gvr := map[string]func() error{
			"ServiceAccount": func() error {
				_, err := cs.CoreV1().ServiceAccounts(u.GetNamespace()).Get(ctx, u.GetName(), metav1.GetOptions{})
				return err
			},
			"ClusterRole": func() error {
				_, err := cs.RbacV1().ClusterRoles().Get(ctx, u.GetName(), metav1.GetOptions{})
				return err
			},
			"ClusterRoleBinding": func() error {
				_, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, u.GetName(), metav1.GetOptions{})
				return err
			},
			"RoleBinding": func() error {
				_, err := cs.RbacV1().RoleBindings(u.GetNamespace()).Get(ctx, u.GetName(), metav1.GetOptions{})
				return err
			},
			"ConfigMap": func() error {
				_, err := cs.CoreV1().ConfigMaps(u.GetNamespace()).Get(ctx, u.GetName(), metav1.GetOptions{})
				return err
			},
			"DaemonSet": func() error {
				_, err := cs.AppsV1().DaemonSets(u.GetNamespace()).Get(ctx, u.GetName(), metav1.GetOptions{})
				return err
			},
		}[u.GetKind()]
		if gvr == nil {
			t.Fatalf("no check for %s", u.GetKind())
		}
		if err := gvr(); !apierrors.IsNotFound(err) {
			t.Errorf("%s %s/%s still there after uninstall (%v)", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
	// The built-in Role the RoleBinding points at is not ours and stays.
	if _, err := cs.RbacV1().Roles("kube-system").Get(ctx, "extension-apiserver-authentication-reader", metav1.GetOptions{}); err != nil {
		t.Errorf("uninstall touched the built-in Role: %v", err)
	}
}
