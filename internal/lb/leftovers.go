package lb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

// Leftovers: parts of a Service's load balancer that a failed delete left
// behind and that the load balancer no longer leads to (a target group
// replaced after a health-check or node-port change and already detached
// from its listener). They are found again by what marks them as the
// Service's (tags, rule descriptions, the group they reference), never by
// names derived from the current spec, which may have changed since. Node
// rules a Classic load balancer still owes a revocation are recorded on
// the load balancer itself (classic_revoke.go).

// pendingCleanup is the cleanup one load balancer still owes. It lives in
// memory only, as a hint: after a restart, deletion of the Service still
// finds the target groups by tag.
type pendingCleanup struct {
	// targetGroups: a target-group delete failed, so the Service's target
	// groups are searched for by tag (a region-wide listing) until a sweep
	// deletes every one the load balancer does not use.
	targetGroups bool
}

// pendingFor returns lb's entry, creating it; callers hold r.mu.
func (r *Reconciler) pendingFor(lb string) *pendingCleanup {
	p := r.pending[lb]
	if p == nil {
		p = &pendingCleanup{}
		r.pending[lb] = p
	}
	return p
}

// dropEmptyPending removes lb's entry once it owes nothing; callers hold r.mu.
func (r *Reconciler) dropEmptyPending(lb string) {
	if p := r.pending[lb]; p != nil && !p.targetGroups {
		delete(r.pending, lb)
	}
}

// markTargetGroupSweep records that a target-group delete of lb failed.
func (r *Reconciler) markTargetGroupSweep(lb string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pendingFor(lb).targetGroups = true
}

// targetGroupSweepPending reports whether lb owes a target-group sweep.
func (r *Reconciler) targetGroupSweepPending(lb string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pending[lb]
	return p != nil && p.targetGroups
}

// targetGroupsSwept records a complete sweep of lb's target groups.
func (r *Reconciler) targetGroupsSwept(lb string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.pending[lb]; p != nil {
		p.targetGroups = false
	}
	r.dropEmptyPending(lb)
}

// ownedTargetGroups returns the ARNs of the target groups tagged for svc
// in this cluster (the cluster tag and the Service-name tag the reconciler
// writes on every group it creates) that no load balancer other than
// lbARN uses. DescribeTargetGroups cannot filter by tag, so this lists the
// region's groups and reads the tags of the candidates, 20 a call: it runs
// only after a failed delete and when the Service's load balancer is being
// deleted, never in a steady-state sync.
func (r *Reconciler) ownedTargetGroups(ctx context.Context, svc *corev1.Service, lbARN string) ([]string, error) {
	all, err := r.vpcTargetGroups(ctx, svc)
	if err != nil {
		return nil, err
	}
	candidates := unusedTargetGroups(all, lbARN)
	if len(candidates) == 0 {
		return nil, nil
	}
	tags, err := r.tagsOf(ctx, candidates...)
	if err != nil {
		return nil, err
	}
	return r.taggedFor(svc, candidates, tags), nil
}

// vpcTargetGroups lists the region's target groups outside other VPCs.
func (r *Reconciler) vpcTargetGroups(ctx context.Context, svc *corev1.Service) ([]elbv2types.TargetGroup, error) {
	var out []elbv2types.TargetGroup
	in := &elbv2.DescribeTargetGroupsInput{}
	for {
		page, err := r.ELBv2.DescribeTargetGroups(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("list target groups to find those of %s: %w", lbnames.ServiceNameTagValue(svc), err)
		}
		for _, tg := range page.TargetGroups {
			if vpc := aws.ToString(tg.VpcId); vpc != "" && r.Env.VPCID != "" && vpc != r.Env.VPCID {
				continue
			}
			out = append(out, tg)
		}
		if aws.ToString(page.NextMarker) == "" {
			return out, nil
		}
		in = &elbv2.DescribeTargetGroupsInput{Marker: page.NextMarker}
	}
}

