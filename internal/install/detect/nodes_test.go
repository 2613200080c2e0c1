package detect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

// nodeLists records the Node lists a fake clientset is asked for.
type nodeLists struct{ opts []metav1.ListOptions }

func (l *nodeLists) record(cs *fake.Clientset) {
	cs.PrependReactor("list", "nodes", func(a clienttesting.Action) (bool, runtime.Object, error) {
		l.opts = append(l.opts, a.(clienttesting.ListActionImpl).GetListOptions())
		return false, nil, nil
	})
}

// sizeOnly is a Detector over cs whose cloud config names the region and
// cluster ID, so that it only checks the version and sizes.
func sizeOnly(cs *fake.Clientset) (Detector, *install.Values, *bytes.Buffer) {
	cs.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.37.1"}
	var log bytes.Buffer
	v := &install.Values{CloudConfig: &cloudconfig.Config{Global: cloudconfig.Global{Region: "us-east-1", KubernetesClusterID: "c"}}}
	v.Default()
	return Detector{Kube: cs, Log: &log}, v, &log
}

func nodes(n int) []runtime.Object {
	out := make([]runtime.Object, n)
	for i := range out {
		out[i] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i)}}
	}
	return out
}

// TestExpectedNodesCounted: the count (the fake clientset ignores limits and
// sets no remaining count, so this is the paging path's first page) sizes
// the CCM, at least at the default.
func TestExpectedNodesCounted(t *testing.T) {
	cs := fake.NewClientset(nodes(3)...)
	var lists nodeLists
	lists.record(cs)
	d, v, log := sizeOnly(cs)
	if err := d.Detect(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	if v.ExpectedNodes == nil || *v.ExpectedNodes != install.DefaultExpectedNodes {
		t.Fatalf("ExpectedNodes = %v, want %d", v.ExpectedNodes, install.DefaultExpectedNodes)
	}
	if want := fmt.Sprintf("expected Nodes %d: 3 Nodes counted", install.DefaultExpectedNodes); !strings.Contains(log.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, log)
	}
	if len(lists.opts) != 1 || lists.opts[0].Limit != 1 {
		t.Errorf("lists %+v, want one with limit 1", lists.opts)
	}
}

// TestExpectedNodesGivenWins: a given size is kept and nothing is counted.
func TestExpectedNodesGivenWins(t *testing.T) {
	cs := fake.NewClientset(nodes(3)...)
	var lists nodeLists
	lists.record(cs)
	d, v, log := sizeOnly(cs)
	given := 50
	v.ExpectedNodes = &given
	if err := d.Detect(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	if *v.ExpectedNodes != 50 || len(lists.opts) != 0 {
		t.Errorf("ExpectedNodes %d after %d lists, want 50 and none", *v.ExpectedNodes, len(lists.opts))
	}
	if !strings.Contains(log.String(), "expected Nodes 50: as given") {
		t.Errorf("log:\n%s", log)
	}
}

// TestExpectedNodesNotCounted: a failed count leaves the default size and
// says how to set it; it does not fail the install.
func TestExpectedNodesNotCounted(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependReactor("list", "nodes", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("nodes is forbidden")
	})
	d, v, log := sizeOnly(cs)
	if err := d.Detect(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	if v.ExpectedNodes != nil || v.SizedFor() != install.DefaultExpectedNodes {
		t.Errorf("ExpectedNodes %v, want unset (the default)", v.ExpectedNodes)
	}
	if !strings.Contains(log.String(), "expected Nodes: not counted (list Nodes: nodes is forbidden)") || !strings.Contains(log.String(), "--expected-nodes") {
		t.Errorf("log:\n%s", log)
	}
}

// TestCountNodes: remainingItemCount answers in one call; without it the
// Nodes are paged through.
func TestCountNodes(t *testing.T) {
	t.Run("remaining count", func(t *testing.T) {
		cs := fake.NewClientset()
		calls := 0
		cs.PrependReactor("list", "nodes", func(a clienttesting.Action) (bool, runtime.Object, error) {
			calls++
			rest := int64(4320)
			return true, &corev1.NodeList{ListMeta: metav1.ListMeta{RemainingItemCount: &rest, Continue: "x"}, Items: []corev1.Node{{}}}, nil
		})
		n, err := CountNodes(context.Background(), cs)
		if err != nil || n != 4321 || calls != 1 {
			t.Errorf("CountNodes = %d, %v after %d calls; want 4321 after 1", n, err, calls)
		}
		if got := install.ExpectedNodesForCount(n); got != 5000 {
			t.Errorf("sized for %d, want 5000", got)
		}
	})
	t.Run("pages", func(t *testing.T) {
		cs := fake.NewClientset()
		var seen []metav1.ListOptions
		cs.PrependReactor("list", "nodes", func(a clienttesting.Action) (bool, runtime.Object, error) {
			o := a.(clienttesting.ListActionImpl).GetListOptions()
			seen = append(seen, o)
			page := map[string]struct {
				items int
				next  string
			}{"": {1, "p2"}, "p2": {500, "p3"}, "p3": {120, ""}}[o.Continue]
			return true, &corev1.NodeList{ListMeta: metav1.ListMeta{Continue: page.next}, Items: make([]corev1.Node, page.items)}, nil
		})
		n, err := CountNodes(context.Background(), cs)
		if err != nil || n != 621 {
			t.Errorf("CountNodes = %d, %v; want 621", n, err)
		}
		if len(seen) != 3 || seen[0].Limit != 1 || seen[1].Limit != countPage || seen[2].Continue != "p3" {
			t.Errorf("lists %+v", seen)
		}
	})
}

// TestCountNodesOnTheAPIServer: a real kube-apiserver answers the limit-1
// List with remainingItemCount, so the count costs one List of one Node.
func TestCountNodesOnTheAPIServer(t *testing.T) {
	cp := testbed.Get(t)
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	before, err := CountNodes(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	const add = 7
	for i := range add {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("count-%d", i)}}
		if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{}) })
	}
	l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 || l.RemainingItemCount == nil {
		t.Fatalf("a limit-1 List returned %d Nodes and remainingItemCount %v; CountNodes would page", len(l.Items), l.RemainingItemCount)
	}
	if n, err := CountNodes(ctx, cs); err != nil || n != before+add {
		t.Errorf("CountNodes = %d, %v; want %d", n, err, before+add)
	}
}
