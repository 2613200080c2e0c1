package tagging

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/instances"
)

// sync tags and untags the instances of batch; the error of each item that
// must be retried is in the map.
func (c *Controller) sync(ctx context.Context, batch []item) map[item]error {
	errs := map[item]error{}
	var adds, removes []item
	for _, it := range batch {
		if it.remove {
			removes = append(removes, it)
		} else {
			adds = append(adds, it)
		}
	}
	// Removals first: a Node deleted and registered again for the same
	// instance within one batch ends tagged.
	c.untag(ctx, removes, errs)
	c.tag(ctx, adds, errs)
	return errs
}

// tag puts the tags on the instances of the Nodes of adds that need them
// and labels the Nodes.
func (c *Controller) tag(ctx context.Context, adds []item, errs map[item]error) {
	nodes := map[string]*corev1.Node{} // by instance ID
	byID := map[string]item{}
	for _, it := range adds {
		node, err := c.nodes.Get(it.node)
		if apierrors.IsNotFound(err) {
			continue // deleted meanwhile: its removal is queued
		}
		if err != nil {
			errs[it] = err
			continue
		}
		id := instanceID(node)
		if id == "" || !c.needsTags(node) {
			continue
		}
		nodes[id], byID[id] = node, it
	}
	if len(nodes) == 0 {
		return
	}
	ids := sortedKeys(nodes)
	// The view answers from memory when the cloud node controller has just
	// looked at these instances (it sets the providerID this controller
	// waits for), else with one call per 1,000 cluster instances. It spares
	// CreateTags for instances that already carry the tags (a launch
	// template's, or a previous run's) and for terminated ones.
	obs, err := c.cfg.Instances.ObserveIDs(ctx, ids)
	if err != nil {
		// Without the view an unknown or foreign instance would fail the
		// call of all the others; EC2 answering no DescribeInstances is
		// unlikely to answer CreateTags either. Retry later.
		for _, id := range ids {
			errs[byID[id]] = fmt.Errorf("look up instance %s of Node %s: %w", id, nodes[id].Name, err)
		}
		return
	}
	var toTag, done []string
	m := c.cfg.Metrics
	for _, id := range ids {
		o, known := obs[id]
		switch {
		case known && o.Instance != nil && o.Instance.Terminated():
			klog.V(2).InfoS("Not tagging a terminated instance", "node", klog.KObj(nodes[id]), "instance", id)
			m.node("tag", outcomeTerminated, 1)
		case known && o.Instance != nil && o.Instance.HasTags(c.cfg.Tags):
			done = append(done, id)
			m.node("tag", outcomeAlreadyTagged, 1)
		default:
			toTag = append(toTag, id)
		}
	}
	res := c.applyGrouped(ctx, toTag, obs, func(ctx context.Context, ids []string) error {
		_, err := c.cfg.EC2.CreateTags(ctx, &ec2.CreateTagsInput{Resources: ids, Tags: ec2Tags(c.cfg.Tags, c.keys)})
		return err
	})
	tagged := len(toTag) - len(res.gone) - len(res.refused) - len(res.failed)
	klog.V(2).InfoS("Tagged instances", "nodes", len(nodes), "alreadyTagged", len(done), "tagged", tagged,
		"gone", len(res.gone), "refused", len(res.refused), "failed", len(res.failed), "calls", res.calls)
	c.count("tag", outcomeTagged, tagged, res)
	for _, id := range toTag {
		node, it := nodes[id], byID[id]
		switch {
		case res.gone[id]:
			if age := c.cfg.Clock.Since(node.CreationTimestamp.Time); age < c.cfg.NewNodeGrace {
				errs[it] = fmt.Errorf("instance %s of Node %s not found by EC2 yet (Node %s old; retrying for %s)", id, node.Name, age.Round(1e9), c.cfg.NewNodeGrace)
			} else {
				klog.InfoS("Not tagging: EC2 does not know the Node's instance", "node", klog.KObj(node), "instance", id)
			}
		case res.refused[id] != nil:
			err := res.refused[id]
			errs[it] = fmt.Errorf("tag instance %s of Node %s: %w", id, node.Name, err)
			// A new instance IAM cannot see the tags of yet is denied
			// like a foreign one; only an older Node's denial is news.
			if errorCode(err) != codeUnauthorized || c.cfg.Clock.Since(node.CreationTimestamp.Time) >= c.cfg.NewNodeGrace {
				c.warn(node, "CreateTags", id, err)
			}
		case res.failed[id] != nil:
			// Throttling, 5xx or the like: nothing the Node's owner can
			// fix, so no event; retried with backoff.
			errs[it] = fmt.Errorf("tag instance %s of Node %s: the call for its batch failed: %w", id, node.Name, res.failed[id])
		default:
			done = append(done, id)
		}
	}
	for _, id := range done {
		if err := c.label(ctx, nodes[id]); err != nil {
			errs[byID[id]] = err
			continue
		}
		if _, relabel := nodes[id].Labels[LabelKey]; !relabel {
			m.labelled(c.cfg.Clock.Since(nodes[id].CreationTimestamp.Time))
		}
	}
}

