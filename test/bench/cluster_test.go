//go:build linux

package bench

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	cloudproviderapi "k8s.io/cloud-provider/api"

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
// (providerID set, uninitialized taint gone), when the watch first saw it
// and when it first saw it initialized, and how many were deleted.
type tracker struct {
	mu      sync.Mutex
	nodes   map[string]*nodeState
	deleted []string
}

type nodeState struct {
	init   bool
	ready  corev1.ConditionStatus
	routed bool      // NetworkUnavailable=False, reason RouteCreated (the route controller's)
	seen   time.Time // the watch's first event of the Node: its registration
	initAt time.Time // the first event that showed it initialized
}

func startTracker(ctx context.Context, kube kubernetes.Interface) (*tracker, error) {
	t := &tracker{nodes: map[string]*nodeState{}}
	factory := informers.NewSharedInformerFactory(kube, 0)
	inf := factory.Core().V1().Nodes().Informer()
	set := func(obj any) {
		if n, ok := obj.(*corev1.Node); ok {
			now := time.Now()
			t.mu.Lock()
			s := t.nodes[n.Name]
			if s == nil {
				s = &nodeState{seen: now}
				t.nodes[n.Name] = s
			}
			s.init, s.ready, s.routed = initialized(n), readyStatus(n), routed(n)
			if s.init && s.initAt.IsZero() {
				s.initAt = now
			}
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
				delete(t.nodes, n.Name)
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
		if s := t.nodes[name]; s != nil && s.init {
			n++
		}
	}
	return n
}

// routedCount says how many of names the route controller marked routed.
func (t *tracker) routedCount(names []string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, name := range names {
		if s := t.nodes[name]; s != nil && s.routed {
			n++
		}
	}
	return n
}

// present says how many of names exist.
func (t *tracker) present(names []string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, name := range names {
		if t.nodes[name] != nil {
			n++
		}
	}
	return n
}

// latencies returns, for each of names that was initialized, the time from
// the watch's first sight of it to its first sight initialized.
func (t *tracker) latencies(names []string) []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]time.Duration, 0, len(names))
	for _, name := range names {
		if s := t.nodes[name]; s != nil && !s.initAt.IsZero() {
			out = append(out, s.initAt.Sub(s.seen))
		}
	}
	return out
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
		if s := t.nodes[name]; s != nil && s.ready != corev1.ConditionTrue {
			n++
		}
	}
	return n
}

// count is the number of Nodes the watch knows.
func (t *tracker) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.nodes)
}

// percentile is the nearest-rank p-th percentile (0 < p <= 100) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// deleteNodes deletes the named Nodes and waits until the watch saw them
// go.
func deleteNodes(ctx context.Context, names []string) error {
	err := parallel(len(names), func(i int) error {
		err := env.kube.CoreV1().Nodes().Delete(ctx, names[i], metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete node %s: %w", names[i], err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for env.nodes.present(names) > 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d deleted Nodes still seen after 2 minutes", env.nodes.present(names), len(names))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
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

func routed(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeNetworkUnavailable {
			return c.Status == corev1.ConditionFalse && c.Reason == "RouteCreated"
		}
	}
	return false
}

func nodeNames(insts []awsemu.Instance) []string {
	out := make([]string, len(insts))
	for i, in := range insts {
		out[i] = in.PrivateDNSName
	}
	return out
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

// joinTimeout bounds a join of n Nodes: the production defaults initialize
// about 7 Nodes a second.
func joinTimeout(n int) time.Duration { return 2*time.Minute + time.Duration(n)*300*time.Millisecond }

// join is what joinAll measured.
type join struct {
	elapsed    time.Duration // first create to all initialized
	registered time.Duration // first create to last create
	ec2        int           // EC2 calls from the first create to all initialized
	breakdown  string
	latencies  []time.Duration // per Node: registration to initialized
}

// joinAll registers a Node for every base instance with binary's CCM
// running and waits until all are initialized, as binary writes them.
func joinAll(b *testing.B, binary string) join {
	b.Helper()
	before := countCalls()
	start := time.Now()
	names, err := registerNodes(context.Background(), env.base)
	if err != nil {
		b.Fatal(err)
	}
	registered := time.Since(start)
	waitUntil(b, joinTimeout(len(names)), fmt.Sprintf("%d nodes initialized", len(names)), func() bool {
		return env.nodes.initializedCount(names) == len(names)
	})
	elapsed := time.Since(start)
	n, breakdown := before.since()
	b.Logf("registered %d Nodes in %s (%d kubelet workers); all initialized after %s", len(names), registered.Round(time.Millisecond), kubeletWorkers, elapsed.Round(time.Millisecond))
	env.joined, env.nodesWrittenBy = true, binary
	return join{elapsed: elapsed, registered: registered, ec2: n, breakdown: breakdown, latencies: env.nodes.latencies(names)}
}

// ensureJoined gives scenarios run on their own the joined cluster the
// join scenario leaves behind (joined by this CCM, not measured).
func ensureJoined(b *testing.B) {
	b.Helper()
	requireEnv(b)
	if env.joined {
		return
	}
	r := &result{group: env.group, scenario: "setup-join", binary: thisBinary, bin: env.binaries[0]} // not reported
	c := startCCM(b, r, ccmArgs{})
	joinAll(b, r.binary)
	c.stop()
}

// ensureNotReady marks notReadyN of the cluster's Nodes NotReady, their
// instances still running, and waits until the watch shows it.
func ensureNotReady(b *testing.B) []string {
	b.Helper()
	ensureJoined(b)
	if env.notReady == nil {
		names := nodeNames(env.base[:min(notReadyN, len(env.base))])
		if err := setReady(context.Background(), names, corev1.ConditionFalse); err != nil {
			b.Fatal(err)
		}
		env.notReady = names
	}
	waitUntil(b, time.Minute, "NotReady nodes seen", func() bool { return env.nodes.notReadyCount(env.notReady) == len(env.notReady) })
	return env.notReady
}
