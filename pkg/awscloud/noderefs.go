package awscloud

import (
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/internal/instances"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
)

// nodeRef is how a Node names its instance.
type nodeRef struct {
	// providerID is the spec.providerID the ref was derived from.
	providerID string
	// instanceID comes from spec.providerID or, without one, from a
	// resource-based node name (i-...).
	instanceID string
	// err is set when spec.providerID is not an AWS providerID.
	err error
}

// byName: the Node has neither, so its name is taken as the instance's
// private DNS name.
func (r nodeRef) byName() bool { return r.instanceID == "" && r.err == nil }

func parseNodeRef(n *corev1.Node) nodeRef {
	ref := nodeRef{providerID: n.Spec.ProviderID}
	if n.Spec.ProviderID != "" {
		id, err := providerid.Parse(n.Spec.ProviderID)
		ref.instanceID, ref.err = id.InstanceID, err
		return ref
	}
	ref.instanceID, _ = providerid.InstanceIDFromNodeName(n.Name)
	return ref
}

// nodeRefs remembers each Node's ref by node name, so a Node's providerID is
// parsed once (and again only when it changes), not by every controller
// call and again for the view's candidates at every lookup.
type nodeRefs struct {
	mu     sync.Mutex
	byNode map[string]nodeRef
}

func newNodeRefs() *nodeRefs { return &nodeRefs{byNode: map[string]nodeRef{}} }

// of returns n's ref.
func (r *nodeRefs) of(n *corev1.Node) nodeRef {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ofLocked(n)
}

func (r *nodeRefs) ofLocked(n *corev1.Node) nodeRef {
	ref, ok := r.byNode[n.Name]
	if !ok || ref.providerID != n.Spec.ProviderID {
		ref = parseNodeRef(n)
		r.byNode[n.Name] = ref
	}
	return ref
}

// candidates returns what nodes will ask the view about, and forgets the
// refs of Nodes not among them.
func (r *nodeRefs) candidates(nodes []*corev1.Node) instances.Candidates {
	var out instances.Candidates
	r.mu.Lock()
	defer r.mu.Unlock()
	keep := make(map[string]nodeRef, len(nodes))
	for _, n := range nodes {
		ref := r.ofLocked(n)
		keep[n.Name] = ref
		switch {
		case ref.instanceID != "":
			out.IDs = append(out.IDs, ref.instanceID)
		case ref.byName():
			out.Names = append(out.Names, n.Name)
		}
	}
	r.byNode = keep
	return out
}
