package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

// showClassic prints what ELB holds for a Classic Service: the load
// balancer, its listeners, instances, attributes and tags, and its
// k8s-elb- security group.
func (d *demo) showClassic(ctx context.Context, w io.Writer, c *awsapi.Clients, lc *lbCase) error {
	name := lbnames.LoadBalancerName(lc.svc)
	out, err := c.ELB.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{LoadBalancerNames: []string{name}})
	if err != nil {
		return err
	}
	if len(out.LoadBalancerDescriptions) != 1 {
		return fmt.Errorf("ELB has %d load balancers named %s, want 1", len(out.LoadBalancerDescriptions), name)
	}
	lb := out.LoadBalancerDescriptions[0]
	if got := aws.ToString(lb.DNSName); got != lc.host {
		return fmt.Errorf("status hostname %q is not the DNS name of load balancer %s (%q)", lc.host, name, got)
	}
	attrs, err := c.ELB.DescribeLoadBalancerAttributes(ctx, &elb.DescribeLoadBalancerAttributesInput{LoadBalancerName: &name})
	if err != nil {
		return err
	}
	a := attrs.LoadBalancerAttributes
	idle := "-"
	if a.ConnectionSettings != nil {
		idle = fmt.Sprintf("%ds", aws.ToInt32(a.ConnectionSettings.IdleTimeout))
	}
	crossZone := a.CrossZoneLoadBalancing != nil && a.CrossZoneLoadBalancing.Enabled
	tags, err := c.ELB.DescribeTags(ctx, &elb.DescribeTagsInput{LoadBalancerNames: []string{name}})
	if err != nil {
		return err
	}
	var tagList []string
	for _, d := range tags.TagDescriptions {
		tagList = append(tagList, classicTags(d.Tags)...)
	}

	fmt.Fprintf(w, "  %s: Classic ELB %s, %s\n", lc.svc.Name, name, aws.ToString(lb.Scheme))
	fmt.Fprintf(w, "    subnets %s; idle timeout %s, cross-zone %s\n", d.subnetNames(lb.Subnets), idle, onOff(crossZone))
	for _, l := range lb.ListenerDescriptions {
		if li := l.Listener; li != nil {
			fmt.Fprintf(w, "    listener %s:%d -> %s:%d\n", aws.ToString(li.Protocol), li.LoadBalancerPort,
				aws.ToString(li.InstanceProtocol), aws.ToInt32(li.InstancePort))
		}
	}
	var ids []string
	for _, in := range lb.Instances {
		ids = append(ids, aws.ToString(in.InstanceId))
	}
	wrapHang(w, fmt.Sprintf("    instances (%d): ", len(ids)), "      ", dash(strings.Join(sortedCopy(ids), " ")))
	fmt.Fprintf(w, "    tags: %s\n", strings.Join(tagList, " "))
	groups, err := c.EC2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: lb.SecurityGroups})
	if err != nil {
		return err
	}
	found := false
	for _, g := range groups.SecurityGroups {
		found = found || aws.ToString(g.GroupName) == lbnames.ClassicSecurityGroupName(name)
		fmt.Fprintf(w, "    group %s (%s):\n", aws.ToString(g.GroupName), aws.ToString(g.GroupId))
		wrapHang(w, "      ", "      ", strings.Join(rules(g.IpPermissions), "; "))
	}
	if !found {
		return fmt.Errorf("load balancer %s has no group %s (it has %v)", name, lbnames.ClassicSecurityGroupName(name), lb.SecurityGroups)
	}
	return nil
}