// applyGrouped makes the calls for the instances expected to go through
// apart from the suspects, each group bisected on an item error
// (applyBatched): the suspects are the instances the view shows without
// the cluster tag (the least-privilege policy grants only the cluster's
// instances, and IAM denies a whole call for one resource it does not
// grant) and those that failed alone in an earlier pass (too many tags,
// denied by an SCP). Bisection alone would find them too, at up to
// 2*ceil(log2 n) calls each time they are retried beside new Nodes; kept
// apart they cost one call (more only when several fail together), and a
// Node on a foreign instance does not fail the rest.
func (c *Controller) applyGrouped(ctx context.Context, ids []string, obs map[string]instances.Observation, call func(context.Context, []string) error) result {
	var expected, suspects []string
	for _, id := range ids {
		if o := obs[id]; o.Instance != nil && clustertag.Has(o.Instance.Tags, c.cfg.ClusterID) && !c.suspects[id] {
			expected = append(expected, id)
		} else {
			suspects = append(suspects, id)
		}
	}
	res := applyBatched(ctx, expected, call)
	res.merge(applyBatched(ctx, suspects, call))
	for _, id := range ids {
		if res.refused[id] != nil {
			c.suspects[id] = true
		} else if res.failed[id] == nil {
			delete(c.suspects, id)
		}
	}
	return res
}

// count records the outcomes of a batch: done instances went through
// (outcome ok), the others as res has them, refused ones by the reason.
func (c *Controller) count(action, ok string, done int, res result) {
	m := c.cfg.Metrics
	m.node(action, ok, done)
	m.node(action, outcomeGone, len(res.gone))
	m.node(action, outcomeFailed, len(res.failed))
	for _, err := range res.refused {
		m.node(action, refusedOutcome(err), 1)
	}
}

// label marks node as tagged with the current tags.
func (c *Controller) label(ctx context.Context, node *corev1.Node) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{LabelKey: c.checksum}}})
	if err != nil {
		return err
	}
	_, err = c.cfg.Client.CoreV1().Nodes().Patch(ctx, node.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("label Node %s %s=%s: %w", node.Name, LabelKey, c.checksum, err)
	}
	return nil
}

