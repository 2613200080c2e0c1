package awscloud

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/instances"
)

func refNode(name, providerID string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
}

func TestNodeRefsCandidatesAndReuse(t *testing.T) {
	r := newNodeRefs()
	nodes := []*corev1.Node{
		refNode("ip-10-0-0-1.ec2.internal", "aws:///us-east-1a/i-00000001"),
		refNode("i-00000002.us-east-1.compute.internal", ""),
		refNode("ip-10-0-0-3.ec2.internal", ""),
		refNode("fargate-1", "aws:///us-east-1a/fargate-10.0.0.4"),
	}
	got := r.candidates(nodes)
	want := instances.Candidates{IDs: []string{"i-00000001", "i-00000002"}, Names: []string{"ip-10-0-0-3.ec2.internal"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("candidates = %+v, want %+v", got, want)
	}
	if ref := r.of(nodes[3]); ref.err == nil || ref.instanceID != "" {
		t.Fatalf("invalid providerID: ref %+v, want an error", ref)
	}

	// A ref is reused while the providerID is the same, derived again when
	// it changes, and forgotten with its Node.
	r.mu.Lock()
	r.byNode[nodes[0].Name] = nodeRef{providerID: nodes[0].Spec.ProviderID, instanceID: "i-0000000a"}
	r.mu.Unlock()
	if ref := r.of(nodes[0]); ref.instanceID != "i-0000000a" {
		t.Fatalf("ref of an unchanged Node was derived again: %+v", ref)
	}
	changed := refNode(nodes[0].Name, "aws:///us-east-1b/i-0000000b")
	if ref := r.of(changed); ref.instanceID != "i-0000000b" {
		t.Fatalf("ref after the providerID changed = %+v", ref)
	}
	if got := r.candidates([]*corev1.Node{changed}); !reflect.DeepEqual(got, instances.Candidates{IDs: []string{"i-0000000b"}}) {
		t.Fatalf("candidates = %+v", got)
	}
	if len(r.byNode) != 1 {
		t.Fatalf("refs of deleted Nodes are kept: %v", r.byNode)
	}
}
