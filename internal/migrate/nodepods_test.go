package migrate

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// playedKubelets plays the nodes' kubelets for the rollout's Pods in a fake
// clientset: each Pod created runs for a while and ends in the phase
// outcome gives its node; it records the most Pods running at once and the
// order the nodes started in.
type playedKubelets struct {
	mu       sync.Mutex
	running  int
	most     int
	started  []string
	outcome  func(node string) corev1.PodPhase
	cs       *fake.Clientset
	runFor   time.Duration
	finished sync.WaitGroup
}

func newPlayedKubelets(outcome func(string) corev1.PodPhase) *playedKubelets {
	k := &playedKubelets{cs: fake.NewClientset(), outcome: outcome, runFor: 30 * time.Millisecond}
	k.cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pod := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod).DeepCopy()
		k.mu.Lock()
		k.running++
		k.most = max(k.most, k.running)
		k.started = append(k.started, pod.Spec.NodeName)
		k.mu.Unlock()
		k.finished.Add(1)
		go k.finish(pod)
		return false, nil, nil // the tracker stores it
	})
	return k
}

func (k *playedKubelets) finish(pod *corev1.Pod) {
	defer k.finished.Done()
	time.Sleep(k.runFor)
	ctx := context.Background()
	got, err := k.cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		return
	}
	got.Status.Phase = k.outcome(pod.Spec.NodeName)
	if got.Status.Phase == corev1.PodFailed {
		got.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: nodePodContainer, State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Message: "kubelet after phase kubelet-external: not healthy"},
		}}}
	}
	k.mu.Lock()
	k.running--
	k.mu.Unlock()
	_, _ = k.cs.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, got, metav1.UpdateOptions{})
}

func rollout(cs *fake.Clientset, phase string, nodes []string, maxUnavailable string) *nodePodRollout {
	np := &NodePods{Image: "example.com/awsccmctl:v1", MaxUnavailable: intstr.Parse(maxUnavailable)}
	return &nodePodRollout{
		pods: np, e: &env{client: cs}, step: "kubelet-external/workers", phase: phase, nodes: nodes,
		concurrency: np.concurrency(phase, "", len(nodes)), poll: 5 * time.Millisecond, printf: func(string, ...any) {},
	}
}

func TestNodePodRolloutKeepsMaxUnavailable(t *testing.T) {
	k := newPlayedKubelets(func(string) corev1.PodPhase { return corev1.PodSucceeded })
	nodes := []string{"n1", "n2", "n3", "n4", "n5", "n6", "n7"}
	ro := rollout(k.cs, PhaseKubeletExternal, nodes, "30%") // 30% of 7 is 2
	if ro.concurrency != 2 {
		t.Fatalf("30%% of 7 nodes: concurrency %d, want 2 (rounded down)", ro.concurrency)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ro.run(ctx); err != nil {
		t.Fatal(err)
	}
	k.finished.Wait()
	if k.most != 2 || len(k.started) != len(nodes) {
		t.Errorf("at most %d Pods ran at once (want 2), %d started (want %d)", k.most, len(k.started), len(nodes))
	}
	pods, _ := ro.podsOf(ctx)
	for _, n := range nodes {
		p := pods[n]
		if p == nil {
			t.Fatalf("no Pod for %s", n)
		}
		checkNodePod(t, p, n)
	}
	ro.cleanup(ctx)
	if left, _ := ro.podsOf(ctx); len(left) != 0 {
		t.Errorf("cleanup left %d Pods", len(left))
	}
}

func checkNodePod(t *testing.T, p *corev1.Pod, node string) {
	t.Helper()
	c := p.Spec.Containers[0]
	cmd := strings.Join(c.Command, " ")
	for _, want := range []string{NodePodBinary + " migrate-from-intree node --phase=kubelet-external", "--root=/host", "--node-name=" + node, "--kubelet-credentials", "--chroot-systemctl"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("%s: command %q lacks %q", node, cmd, want)
		}
	}
	if p.Spec.NodeName != node || !p.Spec.HostPID || !p.Spec.HostNetwork || p.Spec.RestartPolicy != corev1.RestartPolicyNever ||
		*p.Spec.AutomountServiceAccountToken || !*c.SecurityContext.Privileged || p.Spec.Volumes[0].HostPath.Path != "/" || c.VolumeMounts[0].MountPath != "/host" {
		t.Errorf("%s: Pod spec %+v", node, p.Spec)
	}
}

