package deploy

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
)

// TestLeaderElection: the Lease is the one the CCM was rendered with (its
// namespace is the install's, not always kube-system), and none with
// --leader-elect=false.
func TestLeaderElection(t *testing.T) {
	for _, tc := range []struct {
		name  string
		v     install.Values
		elect bool
		lease apply.LeaseRef
	}{
		{"valid-default", install.Values{}, true, apply.LeaseRef{Namespace: "kube-system", Name: install.LeaseName}},
		{"valid-namespace", install.Values{Namespace: "ccm-system"}, true, apply.LeaseRef{Namespace: "ccm-system", Name: install.LeaseName}},
		{"valid-deployment", install.Values{Namespace: "ccm-system", Workload: install.WorkloadDeployment}, true, apply.LeaseRef{Namespace: "ccm-system", Name: install.LeaseName}},
		{"valid-no-election", install.Values{Namespace: "ccm-system", LeaderElect: ptr.To(false)}, false, apply.LeaseRef{Namespace: "kube-system", Name: install.LeaseName}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.v.Default()
			objs, err := Objects(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			elect, lease, err := leaderElection(workload(objs))
			if err != nil || elect != tc.elect || lease != tc.lease {
				t.Errorf("leaderElection = %v, %+v, %v; want %v, %+v", elect, lease, err, tc.elect, tc.lease)
			}
		})
	}
	v := install.Values{}
	v.Default()
	objs, err := Objects(v)
	if err != nil {
		t.Fatal(err)
	}
	bad := workload(objs)
	containers, _, _ := unstructured.NestedSlice(bad.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["args"] = []any{"--leader-elect=maybe"}
	if err := unstructured.SetNestedSlice(bad.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := leaderElection(bad); err == nil || !strings.Contains(err.Error(), "--leader-elect=maybe") {
		t.Errorf("bad --leader-elect: %v", err)
	}
	// As the binary's flag set reads them: a bare bool, a value in the next
	// argument, the last occurrence wins.
	containers[0].(map[string]any)["args"] = []any{"--leader-elect=false", "--leader-elect", "--leader-elect-resource-namespace", "ns2", "--leader-elect-resource-name=a", "--leader-elect-resource-name=b"}
	if err := unstructured.SetNestedSlice(bad.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	if elect, lease, err := leaderElection(bad); err != nil || !elect || lease != (apply.LeaseRef{Namespace: "ns2", Name: "b"}) {
		t.Errorf("flag forms: %v, %+v, %v", elect, lease, err)
	}
}

// TestWaitRunningNamespaceAndPods: rendered for ccm-system, the wait reads
// the Lease there and wants it held by a Pod of the install; the holder of
// kube-system's Lease of the same name (another CCM) does not count.
func TestWaitRunningNamespaceAndPods(t *testing.T) {
	v := install.Values{Namespace: "ccm-system"}
	v.Default()
	objs, err := Objects(v)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "aws-cloud-controller-manager-x1", Namespace: "ccm-system",
		Labels: map[string]string{install.LabelName: install.AppName}},
		Spec: corev1.PodSpec{NodeName: "ip-10-0-0-10.ec2.internal", HostNetwork: true}}
	held := func(ns, holder string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: install.LeaseName, Namespace: ns},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), RenewTime: ptr.To(metav1.NewMicroTime(time.Now()))}}
	}
	cs := fake.NewClientset(pod, held("kube-system", "ip-10-0-0-10_1"))
	var progress bytes.Buffer
	if err := waitRunning(context.Background(), cs, objs, start, 1200*time.Millisecond, &progress); err == nil || !strings.Contains(err.Error(), "Lease/ccm-system/"+install.LeaseName+": not ready after 1.2s: no Lease yet") {
		t.Fatalf("only kube-system's Lease: %v", err)
	}
	if _, err := cs.CoordinationV1().Leases("ccm-system").Create(context.Background(), held("ccm-system", "old-ccm_2"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := waitRunning(context.Background(), cs, objs, start, 1200*time.Millisecond, &progress); err == nil || !strings.Contains(err.Error(), "held by old-ccm_2, which is none of the 1 Pods") {
		t.Fatalf("held by another process: %v", err)
	}
	if _, err := cs.CoordinationV1().Leases("ccm-system").Update(context.Background(), held("ccm-system", "ip-10-0-0-10_3"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := waitRunning(context.Background(), cs, objs, start, 5*time.Second, &progress); err != nil {
		t.Fatalf("held by the Pod: %v", err)
	}
}

// TestWaitRunningWithoutLeaderElection: no Lease is waited for; the Pods
// must be Ready.
func TestWaitRunningWithoutLeaderElection(t *testing.T) {
	v := install.Values{Namespace: "ccm-system", LeaderElect: ptr.To(false)}
	v.Default()
	objs, err := Objects(v)
	if err != nil {
		t.Fatal(err)
	}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: install.AppName, Namespace: "ccm-system"},
		Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 1}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "aws-cloud-controller-manager-x1", Namespace: "ccm-system",
		Labels: map[string]string{install.LabelName: install.AppName}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}}}
	cs := fake.NewClientset(ds, pod)
	var progress bytes.Buffer
	err = waitRunning(context.Background(), cs, objs, time.Now(), 1200*time.Millisecond, &progress)
	if err == nil || !strings.Contains(err.Error(), "not ready after 1.2s: 0 of 1 Pods Ready") || strings.Contains(progress.String(), "to lead") {
		t.Fatalf("Pod not Ready: %v\n%s", err, progress.String())
	}
	pod.Status.Conditions[0].Status = corev1.ConditionTrue
	if _, err := cs.CoreV1().Pods("ccm-system").UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := waitRunning(context.Background(), cs, objs, time.Now(), 5*time.Second, &progress); err != nil {
		t.Fatalf("Pod Ready: %v", err)
	}
}
