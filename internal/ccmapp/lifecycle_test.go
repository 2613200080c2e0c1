package ccmapp

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/cloud-provider/controllers/nodelifecycle"
	"k8s.io/cloud-provider/names"
)

func lifecycleTestNode(name string, ready *corev1.ConditionStatus, taints ...corev1.Taint) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Taints: taints}}
	if ready != nil {
		n.Status.Conditions = []corev1.NodeCondition{
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
			{Type: corev1.NodeReady, Status: *ready},
		}
	}
	return n
}

func TestLifecycleListerListsWhatAPassActsOn(t *testing.T) {
	status := func(s corev1.ConditionStatus) *corev1.ConditionStatus { return &s }
	shutdown := *nodelifecycle.ShutdownTaint
	shutdownOtherValue := corev1.Taint{Key: shutdown.Key, Value: "x", Effect: shutdown.Effect} // the library matches key and effect
	other := corev1.Taint{Key: "example.com/other", Effect: corev1.TaintEffectNoSchedule}
	nodes := []*corev1.Node{
		lifecycleTestNode("ready", status(corev1.ConditionTrue)),
		lifecycleTestNode("ready-other-taint", status(corev1.ConditionTrue), other),
		lifecycleTestNode("ready-shutdown-taint", status(corev1.ConditionTrue), other, shutdown),
		lifecycleTestNode("ready-shutdown-taint-other-value", status(corev1.ConditionTrue), shutdownOtherValue),
		lifecycleTestNode("not-ready", status(corev1.ConditionFalse)),
		lifecycleTestNode("unknown", status(corev1.ConditionUnknown)),
		lifecycleTestNode("no-ready-condition", nil),
	}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, n := range nodes {
		if err := idx.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	l := lifecycleNodeLister{corelisters.NewNodeLister(idx)}
	got, err := l.List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range got {
		names = append(names, n.Name)
	}
	slices.Sort(names)
	want := []string{"no-ready-condition", "not-ready", "ready-shutdown-taint", "ready-shutdown-taint-other-value", "unknown"}
	if !slices.Equal(names, want) {
		t.Errorf("listed %q, want %q", names, want)
	}
	// Get is not filtered: a Node the pass skips is still there.
	if n, err := l.Get("ready"); err != nil || n.Name != "ready" {
		t.Errorf("Get(ready) = %v, %v", n, err)
	}
}

func TestLifecycleControllerKeepsTheLibrarysIdentity(t *testing.T) {
	out := controllerConstructors(nil, nil)
	got, ok := out[names.CloudNodeLifecycleController]
	if !ok {
		t.Fatalf("no %s constructor", names.CloudNodeLifecycleController)
	}
	if got.InitContext.ClientName != "node-controller" {
		t.Errorf("client name %q, want the library's node-controller (its RBAC)", got.InitContext.ClientName)
	}
	if got.Constructor == nil {
		t.Error("no constructor")
	}
}
