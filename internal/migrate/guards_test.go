package migrate

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// Each guard breaks on its own change, and an intact cluster (even with a
// new Node or Service) passes.
func TestGuards(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, cs *fake.Clientset)
		want   string
	}{
		{"intact, with a new Node and Service", func(t *testing.T, cs *fake.Clientset) {
			mustCreate(t, cs, node("w-9", false))
			if _, err := cs.CoreV1().Services("default").Create(ctx, lbService("new", ""), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"node deleted", func(t *testing.T, cs *fake.Clientset) {
			if err := cs.CoreV1().Nodes().Delete(ctx, "w-1", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}, "Node w-1 was deleted"},
		{"providerID changed", func(t *testing.T, cs *fake.Clientset) {
			updateNode(t, cs, "w-1", func(n *corev1.Node) { n.Spec.ProviderID = "aws:///us-east-1b/i-other" })
		}, `Node w-1's providerID changed from "aws:///us-east-1a/i-w-1" to "aws:///us-east-1b/i-other"`},
		{"re-tainted uninitialized", func(t *testing.T, cs *fake.Clientset) {
			updateNode(t, cs, "cp-1", func(n *corev1.Node) {
				n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: taintUninitialized, Effect: corev1.TaintEffectNoSchedule})
			})
		}, "Node cp-1 is tainted node.cloudprovider.kubernetes.io/uninitialized again"},
		{"load balancer replaced", func(t *testing.T, cs *fake.Clientset) {
			s, _ := cs.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
			s.Status.LoadBalancer.Ingress[0].Hostname = "new-lb.elb.amazonaws.com"
			if _, err := cs.CoreV1().Services("default").UpdateStatus(ctx, s, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}, `Service default/web's load balancer changed from "web-lb.elb.amazonaws.com" to "new-lb.elb.amazonaws.com"`},
		{"an address changed", func(t *testing.T, cs *fake.Clientset) {
			updateNode(t, cs, "w-1", func(n *corev1.Node) { n.Status.Addresses[0].Address = "10.0.9.9" })
		}, "Node w-1's addresses or cloud labels changed since verify-cluster; now addresses [Hostname=w-1.ec2.internal InternalDNS=w-1.ec2.internal InternalIP=10.0.2.2 InternalIP=10.0.9.9]"},
		{"the first InternalIP changed (a secondary one first)", func(t *testing.T, cs *fake.Clientset) {
			updateNode(t, cs, "w-1", func(n *corev1.Node) { a := n.Status.Addresses; a[0], a[1] = a[1], a[0] })
		}, "first of each type [Hostname=w-1.ec2.internal InternalDNS=w-1.ec2.internal InternalIP=10.0.2.2]"},
		{"Hostname and InternalDNS swapped: no client reads that order", func(t *testing.T, cs *fake.Clientset) {
			updateNode(t, cs, "w-1", func(n *corev1.Node) { a := n.Status.Addresses; a[2], a[3] = a[3], a[2] })
		}, ""},
		{"the hostname label changed (a kubelet restarted with --hostname-override)", func(t *testing.T, cs *fake.Clientset) {
			updateNode(t, cs, "w-1", func(n *corev1.Node) { n.Labels[corev1.LabelHostname] = "w-1.ec2.internal" })
		}, "kubernetes.io/hostname=w-1.ec2.internal]"},
		{"the zone label removed", func(t *testing.T, cs *fake.Clientset) {
			updateNode(t, cs, "w-1", func(n *corev1.Node) { delete(n.Labels, corev1.LabelTopologyZone) })
		}, "topology.kubernetes.io/zone=(absent)"},
		{"service deleted", func(t *testing.T, cs *fake.Clientset) {
			if err := cs.CoreV1().Services("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}, "Service default/web was deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset(node("cp-1", true), guardedNode("w-1"), lbService("web", "web-lb.elb.amazonaws.com"))
			b, err := takeBaseline(ctx, cs)
			if err != nil {
				t.Fatal(err)
			}
			w := watchGuards(t, cs)
			if err := w.check(ctx, b, nil, time.Now()); err != nil {
				t.Fatalf("untouched cluster: %v", err)
			}
			tc.change(t, cs)
			caughtUp(t, w, cs)
			wantGuard(t, w.check(ctx, b, nil, time.Now()), tc.want)
		})
	}
}

func mustCreate(t *testing.T, cs *fake.Clientset, n *corev1.Node) {
	t.Helper()
	if _, err := cs.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func updateNode(t *testing.T, cs *fake.Clientset, name string, f func(*corev1.Node)) {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f(n)
	if _, err := cs.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// guardedNode is a worker as an in-tree kubelet registers it: two private
// addresses, its DNS name as InternalDNS and Hostname, the cloud labels,
// Ready.
func guardedNode(name string) *corev1.Node {
	n := node(name, false)
	n.Labels[corev1.LabelHostname] = "w-1"
	n.Labels[corev1.LabelTopologyZone] = "us-east-1a"
	n.Labels[corev1.LabelTopologyRegion] = "us-east-1"
	n.Labels[corev1.LabelInstanceTypeStable] = "m5.large"
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.2.1"}, {Type: corev1.NodeInternalIP, Address: "10.0.2.2"},
		{Type: corev1.NodeInternalDNS, Address: name + ".ec2.internal"}, {Type: corev1.NodeHostName, Address: name + ".ec2.internal"}}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	return n
}

// TestReadyGuard: a Node whose kubelet the run restarts may be not Ready
// up to notReadyBound; past it the run stops. A Node the run does not
// restart, or one not Ready at the baseline, is not held to it.
func TestReadyGuard(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	notReadySince := func(since time.Duration) func(*corev1.Node) {
		return func(n *corev1.Node) {
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown",
				Message: "Kubelet stopped posting node status.", LastTransitionTime: metav1.NewTime(now.Add(-since))}}
		}
	}
	for _, tc := range []struct {
		name       string
		restarting map[string]bool
		change     func(*corev1.Node)
		wasReady   bool
		want       string
	}{
		{"restarting, not Ready for a minute: within the bound", map[string]bool{"w-1": true}, notReadySince(time.Minute), true, ""},
		{"restarting, not Ready past the bound", map[string]bool{"w-1": true}, notReadySince(2 * time.Minute), true,
			"Node w-1 has not been Ready for 2m0s (over 1m30s) since its kubelet step began: Ready=Unknown (NodeStatusUnknown: Kubelet stopped posting node status.)"},
		{"not restarted by the run", map[string]bool{"w-2": true}, notReadySince(time.Hour), true, ""},
		{"not Ready at the baseline already", map[string]bool{"w-1": true}, notReadySince(time.Hour), false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := guardedNode("w-1")
			if !tc.wasReady {
				notReadySince(time.Hour)(w)
			}
			cs := fake.NewClientset(w)
			b, err := takeBaseline(ctx, cs)
			if err != nil {
				t.Fatal(err)
			}
			updateNode(t, cs, "w-1", tc.change)
			gw := watchGuards(t, cs)
			wantGuard(t, gw.check(ctx, b, tc.restarting, now), tc.want)
		})
	}
}

