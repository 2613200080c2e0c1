//go:build linux

package bench

import (
	"context"
	"fmt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	cloudproviderapi "k8s.io/cloud-provider/api"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// kubeletWorkers is how many kubelets register at the same moment.
const kubeletWorkers = 32

var instanceSeq int

// addInstances adds n running, cluster-tagged instances to the emulator,
// spread over the three zones, each with a VPC CNI secondary IP and the
// nodes' security group.
func addInstances(n int) ([]awsemu.Instance, error) {
	out := make([]awsemu.Instance, 0, n)
	for range n {
		instanceSeq++
		s := instanceSeq
		z, host := s%3, s/3+10
		ip := fmt.Sprintf("10.0.%d.%d", z*64+host/250, host%250+1)
		podIP := fmt.Sprintf("10.0.%d.%d", z*64+32+host/250, host%250+1)
		in := awsemu.Instance{
			ID:               fmt.Sprintf("i-%017x", 0xbe0000000+s),
			Type:             "m6i.large",
			SubnetID:         subnets[z],
			PrivateIP:        ip,
			ENIs:             []awsemu.ENI{{DeviceIndex: 0, PrivateIPs: []string{ip, podIP}}},
			SecurityGroupIDs: []string{nodeGroupID},
			Tags:             map[string]string{"kubernetes.io/cluster/" + clusterID: "owned", "Name": fmt.Sprintf("bench-%d", s)},
		}
		if err := env.aws.AddInstance(in); err != nil {
			return nil, err
		}
		got, _ := env.aws.Instance(in.ID)
		out = append(out, got)
	}
	return out, nil
}

// parallel runs fn(0..n-1) on kubeletWorkers goroutines and returns the
// first error.
func parallel(n int, fn func(i int) error) error {
	const workers = kubeletWorkers
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// registerNodes creates one Node per instance the way a kubelet with
// --cloud-provider=external does: named by private DNS name, no
// providerID, the uninitialized taint and a Ready condition, in one create
// (Node status may be set on create, as the kubelet does).
func registerNodes(ctx context.Context, insts []awsemu.Instance) ([]string, error) {
	names := make([]string, len(insts))
	err := parallel(len(insts), func(i int) error {
		name := insts[i].PrivateDNSName
		names[i] = name
		now := metav1.Now()
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name, corev1.LabelOSStable: "linux"}},
			Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: cloudproviderapi.TaintExternalCloudProvider, Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				LastHeartbeatTime: now, LastTransitionTime: now,
			}}},
		}
		if _, err := env.kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create node %s: %w", name, err)
		}
		return nil
	})
	return names, err
}

// setReady patches the Ready condition of the named Nodes, as the node
// lifecycle does when kubelets stop posting.
func setReady(ctx context.Context, names []string, status corev1.ConditionStatus) error {
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":%q,"reason":"BenchmarkSet","lastHeartbeatTime":%q,"lastTransitionTime":%q}]}}`,
		status, time.Now().UTC().Format(time.RFC3339), time.Now().UTC().Format(time.RFC3339))
	return parallel(len(names), func(i int) error {
		_, err := env.kube.CoreV1().Nodes().Patch(ctx, names[i], types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
		return err
	})
}

// tracker follows every Node through a watch: whether it is initialized
// (providerID set, uninitialized taint gone) and how many were deleted.
type tracker struct {
	mu      sync.Mutex
	init    map[string]bool
	ready   map[string]corev1.ConditionStatus
	deleted []string
}

func startTracker(ctx context.Context, kube kubernetes.Interface) (*tracker, error) {
	t := &tracker{init: map[string]bool{}, ready: map[string]corev1.ConditionStatus{}}
	factory := informers.NewSharedInformerFactory(kube, 0)
	inf := factory.Core().V1().Nodes().Informer()
	set := func(obj any) {
		if n, ok := obj.(*corev1.Node); ok {
			t.mu.Lock()
			t.init[n.Name] = initialized(n)
			t.ready[n.Name] = readyStatus(n)
			t.mu.Unlock()
		}
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if n, ok := obj.(*corev1.Node); ok {
				t.mu.Lock()
				delete(t.init, n.Name)
				delete(t.ready, n.Name)
				t.deleted = append(t.deleted, n.Name)
				t.mu.Unlock()
			}
		},
	})
	if err != nil {
		return nil, err
	}
	factory.Start(make(chan struct{})) // runs for the life of the test binary
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, fmt.Errorf("node informer did not sync")
	}
	return t, nil
}