func TestNodePodRolloutRunsControlPlaneInOrderOneAtATime(t *testing.T) {
	k := newPlayedKubelets(func(string) corev1.PodPhase { return corev1.PodSucceeded })
	order := []string{"cp-b", "cp-c", "cp-a"} // apply's order: the leader last
	ro := rollout(k.cs, PhaseControlPlaneExternal, order, "100%")
	if err := ro.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	k.finished.Wait()
	if k.most != 1 || strings.Join(k.started, ",") != "cp-b,cp-c,cp-a" {
		t.Errorf("control-plane Pods: at most %d at once (want 1), order %v (want cp-b,cp-c,cp-a)", k.most, k.started)
	}
}

func TestNodePodRolloutStopsAtAFailedPod(t *testing.T) {
	k := newPlayedKubelets(func(n string) corev1.PodPhase {
		if n == "n2" {
			return corev1.PodFailed
		}
		return corev1.PodSucceeded
	})
	ro := rollout(k.cs, PhaseKubeletExternal, []string{"n1", "n2", "n3", "n4"}, "1")
	err := ro.run(context.Background())
	k.finished.Wait()
	if err == nil || !strings.Contains(err.Error(), "on n2 failed") || !strings.Contains(err.Error(), "exit 3: kubelet after phase kubelet-external: not healthy") {
		t.Fatalf("err = %v, want n2's failure with its exit and message", err)
	}
	if strings.Join(k.started, ",") != "n1,n2" {
		t.Errorf("started %v after n2 failed, want n1,n2 only", k.started)
	}
	// A resumed run deletes the failed Pod and runs n2 again.
	k.outcome = func(string) corev1.PodPhase { return corev1.PodSucceeded }
	if err := ro.run(context.Background()); err != nil {
		t.Fatalf("resumed rollout: %v", err)
	}
	k.finished.Wait()
	if strings.Join(k.started, ",") != "n1,n2,n2,n3,n4" {
		t.Errorf("resumed: started %v, want n1,n2 then n2,n3,n4 (n1 succeeded before and is not run again)", k.started)
	}
}

func TestNodePodsValidate(t *testing.T) {
	for mu, want := range map[string]string{"1": "", "10%": "", "0": "at least 1", "0%": "at least 1", "abc": "a number or a percentage", "-2": "at least 1"} {
		err := (&NodePods{Image: "x", MaxUnavailable: intstr.Parse(mu)}).Validate()
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("--max-unavailable %s: %v, want %q", mu, err, want)
		}
	}
	if err := (&NodePods{MaxUnavailable: intstr.FromInt32(1)}).Validate(); err == nil || !strings.Contains(err.Error(), "--node-image") {
		t.Errorf("no image: %v", err)
	}
}

// TestNodePodFailureStopsTheStep: while the gate waits (it never passes
// here), a node's failed Pod ends the wait at once with that Pod's failure,
// not the gate's timeout or a bare "context canceled".
func TestNodePodFailureStopsTheStep(t *testing.T) {
	k := newPlayedKubelets(func(n string) corev1.PodPhase {
		if n == "n1" {
			return corev1.PodFailed
		}
		return corev1.PodSucceeded
	})
	s := &Step{Name: "kubelet-external/workers", Runs: RunsNodes, Phase: PhaseKubeletExternal, Nodes: []string{"n1", "n2"}, Timeout: durationOf(time.Minute)}
	r := &Runner{Poll: 5 * time.Millisecond, NodePods: &NodePods{Image: "example.com/awsccmctl:v1", MaxUnavailable: intstr.FromInt32(1)}}
	e := &env{client: k.cs, journal: &Journal{}, plan: &MigrationPlan{}, now: time.Now, stepStarted: time.Now()}
	waiting := func(context.Context, *env, *Step) (gateResult, error) {
		return gateResult{evidence: []string{"0 of 2 nodes reported"}}, nil
	}
	start := time.Now()
	_, err := r.waitNodePods(context.Background(), e, s, false, PhaseKubeletExternal, "", nil, waiting)
	k.finished.Wait()
	if err == nil || !strings.Contains(err.Error(), "the node step on n1 failed in Pod kube-system/") || !strings.Contains(err.Error(), "exit 3") {
		t.Fatalf("err = %v, want n1's Pod failure", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the failure stopped the step after %s", d)
	}
	if strings.Join(k.started, ",") != "n1" {
		t.Errorf("Pods started %v, want n1 only (max-unavailable 1, n1 failed)", k.started)
	}
	// Kept for its log.
	if pods, _ := k.cs.CoreV1().Pods("kube-system").List(context.Background(), metav1.ListOptions{}); len(pods.Items) != 1 {
		t.Errorf("%d Pods left, want n1's failed Pod kept", len(pods.Items))
	}
}