// untag removes the tags from the instances of deleted Nodes. Only the
// configured tags with their configured values go: a tag someone changed
// since is theirs now. An instance EC2 no longer knows, or one terminated,
// needs nothing: its tags go with it.
func (c *Controller) untag(ctx context.Context, removes []item, errs map[item]error) {
	if len(removes) == 0 {
		return
	}
	// An instance another Node now stands for (the same machine registered
	// again under a new name) keeps its tags.
	live := map[string]bool{}
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		for _, it := range removes {
			errs[it] = fmt.Errorf("list Nodes: %w", err)
		}
		return
	}
	for _, n := range nodes {
		live[instanceID(n)] = true
	}
	byID := map[string][]item{}
	for _, it := range removes {
		if live[it.instanceID] {
			klog.V(2).InfoS("Keeping the tags of an instance another Node stands for", "deletedNode", it.node, "instance", it.instanceID)
			continue
		}
		byID[it.instanceID] = append(byID[it.instanceID], it)
	}
	if len(byID) == 0 {
		return
	}
	ids := sortedKeys(byID)
	obs, err := c.cfg.Instances.ObserveIDs(ctx, ids)
	if err != nil {
		for _, id := range ids {
			for _, it := range byID[id] {
				errs[it] = fmt.Errorf("look up instance %s of deleted Node %s: %w", id, it.node, err)
			}
		}
		return
	}
	// Only evidence that the instance is gone spares the call: the view
	// may not have seen tags this controller put on a moment ago.
	m := c.cfg.Metrics
	ids = slices.DeleteFunc(ids, func(id string) bool {
		o, known := obs[id]
		switch {
		case known && o.Instance == nil:
			m.node("untag", outcomeGone, 1)
		case known && o.Instance.Terminated():
			m.node("untag", outcomeTerminated, 1)
		default:
			return false
		}
		return true
	})
	res := c.applyGrouped(ctx, ids, obs, func(ctx context.Context, ids []string) error {
		_, err := c.cfg.EC2.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: ids, Tags: ec2Tags(c.cfg.Tags, c.keys)})
		return err
	})
	klog.V(2).InfoS("Untagged instances of deleted Nodes", "instances", len(byID), "called", len(ids), "gone", len(res.gone),
		"refused", len(res.refused), "failed", len(res.failed), "calls", res.calls)
	c.count("untag", outcomeUntagged, len(ids)-len(res.gone)-len(res.refused)-len(res.failed), res)
	for id, err := range res.refused {
		for _, it := range byID[id] {
			errs[it] = fmt.Errorf("remove tags from instance %s of deleted Node %s: %w", id, it.node, err)
			// The Node is gone; its name still finds the event
			// (kubectl events --for node/<name>).
			c.warn(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: it.node}}, "DeleteTags", id, err)
		}
	}
	for id, err := range res.failed {
		for _, it := range byID[id] {
			errs[it] = fmt.Errorf("remove tags from instance %s of deleted Node %s: the call for its batch failed: %w", id, it.node, err)
		}
	}
}

// warn reports a failure of instance id alone that the user can fix, as
// a Warning event on node naming EC2's reason. Failures of a whole call
// (throttling, 5xx) are only retried and logged: they say nothing about
// the Node.
func (c *Controller) warn(node *corev1.Node, op, id string, err error) {
	var what, fix string
	switch code := errorCode(err); code {
	case codeUnauthorized:
		what = fmt.Sprintf("UnauthorizedOperation: an IAM policy or a service control policy (SCP) denies ec2:%s on this instance (the other instances of the batch went through)", op)
		fix = fmt.Sprintf("grant ec2:%s on the instance to the CCM's role and lift any SCP deny for it; the least-privilege policy (iam/ccm-policy-least-privilege.json) grants it only on instances tagged %s", op, clustertag.Key(c.clusterID()))
	case codeTagLimitExceeded:
		what = fmt.Sprintf("TagLimitExceeded: the instance has too many tags; with the %d of --tags it would carry more than EC2's limit of %d user tags per resource (aws: tags do not count)", len(c.keys), maxTagsPerInstance)
		fix = "remove tags from the instance, or configure fewer --tags"
	default:
		return
	}
	c.cfg.Events.Eventf(node, corev1.EventTypeWarning, eventsReason, "%s on instance %s failed with %s. Fix: %s.", op, id, what, fix)
}

func (c *Controller) clusterID() string {
	if c.cfg.ClusterID == "" {
		return "<cluster-id>"
	}
	return c.cfg.ClusterID
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
