package tagging

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
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
	res := c.applyByOwnership(ctx, toTag, obs, func(ctx context.Context, ids []string) error {
		_, err := c.cfg.EC2.CreateTags(ctx, &ec2.CreateTagsInput{Resources: ids, Tags: ec2Tags(c.cfg.Tags, c.keys)})
		return err
	})
	tagged := len(toTag) - len(res.gone) - len(res.failed)
	klog.V(2).InfoS("Tagged instances", "nodes", len(nodes), "alreadyTagged", len(done), "tagged", tagged,
		"gone", len(res.gone), "failed", len(res.failed), "calls", res.calls)
	m.node("tag", outcomeTagged, tagged)
	m.node("tag", outcomeGone, len(res.gone))
	m.node("tag", outcomeFailed, len(res.failed))
	for _, id := range toTag {
		node, it := nodes[id], byID[id]
		switch {
		case res.gone[id]:
			if age := c.cfg.Clock.Since(node.CreationTimestamp.Time); age < c.cfg.NewNodeGrace {
				errs[it] = fmt.Errorf("instance %s of Node %s not found by EC2 yet (Node %s old; retrying for %s)", id, node.Name, age.Round(1e9), c.cfg.NewNodeGrace)
			} else {
				klog.InfoS("Not tagging: EC2 does not know the Node's instance", "node", klog.KObj(node), "instance", id)
			}
		case res.failed[id] != nil:
			errs[it] = fmt.Errorf("tag instance %s of Node %s: %w", id, node.Name, res.failed[id])
			// A new instance IAM cannot see the tags of yet is denied
			// like a foreign one; only an older Node's denial is news.
			if c.cfg.Clock.Since(node.CreationTimestamp.Time) >= c.cfg.NewNodeGrace {
				c.warn(node, "CreateTags", id, res.failed[id])
			}
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

// applyByOwnership makes the calls for the instances the view shows with
// the cluster tag apart from the others: IAM denies a whole call for one
// resource it does not grant, and the least-privilege policy grants only
// the cluster's instances, so a Node on a foreign or untagged instance
// must not fail the rest.
func (c *Controller) applyByOwnership(ctx context.Context, ids []string, obs map[string]instances.Observation, call func(context.Context, []string) error) result {
	var ours, others []string
	for _, id := range ids {
		if o := obs[id]; o.Instance != nil && clustertag.Has(o.Instance.Tags, c.cfg.ClusterID) {
			ours = append(ours, id)
		} else {
			others = append(others, id)
		}
	}
	res := applyBatched(ctx, ours, call)
	more := applyBatched(ctx, others, call)
	maps.Copy(res.gone, more.gone)
	maps.Copy(res.failed, more.failed)
	res.calls += more.calls
	return res
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
	res := c.applyByOwnership(ctx, ids, obs, func(ctx context.Context, ids []string) error {
		_, err := c.cfg.EC2.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: ids, Tags: ec2Tags(c.cfg.Tags, c.keys)})
		return err
	})
	klog.V(2).InfoS("Untagged instances of deleted Nodes", "instances", len(byID), "called", len(ids), "gone", len(res.gone), "failed", len(res.failed), "calls", res.calls)
	m.node("untag", outcomeUntagged, len(ids)-len(res.gone)-len(res.failed))
	m.node("untag", outcomeGone, len(res.gone))
	m.node("untag", outcomeFailed, len(res.failed))
	for id, err := range res.failed {
		for _, it := range byID[id] {
			errs[it] = fmt.Errorf("remove tags from instance %s of deleted Node %s: %w", id, it.node, err)
		}
	}
}

// warn reports a failure the user can fix on the Node. Transient ones
// (throttling, 5xx) are only retried and logged.
func (c *Controller) warn(node *corev1.Node, op, id string, err error) {
	var fix string
	switch errorCode(err) {
	case "UnauthorizedOperation", "AccessDenied", "AccessDeniedException":
		fix = fmt.Sprintf("grant ec2:%s on the instance to the CCM's role; the least-privilege policy (iam/ccm-policy-least-privilege.json) grants it on instances tagged %s", op, clustertag.Key(c.clusterID()))
	case "TagLimitExceeded":
		fix = "the instance would carry more than 50 tags: remove some of its tags or fewer --tags"
	default:
		return
	}
	c.cfg.Events.Eventf(node, corev1.EventTypeWarning, eventsReason, "%s on instance %s failed: %v. Fix: %s.", op, id, err, fix)
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
