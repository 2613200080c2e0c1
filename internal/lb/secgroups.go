package lb

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/lbconfig"
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

// Security-group rule descriptions (the groups' names are lbnames'). They MUST NOT change: the
// in-tree provider and upstream use the same ones, and they are how
// existing groups and rules are found and adopted.
const (
	// NLB rules in node security groups are recognised by description.
	nlbClientRuleDesc = "kubernetes.io/rule/nlb/client"
	nlbHealthRuleDesc = "kubernetes.io/rule/nlb/health"
	nlbMTURuleDesc    = "kubernetes.io/rule/nlb/mtu"
)

// maxFilterValues is EC2's limit of values in one filter.
const maxFilterValues = 200

// group is a security group as the reconciler uses it.
type group struct {
	id, name string
	tags     map[string]string
	ingress  []rule
}

func fromEC2Group(g ec2types.SecurityGroup) *group {
	return &group{id: aws.ToString(g.GroupId), name: aws.ToString(g.GroupName), tags: ec2Tags(g.Tags), ingress: flatten(g.IpPermissions)}
}

// describeGroups returns the groups matching filters, all pages.
func (r *Reconciler) describeGroups(ctx context.Context, filters []ec2types.Filter) (map[string]*group, error) {
	out := map[string]*group{}
	var token *string
	for {
		page, err := r.EC2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: filters, NextToken: token})
		if err != nil {
			return nil, fmt.Errorf("describe security groups: %w", err)
		}
		for _, g := range page.SecurityGroups {
			out[aws.ToString(g.GroupId)] = fromEC2Group(g)
		}
		if token = page.NextToken; token == nil {
			return out, nil
		}
	}
}

// groupsByID describes the given groups in as few calls as EC2 allows.
// Filtering by group-id (rather than GroupIds) tolerates a group deleted
// in the meantime: it is just absent.
func (r *Reconciler) groupsByID(ctx context.Context, ids []string) (map[string]*group, error) {
	out := map[string]*group{}
	ids = uniqueSorted(ids)
	for start := 0; start < len(ids); start += maxFilterValues {
		chunk := ids[start:min(start+maxFilterValues, len(ids))]
		got, err := r.describeGroups(ctx, []ec2types.Filter{{Name: aws.String("group-id"), Values: chunk}})
		if err != nil {
			return nil, err
		}
		for k, v := range got {
			out[k] = v
		}
	}
	return out, nil
}

// findManagedGroup finds the Classic load balancer's own group by name in
// the cluster's VPC, or returns nil.
func (r *Reconciler) findManagedGroup(ctx context.Context, svc *corev1.Service) (*group, error) {
	got, err := r.describeGroups(ctx, []ec2types.Filter{
		{Name: aws.String("group-name"), Values: []string{lbnames.ClassicSecurityGroupName(lbnames.LoadBalancerName(svc))}},
		{Name: aws.String("vpc-id"), Values: []string{r.Env.VPCID}},
	})
	if err != nil {
		return nil, err
	}
	for _, g := range got {
		return g, nil
	}
	return nil, nil
}

