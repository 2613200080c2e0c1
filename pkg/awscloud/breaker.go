package awscloud

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/awsccmctl/awsccmctl/internal/instances"
)

// The node deletion breaker. InstanceExists reports a missing instance as
// gone only with evidence (missing from successful lookups twice over the
// grace period), but that evidence is the same for one lost instance and for
// a CCM that looks in the wrong place: a cloud config naming another region
// or VPC, or credentials of another account, make every lookup succeed and
// find nothing, and after the grace period every NotReady Node would go.
// The breaker tells the two apart by how many Nodes are missing at once.

// newBreaker builds the breaker over the cloud's Node lister and view.
func (c *Cloud) newBreaker(m *instances.Metrics) *instances.Breaker {
	return instances.NewBreaker(instances.BreakerOptions{
		Max:     c.flags.MaxAbsentNodeDeletions,
		Window:  c.flags.AbsenceGracePeriod,
		Reuse:   c.flags.InstanceCacheMaxAge,
		Census:  c.census,
		Clock:   c.clock,
		Metrics: m,
	})
}

// errNoNodeLister: without the Node informer nothing can be counted, and
// uncounted means nothing may be deleted.
var errNoNodeLister = errors.New("the Node informer is not set up")

// census counts the cluster's Nodes and those whose instances successful
// lookups miss now. It asks the view about every Node with an instance ID,
// from memory where it is fresh, so a CCM that only looked at NotReady Nodes
// so far still counts the Ready ones that are just as missing. Nodes found
// by private DNS name are never reported missing (a failed name lookup is
// an error), so they are not counted.
func (c *Cloud) census(ctx context.Context) (instances.Census, error) {
	if c.nodes == nil {
		return instances.Census{}, errNoNodeLister
	}
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return instances.Census{}, fmt.Errorf("list Nodes: %w", err)
	}
	idOf := make(map[string]string, len(nodes))
	ids := make([]string, 0, len(nodes))
	for _, n := range nodes {
		if ref := c.refs.of(n); ref.instanceID != "" {
			idOf[n.Name] = ref.instanceID
			ids = append(ids, ref.instanceID)
		}
	}
	obs, err := c.view.ObserveIDs(ctx, ids)
	if err != nil {
		return instances.Census{}, err
	}
	out := instances.Census{Nodes: len(nodes)}
	for name, id := range idOf {
		if o := obs[id]; o.Instance == nil && o.AbsentChecks > 0 {
			out.Missing = append(out.Missing, name)
		}
	}
	return out, nil
}

// releaseMissing asks the breaker whether node, whose instance id has been
// missing for missingFor, may be reported gone. When it may not, the Node
// gets a Warning event saying what to check.
func (i *instancesV2) releaseMissing(ctx context.Context, node *corev1.Node, id string, missingFor time.Duration) (bool, error) {
	v, err := i.c.breaker.Release(ctx, node.Name)
	if err != nil {
		return false, fmt.Errorf("instance %s of node %s has been missing for %s, but the CCM could not check that few others are: %w",
			id, node.Name, missingFor.Round(time.Second), err)
	}
	i.c.logBreaker(v)
	if v.Release {
		return true, nil
	}
	klog.V(2).InfoS("Keeping a Node whose instance is missing from EC2: too many instances are missing at once",
		"node", klog.KObj(node), "instance", id, "missingFor", missingFor, "missingNodes", v.Missing, "nodes", v.Nodes, "bound", v.Bound)
	i.c.events.Eventf(node, corev1.EventTypeWarning, ReasonNodeDeletionWithheld,
		"EC2 instance %s has been missing from EC2 for %s, but so are the instances of %d of %d Nodes, more than the %d the CCM deletes "+
			"within one grace period (--aws-max-absent-node-deletions): it suspects its own view of AWS and keeps the Node. "+
			"Check the cloud config's Region (%s) and VPC (%s), and that the CCM's credentials are of the cluster's account (aws sts get-caller-identity). "+
			"If the instances are really gone, delete their Nodes (kubectl delete node).",
		id, missingFor.Round(time.Second), v.Missing, v.Nodes, v.Bound, i.c.env.Region, i.c.env.VPCID)
	return false, nil
}

// recheckBreaker lets a tripped breaker reset once the instances are back,
// even when no Node is up for deletion; free while it is closed.
func (c *Cloud) recheckBreaker(ctx context.Context) {
	v, err := c.breaker.Recheck(ctx)
	if err != nil {
		klog.V(2).InfoS("Cannot recount the Nodes whose instances are missing; the node deletion breaker stays tripped", "err", err)
		return
	}
	c.logBreaker(v)
}

// logBreaker logs the breaker's transitions, once each.
func (c *Cloud) logBreaker(v instances.Verdict) {
	switch {
	case v.Tripped:
		klog.ErrorS(nil, "Node deletion breaker tripped: too many Nodes' instances are missing from EC2 at once, so the CCM deletes none of them. "+
			"EC2 answers but does not list the cluster's instances: check the cloud config's Region and VPC, and that the CCM's credentials "+
			"are of the account that runs the cluster (aws sts get-caller-identity)",
			"missingNodes", v.Missing, "nodes", v.Nodes, "bound", v.Bound, "region", c.env.Region, "vpc", c.env.VPCID, "clusterID", c.env.ClusterID)
	case v.Reset:
		klog.InfoS("Node deletion breaker reset: few enough Nodes' instances are missing from EC2 again",
			"missingNodes", v.Missing, "nodes", v.Nodes, "bound", v.Bound)
	}
}