// unusedTargetGroups are the ARNs of the groups no load balancer other
// than lbARN forwards to: a group another load balancer uses is not a
// leftover, whatever its tags say, and skipping it saves reading its tags.
func unusedTargetGroups(all []elbv2types.TargetGroup, lbARN string) []string {
	var out []string
	for _, tg := range all {
		if !slices.ContainsFunc(tg.LoadBalancerArns, func(a string) bool { return a != lbARN }) {
			out = append(out, aws.ToString(tg.TargetGroupArn))
		}
	}
	return out
}

// taggedFor keeps the ARNs whose tags name this cluster and svc.
func (r *Reconciler) taggedFor(svc *corev1.Service, arns []string, tags map[string]map[string]string) []string {
	var out []string
	for _, arn := range arns {
		t := tags[arn]
		if clustertag.Has(t, r.Env.ClusterID) && t[lbnames.ServiceNameTagKey] == lbnames.ServiceNameTagValue(svc) {
			out = append(out, arn)
		}
	}
	return out
}

// sweepTargetGroups deletes the Service's target groups (by tag) that are
// not in keep, and clears the pending sweep once none is left.
func (r *Reconciler) sweepTargetGroups(ctx context.Context, svc *corev1.Service, lbARN string, keep map[string]bool) error {
	name := lbnames.LoadBalancerName(svc)
	arns, err := r.ownedTargetGroups(ctx, svc, lbARN)
	if err != nil {
		return err
	}
	var errs []error
	for _, arn := range arns {
		if keep[arn] {
			continue
		}
		klog.InfoS("Deleting a target group left by an earlier failed delete", "service", klog.KObj(svc), "arn", arn)
		errs = append(errs, r.deleteTargetGroup(ctx, name, arn))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	r.targetGroupsSwept(name)
	return nil
}

// nlbRuleOwner tells the NLB called name's rules in node groups apart.
func nlbRuleOwner(name string) func(rule) bool {
	clientDesc, healthDesc := nlbClientRuleDesc+"="+name, nlbHealthRuleDesc+"="+name
	return func(x rule) bool { return x.Desc == clientDesc || x.Desc == healthDesc }
}

// nlbRuleGroups returns the security groups of the VPC holding rules
// owns matches (an NLB's: nlbRuleOwner). Every group of the VPC is read, not only the
// cluster-tagged ones: an instance's only group gets the rules untagged.
// Groups tagged for another cluster are skipped (a Service restored there
// has the same load-balancer name). It runs at deletion only.
func (r *Reconciler) nlbRuleGroups(ctx context.Context, owns func(rule) bool) (map[string]*group, error) {
	all, err := r.describeGroups(ctx, []ec2types.Filter{{Name: aws.String("vpc-id"), Values: []string{r.Env.VPCID}}})
	if err != nil {
		return nil, err
	}
	out := map[string]*group{}
	for id, g := range all {
		if r.ownership(g.tags, nil) == nil && slices.ContainsFunc(g.ingress, owns) {
			out[id] = g
		}
	}
	return out, nil
}

// deleteNLBRules revokes the NLB's rules from every group holding them,
// with the path-MTU rules no other NLB still needs there, and every rule
// letting in managed, the NLB's managed group (if any), which could not be
// deleted while one is left.
func (r *Reconciler) deleteNLBRules(ctx context.Context, name, managed string) error {
	r.forgetNodeGroups(name)
	owns := nlbRuleOwner(name)
	if managed != "" {
		byDesc := owns
		owns = func(x rule) bool { return byDesc(x) || x.Group == managed }
	}
	groups, err := r.nlbRuleGroups(ctx, owns)
	if err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(groups)) {
		want, owns := withMTU(groups[id].ingress, nil, owns)
		if err := r.syncIngress(ctx, groups[id], want, owns); err != nil {
			return err
		}
	}
	return nil
}