// ensureManagedGroup returns the Classic load balancer's own group,
// creating it (tagged) when missing. A group of that name that is not the
// cluster's own (see ownedGroup) is neither adopted nor replaced (EC2
// would refuse a second group of the name, InvalidGroup.Duplicate): the
// Service gets a Warning naming it and the sync fails until someone
// deletes or tags it. Upstream instead tags an untagged group of that name
// as the cluster's and adopts it.
func (r *Reconciler) ensureManagedGroup(ctx context.Context, svc *corev1.Service, cfg *lbconfig.Config) (*group, error) {
	g, err := r.findManagedGroup(ctx, svc)
	if err != nil {
		return nil, err
	}
	if g != nil {
		if err := r.refuseUnowned(svc, g); err != nil {
			return nil, err
		}
		return g, nil
	}
	name := lbnames.ClassicSecurityGroupName(cfg.Name)
	out, err := r.EC2.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{
		GroupName:   aws.String(name),
		Description: aws.String(fmt.Sprintf("Security group for Kubernetes ELB %s (%s)", cfg.Name, lbnames.ServiceNameTagValue(svc))),
		VpcId:       aws.String(r.Env.VPCID),
		TagSpecifications: []ec2types.TagSpecification{{
			ResourceType: ec2types.ResourceTypeSecurityGroup,
			Tags:         ec2TagList(r.ownedTags(svc, cfg)),
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("create security group %s: %w", name, err)
	}
	klog.InfoS("Created load balancer security group", "service", klog.KObj(svc), "group", aws.ToString(out.GroupId), "name", name)
	// AWS gives a new group an allow-all egress rule and no ingress rule.
	return &group{id: aws.ToString(out.GroupId), name: name, tags: tagMap(r.ownedTags(svc, cfg))}, nil
}

// refuseUnowned reports, as a Warning on svc and as the sync's error, a
// group named like svc's own that is not the cluster's (ownedGroup).
func (r *Reconciler) refuseUnowned(svc *corev1.Service, g *group) error {
	why := r.ownedGroup(g.tags, svc)
	if why == nil {
		return nil
	}
	r.Events.Eventf(svc, corev1.EventTypeWarning, ReasonForeignResource,
		"security group %s (%s) is named like this Service's but is not adopted, used or changed: %v. Delete it, or tag it %s=%s if this cluster made it",
		g.id, g.name, why, clustertag.Key(r.Env.ClusterID), clustertag.Owned)
	return fmt.Errorf("security group %s (%s) is not adopted: %w; delete it, or tag it %s=%s if this cluster made it",
		g.id, g.name, why, clustertag.Key(r.Env.ClusterID), clustertag.Owned)
}

// syncIngress makes the owned ingress rules of g exactly want.
func (r *Reconciler) syncIngress(ctx context.Context, g *group, want []rule, owns func(rule) bool) error {
	add, remove := diffRules(g.ingress, want, owns)
	if len(remove) > 0 {
		if _, err := r.EC2.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String(g.id), IpPermissions: permissions(remove)}); err != nil && !isCode(err, codePermissionNotFound) {
			return fmt.Errorf("revoke %d ingress rules of security group %s: %w", len(remove), g.id, err)
		}
	}
	if len(add) > 0 {
		if _, err := r.EC2.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(g.id), IpPermissions: permissions(add)}); err != nil && !isCode(err, codePermissionDuplicate) {
			return fmt.Errorf("authorize %d ingress rules in security group %s: %w", len(add), g.id, err)
		}
	}
	if len(add)+len(remove) > 0 {
		klog.V(2).InfoS("Changed security group ingress", "group", g.id, "added", len(add), "removed", len(remove))
		kept := slices.DeleteFunc(slices.Clone(g.ingress), func(x rule) bool { return slices.ContainsFunc(remove, func(y rule) bool { return x.key() == y.key() }) })
		g.ingress = slices.Concat(kept, add)
	}
	return nil
}

// nodeGroupsFor picks, for each target, the security group that gets the
// load balancer's rules: the ones carrying this cluster's tag, else the
// instance's only group. An instance with several groups and none tagged
// is reported on the Service and skipped (upstream fails the whole sync).
func (r *Reconciler) nodeGroupsFor(svc *corev1.Service, targets []target, known map[string]*group) []string {
	var picked, ambiguous []string
	for _, t := range targets {
		var tagged []string
		for _, id := range t.Groups {
			if g, ok := known[id]; ok && clustertag.Has(g.tags, r.Env.ClusterID) {
				tagged = append(tagged, id)
			}
		}
		switch {
		case len(tagged) > 0:
			picked = append(picked, tagged...)
		case len(t.Groups) == 1:
			picked = append(picked, t.Groups[0])
		case len(t.Groups) > 1:
			ambiguous = append(ambiguous, fmt.Sprintf("%s (%s: %s)", t.Node, t.InstanceID, strings.Join(t.Groups, ", ")))
		}
	}
	if len(ambiguous) > 0 {
		r.Events.Eventf(svc, corev1.EventTypeWarning, ReasonTargetSkipped,
			"cannot tell which security group of these nodes to open for the load balancer, as none carries %s: %s; tag one group per node",
			clustertag.Key(r.Env.ClusterID), strings.Join(ambiguous, "; "))
	}
	return uniqueSorted(picked)
}

// nodeRules describes the load balancer's rules in node security groups.
type nodeRules struct {
	lbName string
	// want are the rules every chosen node group gets.
	want []rule
	// owns tells this load balancer's rules apart from everything else.
	owns func(rule) bool
	// stale finds groups that may still hold this load balancer's rules.
	stale []ec2types.Filter
	// mtu: also keep NLB path-MTU rules in step with client rules.
	mtu bool
}

