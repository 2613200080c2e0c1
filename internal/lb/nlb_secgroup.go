package lb

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/awsccmctl/awsccmctl/internal/lbconfig"
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

// Managed NLB security groups (cloud config NLBSecurityGroupMode =
// Managed): a new NLB gets its own group, attached at creation (AWS
// cannot add a security group later to an NLB created without one). The
// group lets the Service's source ranges in on the listener ports, and
// node groups let the group in on the node and health-check ports instead
// of opening them to CIDRs. Whether an NLB is treated this way follows
// from the load balancer, not the setting: an NLB that has its managed
// group keeps it reconciled, and it is deleted with the load balancer,
// whatever the setting says later.

// DefaultClusterName is kube-controller-manager's and the CCM's default
// --cluster-name, which the service controller passes to the provider.
const DefaultClusterName = "kubernetes"

// nlbGroupDescription is upstream's description of the managed NLB group.
// It MUST NOT change: it is what upstream writes.
const nlbGroupDescription = "[k8s] Managed SecurityGroup for LoadBalancer"

// serviceGroups are the Service's own security groups found by name, both
// kinds in one DescribeSecurityGroups: the Classic load balancer's
// k8s-elb-<name> and the NLB's managed group. A group of either name that
// the cluster does not own (untagged, or tagged for another cluster or
// Service: ownedGroup) is not the Service's: it is described in foreign
// (saying why) and left alone, its rules in other groups too (notOurs
// holds their IDs).
type serviceGroups struct {
	classic, nlb *group
	foreign      []error
	notOurs      map[string]bool
}

// ownServiceGroups finds the Service's own security groups.
func (r *Reconciler) ownServiceGroups(ctx context.Context, svc *corev1.Service) (serviceGroups, error) {
	classicName, nlbName := lbnames.ClassicSecurityGroupName(lbnames.LoadBalancerName(svc)), lbnames.NLBSecurityGroupName(r.Env.ClusterName, svc)
	got, err := r.describeGroups(ctx, []ec2types.Filter{
		{Name: aws.String("group-name"), Values: []string{classicName, nlbName}},
		{Name: aws.String("vpc-id"), Values: []string{r.Env.VPCID}},
	})
	var out serviceGroups
	if err != nil {
		return out, err
	}
	for _, id := range slices.Sorted(maps.Keys(got)) {
		g := got[id]
		if why := r.ownedGroup(g.tags, svc); why != nil {
			out.foreign = append(out.foreign, fmt.Errorf("security group %s (%s): %w", g.id, g.name, why))
			if out.notOurs == nil {
				out.notOurs = map[string]bool{}
			}
			out.notOurs[g.id] = true
			continue
		}
		switch g.name {
		case classicName:
			out.classic = g
		case nlbName:
			out.nlb = g
		}
	}
	return out, nil
}

// ensureNLBGroup returns the NLB's managed group, creating it when missing
// with upstream's name, description and tags (the cluster tag and the
// Service's additional tags). A group of that name the cluster does not
// own is refused as for the Classic group (refuseUnowned).
func (r *Reconciler) ensureNLBGroup(ctx context.Context, svc *corev1.Service, cfg *lbconfig.Config) (*group, error) {
	name := lbnames.NLBSecurityGroupName(r.Env.ClusterName, svc)
	got, err := r.describeGroups(ctx, []ec2types.Filter{
		{Name: aws.String("group-name"), Values: []string{name}},
		{Name: aws.String("vpc-id"), Values: []string{r.Env.VPCID}},
	})
	if err != nil {
		return nil, err
	}
	for _, g := range got {
		if err := r.refuseUnowned(svc, g); err != nil {
			return nil, err
		}
		return g, nil
	}
	tags := r.clusterTags()
	if cfg.Valid(lbconfig.KeyAdditionalResourceTags) {
		for _, kv := range cfg.AdditionalTags {
			tags = append(tags, tag{kv.Key, kv.Value})
		}
	}
	out, err := r.EC2.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{
		GroupName:   aws.String(name),
		Description: aws.String(nlbGroupDescription),
		VpcId:       aws.String(r.Env.VPCID),
		TagSpecifications: []ec2types.TagSpecification{{
			ResourceType: ec2types.ResourceTypeSecurityGroup,
			Tags:         ec2TagList(tags),
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("create security group %s for the load balancer %s: %w", name, cfg.Name, err)
	}
	klog.InfoS("Created NLB security group", "service", klog.KObj(svc), "group", aws.ToString(out.GroupId), "name", name)
	return &group{id: aws.ToString(out.GroupId), name: name, tags: tagMap(tags)}, nil
}

// nlbManagedGroup returns the NLB's managed group among its security
// groups, or nil (an NLB created without one, or with groups someone
// else chose). known holds the described groups.
func (r *Reconciler) nlbManagedGroup(svc *corev1.Service, lb *elbv2types.LoadBalancer, known map[string]*group) *group {
	name := lbnames.NLBSecurityGroupName(r.Env.ClusterName, svc)
	for _, id := range lb.SecurityGroups {
		if g, ok := known[id]; ok && g.name == name && r.ownedGroup(g.tags, svc) == nil {
			return g
		}
	}
	return nil
}

// nlbFrontendRules are the managed group's ingress: each listener port
// (TCP, or UDP for UDP listeners) from each source range, and ICMP
// "fragmentation needed" from each, as upstream opens them.
func nlbFrontendRules(cfg *lbconfig.Config) []rule {
	var out []rule
	for _, src := range cfg.SourceRanges {
		for _, l := range cfg.Listeners {
			proto := "tcp"
			if l.Protocol == lbconfig.ProtocolUDP {
				proto = "udp"
			}
			out = append(out, sourceRule(rule{Protocol: proto, From: l.Port, To: l.Port}, src))
		}
		out = append(out, sourceRule(rule{Protocol: "icmp", From: 3, To: 4}, src))
	}
	return out
}

// nlbGroupNodeRules are the node-group rules of an NLB with a managed
// group: the group, not CIDRs, is let in on each node port and each
// health-check port the node-port rules do not already cover. They carry
// upstream's client and health descriptions, so either CCM recognises
// and removes them.
func nlbGroupNodeRules(spec nodeRules, cfg *lbconfig.Config, groupID string, clientPorts, healthPorts []int32, proto string) nodeRules {
	clientDesc, healthDesc := nlbClientRuleDesc+"="+cfg.Name, nlbHealthRuleDesc+"="+cfg.Name
	for _, p := range clientPorts {
		spec.want = append(spec.want, rule{Protocol: proto, From: p, To: p, Group: groupID, Desc: clientDesc})
	}
	for _, p := range healthPorts {
		if proto == "tcp" && slices.Contains(clientPorts, p) {
			continue
		}
		spec.want = append(spec.want, rule{Protocol: "tcp", From: p, To: p, Group: groupID, Desc: healthDesc})
	}
	return spec
}

// warnNoNLBGroup says, on an existing NLB without security groups while
// the cloud config asks for managed ones, that it stays as it is.
func (r *Reconciler) warnNoNLBGroup(svc *corev1.Service, cfg *lbconfig.Config, lb *elbv2types.LoadBalancer) {
	if !r.Options.NLBManagedSecurityGroups || len(lb.SecurityGroups) > 0 {
		return
	}
	r.Events.Eventf(svc, corev1.EventTypeWarning, ReasonNLBGroupUnavailable,
		"NLBSecurityGroupMode = Managed: the load balancer %s was created without a security group and AWS cannot add one to it; its node ports stay open to the source ranges instead. Recreate the Service to get a load balancer with a managed security group", cfg.Name)
}
