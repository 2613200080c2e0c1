package lb

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
)

// Node rules a Classic load balancer stops needing when its first security
// group changes (the security-groups annotation or ElbSecurityGroup is
// added, changed or removed): every node group lets the first group in
// ("all traffic from sg-X"), and after the switch the old group's rule has
// to go. Once the load balancer no longer lists the old group, nothing in
// AWS ties that rule to it: a group the Service brought carries no tag of
// the cluster's, and the rule has no description (upstream writes none).
// So the load balancer records what it owes in a tag of its own, written
// before the switch and cleared once the rules are revoked. A failed
// revoke, a CCM restart in between, or the Service's deletion then still
// finds them. The tag is read with the load balancer's other tags, which
// every Ensure and every Delete read anyway: no extra call in a steady
// state, one AddTags before a switch and one after it.
//
// Upstream revokes nothing on a switch: the old group's rules stay in the
// node groups for good.

// owedTagKey is the Classic load balancer's tag listing the security
// groups whose node rules it still owes a revocation: space-separated
// group IDs, ":managed" after its own k8s-elb-<name> group (every rule
// referencing that one goes, not only the node rule). An empty value owes
// nothing. It MUST NOT change: a CCM of another version reads it.
const owedTagKey = "awsccmctl.io/node-rules-to-revoke"

// owedManagedSuffix marks the managed group in owedTagKey's value.
const owedManagedSuffix = ":managed"

// maxLBTagValue is the longest tag value AWS accepts on a load balancer.
const maxLBTagValue = 256

var owedEntry = regexp.MustCompile(`^sg-[0-9A-Za-z]+$`)

// owedRevokes is what one load balancer owes, as recorded on it.
type owedRevokes struct {
	lb string
	// groups maps each group ID to whether it is the managed group.
	groups map[string]bool
	// written is the tag's value in AWS.
	written string
}

// readOwed parses the owedTagKey tag of the load balancer lb (tags are
// its tags). A value this CCM did not write is an error naming it: a
// guess could leave rules behind or revoke someone else's.
func readOwed(lb string, tags map[string]string) (*owedRevokes, error) {
	o := &owedRevokes{lb: lb, groups: map[string]bool{}, written: tags[owedTagKey]}
	for _, f := range strings.Fields(o.written) {
		id, managed := strings.CutSuffix(f, owedManagedSuffix)
		if !owedEntry.MatchString(id) {
			return nil, fmt.Errorf("the tag %s of load balancer %s is %q, and %q in it is not a security group ID; fix or remove the tag", owedTagKey, lb, o.written, f)
		}
		o.owe(id, managed)
	}
	return o, nil
}

// owe adds group (managed: the load balancer's own group) to what is owed.
func (o *owedRevokes) owe(group string, managed bool) {
	o.groups[group] = o.groups[group] || managed
}

// value renders groups as the tag's value, sorted.
func (o *owedRevokes) value() string {
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(o.groups)) {
		if o.groups[id] {
			id += owedManagedSuffix
		}
		parts = append(parts, id)
	}
	return strings.Join(parts, " ")
}

// record writes what is owed to the load balancer when it differs from
// what the tag says (AddTags also overwrites; an empty value owes
// nothing, and needs no RemoveTags, which upstream's policy lacks).
func (r *Reconciler) recordOwed(ctx context.Context, o *owedRevokes) error {
	v := o.value()
	if v == o.written {
		return nil
	}
	if len(v) > maxLBTagValue {
		return fmt.Errorf("load balancer %s cannot record more node rules to revoke (%s): revoking them keeps failing; see the earlier errors", o.lb, v)
	}
	if _, err := r.ELB.AddTags(ctx, &elb.AddTagsInput{LoadBalancerNames: []string{o.lb}, Tags: []elbtypes.Tag{{Key: aws.String(owedTagKey), Value: aws.String(v)}}}); err != nil {
		return fmt.Errorf("record on Classic load balancer %s the node rules to revoke (%s): %w", o.lb, v, err)
	}
	o.written = v
	return nil
}