// syncNodeRules brings the load balancer's rules in node groups to spec:
// chosen groups get want, every other group loses what owns. known holds
// the already described groups of the targets. The search for stale rules
// in other groups runs only when the chosen groups changed since this
// process last reconciled them.
func (r *Reconciler) syncNodeRules(ctx context.Context, svc *corev1.Service, spec nodeRules, targets []target, known map[string]*group) error {
	if r.Options.DisableSecurityGroupIngress {
		return nil
	}
	chosen := r.nodeGroupsFor(svc, targets, known)
	candidates := map[string]*group{}
	var missing []string
	for _, id := range chosen {
		if g, ok := known[id]; ok {
			candidates[id] = g
		} else {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		got, err := r.groupsByID(ctx, missing)
		if err != nil {
			return err
		}
		for k, v := range got {
			candidates[k] = v
		}
	}
	if previous, changed := r.rememberNodeGroups(spec.lbName, chosen); changed && spec.stale != nil {
		others, err := r.describeGroups(ctx, spec.stale)
		if err != nil {
			r.forgetNodeGroups(spec.lbName)
			return err
		}
		for k, v := range others {
			if _, ok := candidates[k]; !ok {
				candidates[k] = v
			}
		}
		// A group chosen last time but not tagged for the cluster (an
		// instance's only group) escapes the stale filter: read it too.
		var gone []string
		for _, id := range previous {
			if _, ok := candidates[id]; !ok {
				gone = append(gone, id)
			}
		}
		if len(gone) > 0 {
			got, err := r.groupsByID(ctx, gone)
			if err != nil {
				r.forgetNodeGroups(spec.lbName)
				return err
			}
			maps.Copy(candidates, got)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(candidates)) {
		g := candidates[id]
		var want []rule
		if slices.Contains(chosen, id) {
			want = spec.want
		}
		if spec.mtu {
			want, owns := withMTU(g.ingress, want, spec.owns)
			if err := r.syncIngress(ctx, g, want, owns); err != nil {
				r.forgetNodeGroups(spec.lbName)
				return err
			}
			continue
		}
		if err := r.syncIngress(ctx, g, want, spec.owns); err != nil {
			r.forgetNodeGroups(spec.lbName)
			return err
		}
	}
	return nil
}

// withMTU adds to want the path-MTU rules (ICMP type 3, code 4) for every
// client CIDR any NLB will have in the group after this change, as upstream
// keeps them; the MTU rules are shared by all NLBs.
func withMTU(have, want []rule, owns func(rule) bool) ([]rule, func(rule) bool) {
	cidrs := map[string]bool{}
	for _, x := range have {
		if strings.HasPrefix(x.Desc, nlbClientRuleDesc) && !owns(x) && x.CIDR != "" {
			cidrs[x.CIDR] = true
		}
	}
	for _, x := range want {
		if strings.HasPrefix(x.Desc, nlbClientRuleDesc) && x.CIDR != "" {
			cidrs[x.CIDR] = true
		}
	}
	out := slices.Clone(want)
	for _, c := range slices.Sorted(maps.Keys(cidrs)) {
		out = append(out, rule{Protocol: "icmp", From: 3, To: 4, CIDR: c, Desc: nlbMTURuleDesc})
	}
	return out, func(x rule) bool { return owns(x) || x.Desc == nlbMTURuleDesc }
}

// deleteManagedGroup deletes the Classic load balancer's own group. A
// DependencyViolation (the load balancer's network interfaces linger for
// a while after it is deleted) is returned for the service controller to
// retry later with backoff.
func (r *Reconciler) deleteManagedGroup(ctx context.Context, g *group) error {
	if err := r.ownedGroup(g.tags, nil); err != nil {
		return fmt.Errorf("security group %s (%s) is left alone: %w", g.id, g.name, err)
	}
	if _, err := r.EC2.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(g.id)}); err != nil {
		switch {
		case isCode(err, codeGroupNotFound):
			return nil
		case isCode(err, codeDependencyViolation):
			return fmt.Errorf("security group %s is still in use (AWS releases a deleted load balancer's interfaces after a while); will retry: %w", g.id, err)
		default:
			return fmt.Errorf("delete security group %s: %w", g.id, err)
		}
	}
	klog.InfoS("Deleted load balancer security group", "group", g.id, "name", g.name)
	return nil
}

// clusterGroupsFilter selects the cluster's security groups in its VPC.
func (r *Reconciler) clusterGroupsFilter() []ec2types.Filter {
	return []ec2types.Filter{clustertag.Filter(r.Env.ClusterID, r.Env.Legacy), {Name: aws.String("vpc-id"), Values: []string{r.Env.VPCID}}}
}

func ec2TagList(tags []tag) []ec2types.Tag {
	out := make([]ec2types.Tag, len(tags))
	for i, t := range tags {
		out[i] = ec2types.Tag{Key: aws.String(t.Key), Value: aws.String(t.Value)}
	}
	return out
}

func tagMap(tags []tag) map[string]string {
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[t.Key] = t.Value
	}
	return m
}

func uniqueSorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
