package apply

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// manifests is a small install: every kind of object the real templates
// render, in apply order, labelled like them. run makes the names unique.
func manifests(run, data string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ServiceAccount
metadata:
  name: ccm-%[1]s
  namespace: kube-system
  labels: {app.kubernetes.io/managed-by: awsccmctl}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: ccm-%[1]s
  labels: {app.kubernetes.io/managed-by: awsccmctl}
rules:
- apiGroups: [""]
  resources: [nodes]
  verbs: [get, list, watch]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: ccm-%[1]s
  namespace: kube-system
  labels: {app.kubernetes.io/managed-by: awsccmctl}
data:
  cloud.conf: %[2]q
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: ccm-%[1]s
  namespace: kube-system
  labels: {app.kubernetes.io/managed-by: awsccmctl}
spec:
  selector:
    matchLabels: {app: ccm-%[1]s}
  template:
    metadata:
      labels: {app: ccm-%[1]s}
    spec:
      serviceAccountName: ccm-%[1]s
      containers:
      - name: ccm
        image: ghcr.io/awsccmctl/aws-cloud-controller-manager:v0.0.0
`, run, data)
}

func setup(t *testing.T) (*Client, kubernetes.Interface, string) {
	t.Helper()
	cp := testbed.Get(t)
	c, err := NewClient(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c, kubernetes.NewForConfigOrDie(cp.Config), fmt.Sprintf("t%d", time.Now().UnixNano()%1e9)
}

func decode(t *testing.T, s string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func actions(rs []Result) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, r.Action)
	}
	return strings.Join(parts, ",")
}

func TestApplyLifecycle(t *testing.T) {
	c, cs, run := setup(t)
	ctx := context.Background()
	objs := decode(t, manifests(run, "[Global]\nRegion = us-east-1\n"))
	t.Cleanup(func() { _, _ = c.Uninstall(ctx, objs, Options{}) })

	// A server dry run goes through admission and validation, persists nothing.
	var out bytes.Buffer
	rs, err := c.Apply(ctx, objs, Options{DryRun: DryRunServer, Progress: &out})
	if err != nil || actions(rs) != "created,created,created,created" {
		t.Fatalf("server dry run: %s, %v", actions(rs), err)
	}
	if !strings.Contains(out.String(), "DaemonSet/kube-system/ccm-"+run+" created (dry run: server)") {
		t.Errorf("progress lines:\n%s", out.String())
	}
	if _, err := cs.CoreV1().ConfigMaps("kube-system").Get(ctx, "ccm-"+run, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the dry run persisted the ConfigMap: %v", err)
	}
	if rs, err := c.Apply(ctx, objs, Options{DryRun: DryRunClient}); err != nil || actions(rs) != "created,created,created,created" {
		t.Fatalf("client dry run: %s, %v", actions(rs), err)
	}

	// Apply, then again: safe to re-run.
	if rs, err := c.Apply(ctx, objs, Options{}); err != nil || actions(rs) != "created,created,created,created" {
		t.Fatalf("apply: %s, %v", actions(rs), err)
	}
	if rs, err := c.Apply(ctx, objs, Options{}); err != nil || actions(rs) != "unchanged,unchanged,unchanged,unchanged" {
		t.Fatalf("re-apply: %s, %v", actions(rs), err)
	}
	if d, err := c.Diff(ctx, objs); err != nil || d != "" {
		t.Fatalf("diff of an unchanged install = %q, %v", d, err)
	}

	// A changed value: the diff shows it, the server dry run says
	// configured without writing it, the apply writes it.
	changed := decode(t, manifests(run, "[Global]\nRegion = eu-west-1\n"))
	d, err := c.Diff(ctx, changed)
	if err != nil || !strings.Contains(d, "--- live/ConfigMap/kube-system/ccm-"+run) ||
		!strings.Contains(d, "\n-    Region = us-east-1\n+    Region = eu-west-1\n") {
		t.Fatalf("diff:\n%s\n%v", d, err)
	}
	if rs, err := c.Apply(ctx, changed, Options{DryRun: DryRunServer}); err != nil || actions(rs) != "unchanged,unchanged,configured,unchanged" {
		t.Fatalf("server dry run of the change: %s, %v", actions(rs), err)
	}
	cm, _ := cs.CoreV1().ConfigMaps("kube-system").Get(ctx, "ccm-"+run, metav1.GetOptions{})
	if !strings.Contains(cm.Data["cloud.conf"], "us-east-1") {
		t.Fatalf("the dry run changed the ConfigMap: %v", cm.Data)
	}
	if rs, err := c.Apply(ctx, changed, Options{}); err != nil || actions(rs) != "unchanged,unchanged,configured,unchanged" {
		t.Fatalf("apply of the change: %s, %v", actions(rs), err)
	}

	// Someone edits a field by hand: the next apply refuses to overwrite
	// it silently, and takes it over only when forced.
	cm, _ = cs.CoreV1().ConfigMaps("kube-system").Get(ctx, "ccm-"+run, metav1.GetOptions{})
	cm.Data["cloud.conf"] = "[Global]\nRegion = ap-south-1\n"
	if _, err := cs.CoreV1().ConfigMaps("kube-system").Update(ctx, cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Apply(ctx, changed, Options{})
	if err == nil || !strings.Contains(err.Error(), "ConfigMap/kube-system/ccm-"+run) || !strings.Contains(err.Error(), "--force-conflicts") || !strings.Contains(err.Error(), "kubectl-edit") {
		t.Fatalf("conflict not reported: %v", err)
	}
	if rs, err := c.Apply(ctx, changed, Options{Force: true}); err != nil || actions(rs) != "unchanged,unchanged,configured,unchanged" {
		t.Fatalf("forced apply: %s, %v", actions(rs), err)
	}

	// Uninstall removes exactly what install created, in reverse order.
	out.Reset()
	if rs, err := c.Uninstall(ctx, objs, Options{DryRun: DryRunServer}); err != nil || actions(rs) != "deleted,deleted,deleted,deleted" {
		t.Fatalf("uninstall dry run: %s, %v", actions(rs), err)
	}
	if _, err := cs.AppsV1().DaemonSets("kube-system").Get(ctx, "ccm-"+run, metav1.GetOptions{}); err != nil {
		t.Fatalf("the uninstall dry run deleted the DaemonSet: %v", err)
	}
	rs, err = c.Uninstall(ctx, objs, Options{Progress: &out})
	if err != nil || actions(rs) != "deleted,deleted,deleted,deleted" {
		t.Fatalf("uninstall: %s, %v", actions(rs), err)
	}
	if first := strings.SplitN(out.String(), "\n", 2)[0]; first != "DaemonSet/kube-system/ccm-"+run+" deleted" {
		t.Errorf("first deletion %q, want the DaemonSet", first)
	}
	if rs, err := c.Uninstall(ctx, objs, Options{}); err != nil || actions(rs) != "not found,not found,not found,not found" {
		t.Fatalf("second uninstall: %s, %v", actions(rs), err)
	}
}

func TestUninstallLeavesForeignObjects(t *testing.T) {
	c, cs, run := setup(t)
	ctx := context.Background()
	// A ConfigMap of the same name that install did not create.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ccm-" + run, Namespace: "kube-system"}}
	if _, err := cs.CoreV1().ConfigMaps("kube-system").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().ConfigMaps("kube-system").Delete(ctx, cm.Name, metav1.DeleteOptions{}) })
	rs, err := c.Uninstall(ctx, decode(t, manifests(run, "x"))[2:3], Options{})
	if err != nil || len(rs) != 1 || !strings.HasPrefix(rs[0].Action, "skipped (no app.kubernetes.io/managed-by=awsccmctl label") {
		t.Fatalf("uninstall of a foreign object: %+v, %v", rs, err)
	}
	if _, err := cs.CoreV1().ConfigMaps("kube-system").Get(ctx, cm.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the foreign ConfigMap is gone: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	_, err := Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\napiVersion: v1\nmetadata: {name: b}\n---\napiVersion: v1\nkind: Secret\n"))
	// Empty documents do not count.
	for _, want := range []string{"document 2: no kind", "document 3 (Secret): no metadata.name"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	if _, err := Decode([]byte("kind: [unclosed\n")); err == nil || !strings.Contains(err.Error(), "document 1") {
		t.Errorf("malformed YAML: %v", err)
	}
	c, _, _ := setup(t)
	bad := decode(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
	if _, err := c.Apply(context.Background(), bad, Options{}); err == nil || !strings.Contains(err.Error(), "the cluster does not serve example.com/v1, Kind=Widget") {
		t.Errorf("unknown kind: %v", err)
	}
}

// TestWaitRollout: the test bed runs no DaemonSet controller and no
// kubelet, so the test writes the status they would, through the status
// subresource, and checks what the wait makes of it.
// TestWaitRolloutTimeoutNamesWhatWasNotReady: a wait that runs out of
// time with a slow client (its rate limiter refuses the last request
// because it could not be sent before the deadline) says which object was
// not ready and its last state, not "client rate limiter Wait returned an
// error".
func TestWaitRolloutTimeoutNamesWhatWasNotReady(t *testing.T) {
	c, cs, run := setup(t)
	ctx := context.Background()
	objs := decode(t, manifests(run, "x"))
	if _, err := c.Apply(ctx, objs, Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Uninstall(ctx, objs, Options{}) })
	ds, err := cs.AppsV1().DaemonSets("kube-system").Get(ctx, "ccm-"+run, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds.Status = appsv1.DaemonSetStatus{ObservedGeneration: ds.Generation, DesiredNumberScheduled: 1, CurrentNumberScheduled: 1}
	if _, err := cs.AppsV1().DaemonSets("kube-system").UpdateStatus(ctx, ds, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// One request per 2 s against a poll per second: the third poll's
	// request could only go after the 3 s deadline, and the limiter says so.
	cfg := rest.CopyConfig(testbed.Get(t).Config)
	cfg.QPS, cfg.Burst = 0.5, 1
	slow := kubernetes.NewForConfigOrDie(cfg)
	err = WaitRollout(ctx, slow, objs, 3*time.Second, nil)
	want := "DaemonSet/kube-system/ccm-" + run + ": not ready after 3s: 0 of 1 Pods updated, 0 available"
	if err == nil || err.Error() != want {
		t.Fatalf("WaitRollout: %v\nwant %s", err, want)
	}
}

func TestWaitRollout(t *testing.T) {
	c, cs, run := setup(t)
	ctx := context.Background()
	objs := decode(t, manifests(run, "x"))
	if _, err := c.Apply(ctx, objs, Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Uninstall(ctx, objs, Options{}) })
	setStatus := func(s appsv1.DaemonSetStatus) {
		ds, err := cs.AppsV1().DaemonSets("kube-system").Get(ctx, "ccm-"+run, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.ObservedGeneration = ds.Generation
		ds.Status = s
		if _, err := cs.AppsV1().DaemonSets("kube-system").UpdateStatus(ctx, ds, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	err := WaitRollout(ctx, cs, objs, 1500*time.Millisecond, &out)
	if err == nil || !strings.Contains(err.Error(), "not ready after 1.5s: waiting for the DaemonSet controller to see generation 1") {
		t.Fatalf("no controller: %v", err)
	}
	setStatus(appsv1.DaemonSetStatus{})
	if err := WaitRollout(ctx, cs, objs, 5*time.Second, &out); err == nil || !strings.Contains(err.Error(), "schedules no Pod") {
		t.Fatalf("no matching Node: %v", err)
	}
	setStatus(appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, UpdatedNumberScheduled: 3, NumberAvailable: 2, CurrentNumberScheduled: 3, NumberReady: 2})
	done := make(chan error, 1)
	go func() { done <- WaitRollout(ctx, cs, objs, 20*time.Second, &out) }()
	time.Sleep(1500 * time.Millisecond)
	setStatus(appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, UpdatedNumberScheduled: 3, NumberAvailable: 3, CurrentNumberScheduled: 3, NumberReady: 3})
	if err := <-done; err != nil {
		t.Fatalf("rolled out: %v", err)
	}
	for _, line := range []string{"3 of 3 Pods updated, 2 available", "3 of 3 Pods updated, 3 available"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("progress lacks %q:\n%s", line, out.String())
		}
	}
}