// showNLB prints what ELBv2 holds for an NLB Service: the load balancer,
// its attributes and tags, and each listener with its target group and
// registered targets.
func (d *demo) showNLB(ctx context.Context, w io.Writer, c *awsapi.Clients, lc *lbCase) error {
	name := lbnames.LoadBalancerName(lc.svc)
	out, err := c.ELBv2.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{Names: []string{name}})
	if err != nil {
		return err
	}
	if len(out.LoadBalancers) != 1 {
		return fmt.Errorf("ELBv2 has %d load balancers named %s, want 1", len(out.LoadBalancers), name)
	}
	lb := out.LoadBalancers[0]
	if got := aws.ToString(lb.DNSName); got != lc.host {
		return fmt.Errorf("status hostname %q is not the DNS name of load balancer %s (%q)", lc.host, name, got)
	}
	attrs, err := c.ELBv2.DescribeLoadBalancerAttributes(ctx, &elbv2.DescribeLoadBalancerAttributesInput{LoadBalancerArn: lb.LoadBalancerArn})
	if err != nil {
		return err
	}
	crossZone := false
	for _, a := range attrs.Attributes {
		crossZone = crossZone || (aws.ToString(a.Key) == "load_balancing.cross_zone.enabled" && aws.ToString(a.Value) == "true")
	}
	tags, err := c.ELBv2.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: []string{aws.ToString(lb.LoadBalancerArn)}})
	if err != nil {
		return err
	}
	var tagList []string
	for _, d := range tags.TagDescriptions {
		tagList = append(tagList, nlbTags(d.Tags)...)
	}
	var subnets []string
	for _, z := range lb.AvailabilityZones {
		subnets = append(subnets, aws.ToString(z.SubnetId))
	}
	kind := string(lb.Type)
	if lb.Type == elbv2types.LoadBalancerTypeEnumNetwork {
		kind = "NLB"
	}
	fmt.Fprintf(w, "  %s: %s %s, %s\n", lc.svc.Name, kind, name, lb.Scheme)
	fmt.Fprintf(w, "    subnets %s; cross-zone %s\n", d.subnetNames(subnets), onOff(crossZone))

	tgs, err := c.ELBv2.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{LoadBalancerArn: lb.LoadBalancerArn})
	if err != nil {
		return err
	}
	byArn := map[string]elbv2types.TargetGroup{}
	for _, tg := range tgs.TargetGroups {
		byArn[aws.ToString(tg.TargetGroupArn)] = tg
	}
	ls, err := c.ELBv2.DescribeListeners(ctx, &elbv2.DescribeListenersInput{LoadBalancerArn: lb.LoadBalancerArn})
	if err != nil {
		return err
	}
	listeners := ls.Listeners
	slices.SortFunc(listeners, func(a, b elbv2types.Listener) int { return int(aws.ToInt32(a.Port) - aws.ToInt32(b.Port)) })
	for _, l := range listeners {
		var arn string
		for _, a := range l.DefaultActions {
			if a.Type == elbv2types.ActionTypeEnumForward && a.TargetGroupArn != nil {
				arn = aws.ToString(a.TargetGroupArn)
			}
		}
		tg, ok := byArn[arn]
		if !ok {
			return fmt.Errorf("listener %s:%d forwards to %q, not one of the load balancer's %d target groups", l.Protocol, aws.ToInt32(l.Port), arn, len(byArn))
		}
		health, err := c.ELBv2.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: tg.TargetGroupArn})
		if err != nil {
			return err
		}
		var targets, unhealthy []string
		for _, t := range health.TargetHealthDescriptions {
			id := aws.ToString(t.Target.Id)
			targets = append(targets, id)
			if h := t.TargetHealth; h != nil && h.State != elbv2types.TargetHealthStateEnumHealthy {
				unhealthy = append(unhealthy, fmt.Sprintf("%s %s (%s: %s)", id, h.State, h.Reason, aws.ToString(h.Description)))
			}
		}
		fmt.Fprintf(w, "    listener %s:%d -> target group %s (%s:%d, health check %s)\n", l.Protocol, aws.ToInt32(l.Port),
			aws.ToString(tg.TargetGroupName), tg.Protocol, aws.ToInt32(tg.Port), tg.HealthCheckProtocol)
		wrapHang(w, fmt.Sprintf("      targets (%d): ", len(targets)), "        ", dash(strings.Join(sortedCopy(targets), " ")))
		for _, u := range unhealthy {
			wrapHang(w, "      not healthy: ", "        ", u)
		}
	}
	if len(listeners) != len(lc.svc.Spec.Ports) || len(byArn) != len(lc.svc.Spec.Ports) {
		return fmt.Errorf("load balancer %s has %d listeners and %d target groups for %d Service ports", name, len(listeners), len(byArn), len(lc.svc.Spec.Ports))
	}
	fmt.Fprintf(w, "    tags: %s\n", strings.Join(tagList, " "))
	return nil
}

// leftover is what AWS still holds of the demo's load balancers.
type leftover struct {
	classic, nlb, targetGroups, groups []string
}

func (l leftover) empty() bool {
	return len(l.classic)+len(l.nlb)+len(l.targetGroups)+len(l.groups) == 0
}

func (l leftover) String() string {
	count := func(n []string, what string) string {
		if len(n) == 0 {
			return "no " + what
		}
		return fmt.Sprintf("%d %s (%s)", len(n), what, strings.Join(n, " "))
	}
	return strings.Join([]string{count(l.classic, "Classic ELB"), count(l.nlb, "ELBv2 load balancer"),
		count(l.targetGroups, "target group"), count(l.groups, lbnames.ClassicSecurityGroupPrefix+"* security group")}, ", ")
}