// initializedCount says how many of names are initialized.
func (t *tracker) initializedCount(names []string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, name := range names {
		if t.init[name] {
			n++
		}
	}
	return n
}

// deletions returns the number of Node deletions seen so far.
func (t *tracker) deletions() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.deleted)
}

func (t *tracker) notReadyCount(names []string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, name := range names {
		if s, ok := t.ready[name]; ok && s != corev1.ConditionTrue {
			n++
		}
	}
	return n
}

func initialized(n *corev1.Node) bool {
	if n.Spec.ProviderID == "" {
		return false
	}
	for _, taint := range n.Spec.Taints {
		if taint.Key == cloudproviderapi.TaintExternalCloudProvider {
			return false
		}
	}
	return true
}

func readyStatus(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

// waitUntil polls cond every 50 ms and fails the benchmark after timeout.
func waitUntil(b *testing.B, timeout time.Duration, what string, cond func() bool) time.Duration {
	b.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			b.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}

// calls is a snapshot of the emulator's per-action counters.
type calls map[string]int

func countCalls() calls { return env.aws.CallCounts() }

// since returns the EC2 calls made after c: the total and a readable
// per-action breakdown of every service.
func (c calls) since() (ec2 int, breakdown string) {
	now := countCalls()
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(now)) {
		if d := now[k] - c[k]; d > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, d))
			if strings.HasPrefix(k, "ec2:") {
				ec2 += d
			}
		}
	}
	if len(parts) == 0 {
		return 0, "none"
	}
	return ec2, strings.Join(parts, " ")
}

// joinAll registers a Node for every base instance with ccm running and
// waits until all are initialized; it returns the wall time and the EC2
// calls it took.
func joinAll(b *testing.B) (time.Duration, int, string) {
	b.Helper()
	before := countCalls()
	start := time.Now()
	names, err := registerNodes(context.Background(), env.base)
	if err != nil {
		b.Fatal(err)
	}
	registered := time.Since(start)
	waitUntil(b, 5*time.Minute, fmt.Sprintf("%d nodes initialized", len(names)), func() bool {
		return env.nodes.initializedCount(names) == len(names)
	})
	elapsed := time.Since(start)
	n, breakdown := before.since()
	b.Logf("registered %d Nodes in %s (%d kubelet workers); all initialized after %s", len(names), registered.Round(time.Millisecond), kubeletWorkers, elapsed.Round(time.Millisecond))
	env.joined = true
	return elapsed, n, breakdown
}

// ensureJoined gives scenarios run on their own the joined cluster the
// join scenario leaves behind.
func ensureJoined(b *testing.B) {
	b.Helper()
	requireEnv(b)
	if env.joined {
		return
	}
	c := startCCM(b, "setup-join")
	joinAll(b)
	c.stop()
}

// ensureNotReady marks notReadyN of the cluster's Nodes NotReady, their
// instances still running, and waits until the watch shows it.
func ensureNotReady(b *testing.B) []string {
	b.Helper()
	ensureJoined(b)
	if env.notReady == nil {
		var names []string
		for _, in := range env.base[:min(notReadyN, len(env.base))] {
			names = append(names, in.PrivateDNSName)
		}
		if err := setReady(context.Background(), names, corev1.ConditionFalse); err != nil {
			b.Fatal(err)
		}
		env.notReady = names
	}
	waitUntil(b, time.Minute, "NotReady nodes seen", func() bool { return env.nodes.notReadyCount(env.notReady) == len(env.notReady) })
	return env.notReady
}