// wantGuard: err is nil when want is empty, else a GuardError saying want.
func wantGuard(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("guards broke: %v", err)
		}
		return
	}
	var ge *GuardError
	if !errors.As(err, &ge) || !strings.Contains(err.Error(), want) {
		t.Fatalf("guards = %v, want a GuardError with %q", err, want)
	}
}

// The guards list Nodes and Services once for the run and then only
// watch them, however many checks there are: a list of every Node at
// every check is what 5,000 Nodes cannot afford.
func TestGuardsListOnce(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(node("cp-1", true), guardedNode("w-1"), lbService("web", "web-lb.elb.amazonaws.com"))
	b, err := takeBaseline(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	cs.ClearActions()
	w := watchGuards(t, cs)
	for range 5 {
		if err := w.check(ctx, b, nil, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	verbs := map[string]int{}
	for _, a := range cs.Actions() {
		verbs[a.GetVerb()+" "+a.GetResource().Resource]++
	}
	want := map[string]int{"list nodes": 1, "watch nodes": 1, "list services": 1, "watch services": 1}
	if !maps.Equal(verbs, want) {
		t.Errorf("five checks sent %v, want %v", verbs, want)
	}
}

// The watch keeps of each Node only what the guards compare.
func TestGuardWatchKeepsWhatTheGuardsRead(t *testing.T) {
	n := guardedNode("w-2")
	n.Labels["team"] = "shop"
	n.Annotations = map[string]string{"node.alpha.kubernetes.io/ttl": "0"}
	n.Status.Images = []corev1.ContainerImage{{Names: []string{"registry.k8s.io/pause:3.9"}, SizeBytes: 1}}
	n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse})
	got, err := guardedNodeFields(n)
	if err != nil {
		t.Fatal(err)
	}
	k := got.(*corev1.Node)
	if nodeFieldsDigest(k) != nodeFieldsDigest(n) || k.Spec.ProviderID != n.Spec.ProviderID || isReady(k) != isReady(n) {
		t.Errorf("kept %s, providerID %q, Ready %v; want %s, %q, %v", nodeFields(k), k.Spec.ProviderID, isReady(k), nodeFields(n), n.Spec.ProviderID, isReady(n))
	}
	if len(k.Status.Images) != 0 || len(k.Annotations) != 0 || k.Labels["team"] != "" || len(k.Status.Conditions) != 1 {
		t.Errorf("kept more than the guards read: %+v", k)
	}
}

// watchGuards starts the guards' watch on cs for the test.
func watchGuards(t *testing.T, cs *fake.Clientset) *guardWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := startGuardWatch(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// caughtUp waits until the watch holds every Node and Service as cs has
// them (as the watch keeps them), so that a check sees a change.
func caughtUp(t *testing.T, w *guardWatch, cs *fake.Clientset) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svcs, err := cs.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var want []any
		for i := range nodes.Items {
			n, _ := guardedNodeFields(&nodes.Items[i])
			want = append(want, n)
		}
		for i := range svcs.Items {
			s, _ := guardedServiceFields(&svcs.Items[i])
			want = append(want, s)
		}
		got := append(w.nodes.GetStore().List(), w.services.GetStore().List()...)
		if len(got) == len(want) && all(want, func(o any) bool {
			return slices.ContainsFunc(got, func(g any) bool { return equality.Semantic.DeepEqual(g, o) })
		}) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the guards' watch did not catch up with the cluster within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func all(xs []any, f func(any) bool) bool {
	for _, x := range xs {
		if !f(x) {
			return false
		}
	}
	return true
}