// leftovers lists every load balancer and target group in the region and
// the k8s-elb- security groups.
func leftovers(ctx context.Context, c *awsapi.Clients) (leftover, error) {
	var l leftover
	classic, err := c.ELB.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{})
	if err != nil {
		return l, err
	}
	for _, lb := range classic.LoadBalancerDescriptions {
		l.classic = append(l.classic, aws.ToString(lb.LoadBalancerName))
	}
	v2, err := c.ELBv2.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{})
	if err != nil {
		return l, err
	}
	for _, lb := range v2.LoadBalancers {
		l.nlb = append(l.nlb, aws.ToString(lb.LoadBalancerName))
	}
	tgs, err := c.ELBv2.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{})
	if err != nil {
		return l, err
	}
	for _, tg := range tgs.TargetGroups {
		l.targetGroups = append(l.targetGroups, aws.ToString(tg.TargetGroupName))
	}
	sgs, err := c.EC2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{
		{Name: aws.String("group-name"), Values: []string{lbnames.ClassicSecurityGroupPrefix + "*"}},
	}})
	if err != nil {
		return l, err
	}
	for _, g := range sgs.SecurityGroups {
		l.groups = append(l.groups, aws.ToString(g.GroupName)+"/"+aws.ToString(g.GroupId))
	}
	return l, nil
}

// ingressOf lists a security group's inbound rules, sorted.
func ingressOf(ctx context.Context, c *awsapi.Clients, groupID string) ([]string, error) {
	if groupID == "" {
		return nil, fmt.Errorf("the fixture has no security group tagged %s", clustertag.Key(clusterID))
	}
	out, err := c.EC2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{groupID}})
	if err != nil {
		return nil, fmt.Errorf("read node group %s: %w", groupID, err)
	}
	if len(out.SecurityGroups) != 1 {
		return nil, fmt.Errorf("node group %s: EC2 returned %d groups", groupID, len(out.SecurityGroups))
	}
	return rules(out.SecurityGroups[0].IpPermissions), nil
}

// rules prints each source of each permission as one rule: "tcp 80 from
// 203.0.113.0/24", "all from sg-…", "icmp 3/4 from …", with its
// description if any.
func rules(perms []ec2types.IpPermission) []string {
	var out []string
	for _, p := range perms {
		what := aws.ToString(p.IpProtocol)
		from, to := aws.ToInt32(p.FromPort), aws.ToInt32(p.ToPort)
		switch {
		case what == "-1":
			what = "all"
		case what == "icmp":
			what = fmt.Sprintf("icmp %d/%d", from, to)
		case from == to:
			what = fmt.Sprintf("%s %d", what, from)
		default:
			what = fmt.Sprintf("%s %d-%d", what, from, to)
		}
		add := func(src, desc string) {
			r := what + " from " + src
			if desc != "" {
				r += " (" + desc + ")"
			}
			out = append(out, r)
		}
		for _, r := range p.IpRanges {
			add(aws.ToString(r.CidrIp), aws.ToString(r.Description))
		}
		for _, r := range p.Ipv6Ranges {
			add(aws.ToString(r.CidrIpv6), aws.ToString(r.Description))
		}
		for _, g := range p.UserIdGroupPairs {
			add(aws.ToString(g.GroupId), aws.ToString(g.Description))
		}
	}
	slices.Sort(out)
	return out
}

// classicTags and nlbTags print tags as k=v, sorted, the cluster and
// service-name tags first.
func classicTags(tags []elbtypes.Tag) []string {
	m := map[string]string{}
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return tagStrings(m)
}

func nlbTags(tags []elbv2types.Tag) []string {
	m := map[string]string{}
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return tagStrings(m)
}

func tagStrings(m map[string]string) []string {
	var first, rest []string
	for k, v := range m {
		kv := k + "=" + v
		if k == clustertag.Key(clusterID) || k == lbnames.ServiceNameTagKey {
			first = append(first, kv)
		} else {
			rest = append(rest, kv)
		}
	}
	slices.Sort(first)
	slices.Sort(rest)
	return append(first, rest...)
}

// subnetNames names subnets by their fixture Name tag (the ID if none).
func (d *demo) subnetNames(ids []string) string {
	var out []string
	for _, id := range sortedCopy(ids) {
		name := id
		for _, sn := range d.fixture.Subnets {
			if sn.ID == id && sn.Tags["Name"] != "" {
				name = sn.Tags["Name"]
			}
		}
		out = append(out, name)
	}
	return strings.Join(out, ", ")
}

func sortedCopy(s []string) []string {
	return slices.Sorted(slices.Values(s))
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