// settleOwed revokes what o owes for every group but first, the load
// balancer's current first group (the one node groups must let in), and
// records that nothing is owed any more. targets are the sync's.
func (r *Reconciler) settleOwed(ctx context.Context, svc *corev1.Service, o *owedRevokes, first string, targets []target) error {
	if err := r.revokeOwed(ctx, svc, o, first, targets); err != nil {
		return err
	}
	return r.recordOwed(ctx, o)
}

// revokeOwed revokes what o owes for every group but first and forgets
// each group done; the load balancer's tag is left as it is (Delete
// deletes the load balancer next).
func (r *Reconciler) revokeOwed(ctx context.Context, svc *corev1.Service, o *owedRevokes, first string, targets []target) error {
	for _, id := range slices.Sorted(maps.Keys(o.groups)) {
		if id != first {
			if err := r.revokeNodeRulesFor(ctx, svc, o.lb, id, o.groups[id], targets); err != nil {
				return err
			}
		}
		delete(o.groups, id)
	}
	return nil
}

// revokeNodeRulesFor revokes the rules letting group in that the Classic
// load balancer lb wrote into node groups. For its managed group that is
// every rule referencing it, wherever it is (no one else references it).
// A group the Service brought may be shared: its rule stays while another
// Classic load balancer has it first, and only the rule lb writes (all
// traffic from the group) is revoked, and only from node groups (the
// targets' groups and the cluster's), never from a group the user let it
// into for something else.
func (r *Reconciler) revokeNodeRulesFor(ctx context.Context, svc *corev1.Service, lb, group string, managed bool, targets []target) error {
	if r.Options.DisableSecurityGroupIngress {
		return nil
	}
	if !managed {
		other, err := r.classicUsingFirst(ctx, lb, group)
		if err != nil {
			return err
		}
		if other != "" {
			klog.V(2).InfoS("Keeping the node rules of a security group another load balancer lets in", "service", klog.KObj(svc), "group", group, "loadBalancer", other)
			return nil
		}
	}
	found, err := r.describeGroups(ctx, []ec2types.Filter{
		{Name: aws.String("ip-permission.group-id"), Values: []string{group}},
		{Name: aws.String("vpc-id"), Values: []string{r.Env.VPCID}},
	})
	if err != nil {
		return err
	}
	nodeGroups := map[string]bool{}
	for _, t := range targets {
		for _, id := range t.Groups {
			nodeGroups[id] = true
		}
	}
	owns := func(x rule) bool {
		return x.Group == group && (managed || x.key() == rule{Protocol: "-1", Group: group})
	}
	for _, id := range slices.Sorted(maps.Keys(found)) {
		g := found[id]
		if !managed && !nodeGroups[id] && !clustertag.Has(g.tags, r.Env.ClusterID) {
			continue
		}
		if err := r.syncIngress(ctx, g, nil, owns); err != nil {
			return err
		}
	}
	klog.InfoS("Revoked the node rules of a security group the load balancer no longer uses", "service", klog.KObj(svc), "group", group)
	return nil
}

// classicUsingFirst returns the name of a Classic load balancer other than
// lb in the cluster's VPC whose first security group is group, or "". It
// lists the region's Classic load balancers: it runs only when a load
// balancer stops using a group the Service brought.
func (r *Reconciler) classicUsingFirst(ctx context.Context, lb, group string) (string, error) {
	in := &elb.DescribeLoadBalancersInput{}
	for {
		page, err := r.ELB.DescribeLoadBalancers(ctx, in)
		if err != nil {
			return "", fmt.Errorf("list Classic load balancers to see who else uses security group %s: %w", group, err)
		}
		for _, d := range page.LoadBalancerDescriptions {
			name := aws.ToString(d.LoadBalancerName)
			if name == lb || (aws.ToString(d.VPCId) != "" && aws.ToString(d.VPCId) != r.Env.VPCID) {
				continue
			}
			if len(d.SecurityGroups) > 0 && d.SecurityGroups[0] == group {
				return name, nil
			}
		}
		if aws.ToString(page.NextMarker) == "" {
			return "", nil
		}
		in = &elb.DescribeLoadBalancersInput{Marker: page.NextMarker}
	}
}
