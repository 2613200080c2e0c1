package apply

import (
	"bytes"
	"context"
	"errors"
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
)

const waitNS = "ccm-system"

// ccmDaemonSet is the workload the waits look at, as rendered.
func ccmDaemonSet(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	return decode(t, `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: aws-cloud-controller-manager, namespace: `+waitNS+`}
spec:
  selector:
    matchLabels: {app.kubernetes.io/name: aws-cloud-controller-manager}
  template:
    metadata:
      labels: {app.kubernetes.io/name: aws-cloud-controller-manager}
    spec:
      hostNetwork: true
      containers: [{name: aws-cloud-controller-manager, image: x}]
`)[0]
}

func ccmPod(name, node string, hostNetwork, ready bool) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: waitNS, Labels: map[string]string{"app.kubernetes.io/name": "aws-cloud-controller-manager"}},
		Spec:       corev1.PodSpec{NodeName: node, HostNetwork: hostNetwork},
		Status:     corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

func lease(holder string, renewed time.Time) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "cloud-controller-manager", Namespace: waitNS},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), RenewTime: ptr.To(metav1.NewMicroTime(renewed))}}
}

// TestWaitLeader: the Lease counts only when one of the installed
// workload's Pods holds it and renewed it since the apply began; any other
// holder (an old CCM, one run by hand on a laptop) is reported by name.
func TestWaitLeader(t *testing.T) {
	start := time.Now()
	ref := LeaseRef{Namespace: waitNS, Name: "cloud-controller-manager"}
	other := ccmPod("unrelated", "ip-10-0-9-9.ec2.internal", true, true)
	other.Labels = map[string]string{"app": "something-else"}
	for _, tc := range []struct {
		name  string
		lease *coordinationv1.Lease
		pods  []*corev1.Pod
		want  string // "" when the wait succeeds
	}{
		{"invalid-no-lease", nil, []*corev1.Pod{ccmPod("ccm-a", "ip-10-0-0-10.ec2.internal", true, true)}, "no Lease yet"},
		{"invalid-stale", lease("ip-10-0-0-10_1", start.Add(-time.Hour)), []*corev1.Pod{ccmPod("ccm-a", "ip-10-0-0-10.ec2.internal", true, true)}, "held by ip-10-0-0-10_1, last renewed 1h0m"},
		{"invalid-foreign-holder", lease("laptop_7c1d", time.Now()), []*corev1.Pod{ccmPod("ccm-a", "ip-10-0-0-10.ec2.internal", true, true)}, "held by laptop_7c1d, which is none of the 1 Pods of DaemonSet/" + waitNS + "/aws-cloud-controller-manager"},
		{"invalid-pod-of-another-workload", lease("ip-10-0-9-9_7c1d", time.Now()), []*corev1.Pod{other}, "none of the 0 Pods"},
		{"invalid-prefix-only", lease("ip-10-0-0-100_7c1d", time.Now()), []*corev1.Pod{ccmPod("ccm-a", "ip-10-0-0-10.ec2.internal", true, true)}, "none of the 1 Pods"},
		{"valid-host-network-short-host-name", lease("ip-10-0-0-10_7c1d", time.Now()), []*corev1.Pod{ccmPod("ccm-a", "ip-10-0-0-10.ec2.internal", true, true)}, ""},
		{"valid-host-network-fqdn", lease("ip-10-0-0-10.ec2.internal_7c1d", time.Now()), []*corev1.Pod{ccmPod("ccm-a", "ip-10-0-0-10.ec2.internal", true, true)}, ""},
		{"valid-pod-name", lease("ccm-a_7c1d", time.Now()), []*corev1.Pod{ccmPod("ccm-a", "ip-10-0-0-10.ec2.internal", false, true)}, ""},
		{"invalid-node-name-without-host-network", lease("ip-10-0-0-10_7c1d", time.Now()), []*corev1.Pod{ccmPod("ccm-a", "ip-10-0-0-10", false, true)}, "none of the 1 Pods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // the invalid cases each wait out the timeout
			cs := fake.NewClientset()
			ctx := context.Background()
			if tc.lease != nil {
				if _, err := cs.CoordinationV1().Leases(waitNS).Create(ctx, tc.lease, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range tc.pods {
				if _, err := cs.CoreV1().Pods(waitNS).Create(ctx, p, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			var out bytes.Buffer
			err := WaitLeader(ctx, cs, ccmDaemonSet(t), ref, start, 1200*time.Millisecond, &out)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("WaitLeader: %v", err)
			case tc.want == "" && !strings.Contains(out.String(), "(Pod ccm-a)"):
				t.Errorf("progress does not name the Pod:\n%s", out.String())
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), "not ready after 1.2s: "+tc.want) && !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("WaitLeader: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestWaitLeaderReadsTheGivenNamespace: the Lease of another namespace
// (kube-system, where another CCM may lead) does not count.
func TestWaitLeaderReadsTheGivenNamespace(t *testing.T) {
	ctx := context.Background()
	l := lease("ip-10-0-0-10_7c1d", time.Now())
	l.Namespace = "kube-system"
	cs := fake.NewClientset(l, ccmPod("ccm-a", "ip-10-0-0-10.ec2.internal", true, true))
	err := WaitLeader(ctx, cs, ccmDaemonSet(t), LeaseRef{Namespace: waitNS, Name: "cloud-controller-manager"}, time.Now().Add(-time.Minute), 1200*time.Millisecond, nil)
	if err == nil || !strings.Contains(err.Error(), "Lease/"+waitNS+"/cloud-controller-manager: not ready after 1.2s: no Lease yet") {
		t.Fatalf("WaitLeader: %v", err)
	}
}

func TestWaitPodsReady(t *testing.T) {
	ctx := context.Background()
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "aws-cloud-controller-manager", Namespace: waitNS},
		Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 2}}
	cs := fake.NewClientset(ds, ccmPod("ccm-a", "n1", true, true), ccmPod("ccm-b", "n2", true, false))
	var out bytes.Buffer
	err := WaitPodsReady(ctx, cs, ccmDaemonSet(t), 1200*time.Millisecond, &out)
	if err == nil || !strings.Contains(err.Error(), "not ready after 1.2s: 1 of 2 Pods Ready") {
		t.Fatalf("one Pod not Ready: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- WaitPodsReady(ctx, cs, ccmDaemonSet(t), 10*time.Second, nil) }()
	time.Sleep(300 * time.Millisecond)
	if _, err := cs.CoreV1().Pods(waitNS).UpdateStatus(ctx, ccmPod("ccm-b", "n2", true, true), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("both Ready: %v", err)
	}
}

// TestWaitInterrupted: a cancelled context (Ctrl-C) ends a wait at once
// with context.Canceled, not with "not ready after" the timeout.
func TestWaitInterrupted(t *testing.T) {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "aws-cloud-controller-manager", Namespace: waitNS, Generation: 2},
		Status: appsv1.DaemonSetStatus{ObservedGeneration: 1}}
	cs := fake.NewClientset(ds)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	began := time.Now()
	err := WaitRollout(ctx, cs, []*unstructured.Unstructured{ccmDaemonSet(t)}, time.Minute, nil)
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "not ready after") {
		t.Fatalf("WaitRollout after cancel: %v", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("the wait took %s after the cancel", d)
	}
}

// TestPollTimeoutBeforeAnyState: a check that never answers before the
// deadline (an API server that hangs) ends in the timeout error naming
// what was waited for and the check's last error, not the bare error.
func TestPollTimeoutBeforeAnyState(t *testing.T) {
	err := Poll(context.Background(), 100*time.Millisecond, 300*time.Millisecond, "DaemonSet/x/y", func(ctx context.Context) (string, bool, error) {
		<-ctx.Done()
		return "", false, ctx.Err()
	}, nil)
	want := "DaemonSet/x/y: not ready after 300ms: nothing observed yet (last error: context deadline exceeded)"
	if err == nil || err.Error() != want {
		t.Fatalf("Poll: %v, want %s", err, want)
	}
}

// liveRecorder is a LiveLine that records what a wait showed.
type liveRecorder struct {
	bytes.Buffer
	calls []string
}

func (l *liveRecorder) Begin(title string)  { l.calls = append(l.calls, "begin "+title) }
func (l *liveRecorder) Update(state string) { l.calls = append(l.calls, "update "+state) }
func (l *liveRecorder) End(result string)   { l.calls = append(l.calls, "end "+result) }

// states is a check that answers the given states in turn, done at the
// last when done is set.
func states(done bool, s ...string) func(context.Context) (string, bool, error) {
	i := 0
	return func(context.Context) (string, bool, error) {
		st := s[min(i, len(s)-1)]
		i++
		return st, done && i >= len(s), nil
	}
}

// TestPollOnStatusLine: on a terminal's status line a wait begins a line,
// sets its state at every poll (the line throttles its redraws) and ends
// it with the result; it prints no line of its own. On a plain writer it
// prints a line per change, as before.
func TestPollOnStatusLine(t *testing.T) {
	live := &liveRecorder{}
	err := Poll(context.Background(), time.Millisecond, time.Minute, "Nodes", states(true, "0 of 2", "0 of 2", "1 of 2", "initialised"), live)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"begin Nodes", "update 0 of 2", "update 0 of 2", "update 1 of 2", "update initialised"}
	if got := live.calls[:len(live.calls)-1]; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("calls %q, want %q then the end", got, want)
	}
	if end := live.calls[len(live.calls)-1]; !strings.HasPrefix(end, "end ✓ Nodes (") || !strings.HasSuffix(end, "): initialised") {
		t.Errorf("ended with %q", end)
	}
	if live.Len() != 0 {
		t.Errorf("printed lines besides the status line: %q", live.String())
	}

	live = &liveRecorder{}
	err = Poll(context.Background(), time.Millisecond, 50*time.Millisecond, "DaemonSet/x/y", states(false, "0 of 1 Pods updated"), live)
	if err == nil {
		t.Fatal("a wait that never ends did not time out")
	}
	if end := live.calls[len(live.calls)-1]; !strings.HasPrefix(end, "end ✗ DaemonSet/x/y (") || !strings.HasSuffix(end, "): not ready after 50ms: 0 of 1 Pods updated") {
		t.Errorf("a timed-out wait ended with %q", end)
	}

	var plain bytes.Buffer
	if err := Poll(context.Background(), time.Millisecond, time.Minute, "Nodes", states(true, "0 of 2", "0 of 2", "1 of 2", "initialised"), &plain); err != nil {
		t.Fatal(err)
	}
	if got, want := plain.String(), "Nodes: 0 of 2\nNodes: 1 of 2\nNodes: initialised\n"; got != want {
		t.Errorf("plain writer got\n%q\nwant\n%q", got, want)
	}
}
