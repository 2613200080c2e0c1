package lb

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/awsccmctl/awsccmctl/internal/lbconfig"
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

// describeClassic returns the Classic load balancer called name, or nil.
func (r *Reconciler) describeClassic(ctx context.Context, name string) (*elbtypes.LoadBalancerDescription, error) {
	out, err := r.ELB.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{LoadBalancerNames: []string{name}})
	if err != nil {
		if isCode(err, codeAccessPointNotFound, codeLBNotFoundClassic) {
			return nil, nil
		}
		return nil, fmt.Errorf("describe Classic load balancer %s: %w", name, err)
	}
	for i := range out.LoadBalancerDescriptions {
		if aws.ToString(out.LoadBalancerDescriptions[i].LoadBalancerName) == name {
			return &out.LoadBalancerDescriptions[i], nil
		}
	}
	return nil, nil
}

// ensureClassic creates the Classic load balancer if it is missing, then
// changes whatever differs from cfg, and returns its DNS name.
func (r *Reconciler) ensureClassic(ctx context.Context, svc *corev1.Service, cfg *lbconfig.Config, targets []target) (string, error) {
	desc, err := r.describeClassic(ctx, cfg.Name)
	if err != nil {
		return "", err
	}
	created := desc == nil
	owed := &owedRevokes{lb: cfg.Name, groups: map[string]bool{}}
	if created {
		if desc, err = r.createClassic(ctx, svc, cfg); err != nil {
			return "", err
		}
	} else {
		tags, err := r.syncClassicTags(ctx, svc, cfg)
		if err != nil {
			return "", err
		}
		if owed, err = readOwed(cfg.Name, tags); err != nil {
			return "", err
		}
		r.keepScheme(svc, cfg, aws.ToString(desc.Scheme))
	}

	// One describe serves the load balancer's groups and the targets'.
	ids := slices.Clone(desc.SecurityGroups)
	for _, t := range targets {
		ids = append(ids, t.Groups...)
	}
	known, err := r.groupsByID(ctx, ids)
	if err != nil {
		return "", err
	}
	groupIDs, managed := desc.SecurityGroups, r.managedIn(desc.SecurityGroups, cfg)
	if !created {
		if groupIDs, managed, err = r.classicGroups(ctx, svc, cfg, desc, known); err != nil {
			return "", err
		}
	}
	if managed != "" && cfg.Valid(lbconfig.FieldLoadBalancerSourceRanges) && cfg.Valid(lbconfig.KeySourceRanges) {
		g := known[managed]
		if g == nil {
			g = &group{id: managed}
		}
		if err := r.syncIngress(ctx, g, clientRules(cfg), func(rule) bool { return true }); err != nil {
			return "", err
		}
	}
	if !created {
		if len(groupIDs) > 0 && len(desc.SecurityGroups) > 0 && desc.SecurityGroups[0] != groupIDs[0] && !r.Options.DisableSecurityGroupIngress {
			// Node groups let the old first group in: the rules go once the
			// new one is in. Recorded on the load balancer before the
			// switch, as no later sync (of this process or another) sees
			// the old group any more (classic_revoke.go).
			// A group named like the managed one that the cluster does not
			// own is not the load balancer's: its rules stay.
			before := desc.SecurityGroups[0]
			if named := r.namedManaged(cfg.Name, []string{before}, known); named == nil || r.ownedManaged(svc, cfg.Name, named) != nil {
				owed.owe(before, named != nil)
				if err := r.recordOwed(ctx, owed); err != nil {
					return "", err
				}
			}
		}
		if err := r.syncClassicShape(ctx, cfg, desc, groupIDs); err != nil {
			return "", err
		}
	}
	if err := r.syncClassicPolicies(ctx, cfg, desc); err != nil {
		return "", err
	}
	if cfg.Valid(healthCheckKeys...) {
		if err := r.syncClassicHealthCheck(ctx, cfg, desc); err != nil {
			return "", err
		}
	}
	if err := r.syncClassicAttributes(ctx, cfg); err != nil {
		return "", err
	}
	if err := r.syncClassicInstances(ctx, cfg, desc, targets); err != nil {
		return "", err
	}
	if err := r.syncNodeRules(ctx, svc, r.classicNodeRules(cfg.Name, groupIDs, managed), targets, known); err != nil {
		return "", err
	}
	if len(groupIDs) > 0 {
		if err := r.settleOwed(ctx, svc, owed, groupIDs[0], targets); err != nil {
			return "", err
		}
	}
	return aws.ToString(desc.DNSName), nil
}

// updateClassic registers and deregisters instances and keeps the node
// rules in step; the rest of the load balancer is left alone.
func (r *Reconciler) updateClassic(ctx context.Context, svc *corev1.Service, cfg *lbconfig.Config, targets []target) error {
	desc, err := r.describeClassic(ctx, cfg.Name)
	if err != nil {
		return err
	}
	if desc == nil {
		return fmt.Errorf("Classic load balancer %s does not exist yet", cfg.Name) //nolint:staticcheck // ST1005: "Classic" is the product's name, not a capitalised sentence
	}
	if err := r.syncClassicInstances(ctx, cfg, desc, targets); err != nil {
		return err
	}
	ids := slices.Clone(desc.SecurityGroups)
	for _, t := range targets {
		ids = append(ids, t.Groups...)
	}
	known, err := r.groupsByID(ctx, ids)
	if err != nil {
		return err
	}
	managed := ""
	if g := r.ownedManaged(svc, cfg.Name, r.namedManaged(cfg.Name, desc.SecurityGroups, known)); g != nil {
		managed = g.id
	}
	return r.syncNodeRules(ctx, svc, r.classicNodeRules(cfg.Name, desc.SecurityGroups, managed), targets, known)
}

// createClassic creates the load balancer with its listeners, subnets,
// security groups and tags, and returns a description of what it made.
func (r *Reconciler) createClassic(ctx context.Context, svc *corev1.Service, cfg *lbconfig.Config) (*elbtypes.LoadBalancerDescription, error) {
	if len(cfg.Listeners) == 0 {
		return nil, fmt.Errorf("the Service has no port with a node port to balance")
	}
	if !cfg.Valid(lbconfig.KeySubnets) {
		return nil, fmt.Errorf("not creating the load balancer while %s is invalid: its subnets would be wrong", lbconfig.KeySubnets)
	}
	subnets, err := r.subnetsFor(ctx, cfg)
	if err != nil {
		return nil, err
	}
	groupIDs, _, err := r.classicGroups(ctx, svc, cfg, nil, nil)
	if err != nil {
		return nil, err
	}
	in := &elb.CreateLoadBalancerInput{
		LoadBalancerName: aws.String(cfg.Name),
		Listeners:        classicListeners(cfg),
		Subnets:          subnetIDs(subnets),
		SecurityGroups:   groupIDs,
		Tags:             elbTagList(r.ownedTags(svc, cfg)),
	}
	if cfg.Scheme == lbconfig.SchemeInternal {
		in.Scheme = aws.String(string(lbconfig.SchemeInternal))
	}
	out, err := r.ELB.CreateLoadBalancer(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("create Classic load balancer %s: %w", cfg.Name, err)
	}
	klog.InfoS("Created Classic load balancer", "service", klog.KObj(svc), "name", cfg.Name, "dns", aws.ToString(out.DNSName), "subnets", in.Subnets)
	desc := &elbtypes.LoadBalancerDescription{LoadBalancerName: in.LoadBalancerName, DNSName: out.DNSName, Subnets: in.Subnets, SecurityGroups: groupIDs}
	for _, l := range in.Listeners {
		desc.ListenerDescriptions = append(desc.ListenerDescriptions, elbtypes.ListenerDescription{Listener: &l})
	}
	return desc, nil
}

// syncClassicTags checks the load balancer is this Service's and adds the
// tags it lacks (additional tags, and the cluster tag on an untagged one).
// It returns the tags as they were.
func (r *Reconciler) syncClassicTags(ctx context.Context, svc *corev1.Service, cfg *lbconfig.Config) (map[string]string, error) {
	have, err := r.classicTags(ctx, cfg.Name)
	if err != nil {
		return nil, err
	}
	if err := r.ownership(have, svc); err != nil {
		r.Events.Eventf(svc, corev1.EventTypeWarning, ReasonForeignResource, "Classic load balancer %s: %v", cfg.Name, err)
		return nil, fmt.Errorf("Classic load balancer %s is not this Service's: %w", cfg.Name, err) //nolint:staticcheck // ST1005: "Classic" is the product's name, not a capitalised sentence
	}
	want := r.ownedTags(svc, nil)
	if cfg.Valid(lbconfig.KeyAdditionalResourceTags) {
		want = r.ownedTags(svc, cfg)
	}
	if missing := missingTags(have, want); len(missing) > 0 {
		if _, err := r.ELB.AddTags(ctx, &elb.AddTagsInput{LoadBalancerNames: []string{cfg.Name}, Tags: elbTagList(missing)}); err != nil {
			return nil, fmt.Errorf("tag Classic load balancer %s: %w", cfg.Name, err)
		}
	}
	return have, nil
}

// classicTags reads the tags of the Classic load balancer called name.
func (r *Reconciler) classicTags(ctx context.Context, name string) (map[string]string, error) {
	out, err := r.ELB.DescribeTags(ctx, &elb.DescribeTagsInput{LoadBalancerNames: []string{name}})
	if err != nil {
		return nil, fmt.Errorf("describe tags of Classic load balancer %s: %w", name, err)
	}
	have := map[string]string{}
	for _, d := range out.TagDescriptions {
		for _, t := range d.Tags {
			have[aws.ToString(t.Key)] = aws.ToString(t.Value)
		}
	}
	return have, nil
}

// classicGroups returns the load balancer's security groups, in order, and
// the managed group's ID ("" when the Service or cloud config brings its
// own). desc is the existing load balancer (nil when creating one) and
// known its groups as described: the managed group is recognised among
// them by name, so an unchanged sync does not search for it, and used
// only when the cluster owns it (ownedGroup). With invalid group
// annotations an existing load balancer keeps its groups.
func (r *Reconciler) classicGroups(ctx context.Context, svc *corev1.Service, cfg *lbconfig.Config, desc *elbtypes.LoadBalancerDescription, known map[string]*group) ([]string, string, error) {
	var named *group
	if desc != nil {
		named = r.namedManaged(cfg.Name, desc.SecurityGroups, known)
	}
	if !cfg.Valid(lbconfig.KeySecurityGroups) || !cfg.Valid(lbconfig.KeyExtraSecurityGroups) {
		if desc != nil {
			current := ""
			if g := r.ownedManaged(svc, cfg.Name, named); g != nil {
				current = g.id
			}
			return desc.SecurityGroups, current, nil
		}
		return nil, "", fmt.Errorf("not creating the load balancer while its security-group annotations are invalid")
	}
	var ids []string
	managed := ""
	switch {
	case len(cfg.SecurityGroups) > 0:
		ids = slices.Clone(cfg.SecurityGroups)
	case r.Options.ElbSecurityGroup != "":
		ids = []string{r.Options.ElbSecurityGroup}
	case named != nil:
		if err := r.refuseUnowned(svc, named); err != nil {
			return nil, "", err
		}
		ids, managed = []string{named.id}, named.id
	default:
		g, err := r.ensureManagedGroup(ctx, svc, cfg)
		if err != nil {
			return nil, "", err
		}
		if known != nil {
			known[g.id] = g
		}
		ids, managed = []string{g.id}, g.id
	}
	for _, id := range cfg.ExtraSecurityGroups {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, managed, nil
}

// namedManaged returns the group among ids, as described in known, that
// carries the load balancer lb's managed group name, or nil.
func (r *Reconciler) namedManaged(lb string, ids []string, known map[string]*group) *group {
	for _, id := range ids {
		if g, ok := known[id]; ok && g.name == lbnames.ClassicSecurityGroupName(lb) {
			return g
		}
	}
	return nil
}

// ownedManaged returns g when it is the load balancer lb's managed group
// and the cluster owns it (ownedGroup), else nil: only then are all of
// its rules, wherever they are, the load balancer's.
func (r *Reconciler) ownedManaged(svc *corev1.Service, lb string, g *group) *group {
	if g == nil || g.name != lbnames.ClassicSecurityGroupName(lb) || r.ownedGroup(g.tags, svc) != nil {
		return nil
	}
	return g
}

// managedIn returns the managed group among ids when cfg uses one.
func (r *Reconciler) managedIn(ids []string, cfg *lbconfig.Config) string {
	if len(cfg.SecurityGroups) > 0 || r.Options.ElbSecurityGroup != "" || len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// clientRules are the managed group's ingress: each listener port from
// each source range, and ICMP "fragmentation needed" for path-MTU
// discovery, as upstream opens them.
func clientRules(cfg *lbconfig.Config) []rule {
	var out []rule
	for _, src := range cfg.SourceRanges {
		for _, l := range cfg.Listeners {
			out = append(out, sourceRule(rule{Protocol: "tcp", From: l.Port, To: l.Port}, src))
		}
		out = append(out, sourceRule(rule{Protocol: "icmp", From: 3, To: 4}, src))
	}
	return out
}

func sourceRule(x rule, cidr string) rule {
	if strings.Contains(cidr, ":") {
		x.IPv6 = cidr
	} else {
		x.CIDR = cidr
	}
	return x
}

// classicNodeRules: node groups let the load balancer's (first) group in
// on all protocols. Only rules referencing the managed group are ever
// revoked: a group the user brings may be shared with other load balancers.
func (r *Reconciler) classicNodeRules(lbName string, groupIDs []string, managed string) nodeRules {
	spec := nodeRules{lbName: lbName, owns: func(rule) bool { return false }}
	if len(groupIDs) == 0 {
		return spec
	}
	spec.want = []rule{{Protocol: "-1", Group: groupIDs[0]}}
	if managed != "" {
		spec.owns = func(x rule) bool { return x.Group == managed }
		spec.stale = []ec2types.Filter{
			{Name: aws.String("ip-permission.group-id"), Values: []string{managed}},
			{Name: aws.String("vpc-id"), Values: []string{r.Env.VPCID}},
		}
	}
	return spec
}

// classicListeners are cfg's listeners in the Classic API's form.
func classicListeners(cfg *lbconfig.Config) []elbtypes.Listener {
	out := make([]elbtypes.Listener, 0, len(cfg.Listeners))
	for _, l := range cfg.Listeners {
		x := elbtypes.Listener{
			Protocol: aws.String(l.Protocol), LoadBalancerPort: l.Port,
			InstanceProtocol: aws.String(l.BackendProtocol), InstancePort: aws.Int32(l.NodePort),
		}
		if l.CertificateARN != "" {
			x.SSLCertificateId = aws.String(l.CertificateARN)
		}
		out = append(out, x)
	}
	return out
}

func elbTagList(tags []tag) []elbtypes.Tag {
	out := make([]elbtypes.Tag, len(tags))
	for i, t := range tags {
		out[i] = elbtypes.Tag{Key: aws.String(t.Key), Value: aws.String(t.Value)}
	}
	return out
}

// deleteClassic deletes the Classic load balancer, its rules in node
// groups and its managed group, in the order that leaves nothing behind:
// rules first (they reference the group), then the load balancer, then the
// group (which AWS frees once the load balancer's interfaces are gone).
// managed is the Service's k8s-elb-<name> group (see ownServiceGroups), or
// nil; notOurs are groups of that name the cluster does not own, whose
// rules are left alone; seen is what the Get just before found (nil:
// describe it here).
func (r *Reconciler) deleteClassic(ctx context.Context, svc *corev1.Service, managed *group, notOurs map[string]bool, seen *lookup) error {
	name := lbnames.LoadBalancerName(svc)
	var desc *elbtypes.LoadBalancerDescription
	if seen != nil {
		desc = seen.classic
	} else {
		var err error
		if desc, err = r.describeClassic(ctx, name); err != nil {
			return err
		}
	}
	owed := &owedRevokes{lb: name, groups: map[string]bool{}}
	if desc != nil {
		tags, err := r.classicTags(ctx, name)
		if err != nil {
			return err
		}
		if err := r.ownership(tags, svc); err != nil {
			r.Events.Eventf(svc, corev1.EventTypeWarning, ReasonForeignResource, "Classic load balancer %s is not deleted: %v", name, err)
			klog.InfoS("Leaving a Classic load balancer that is not the Service's", "service", klog.KObj(svc), "name", name, "reason", err.Error())
			desc = nil
		} else if owed, err = readOwed(name, tags); err != nil {
			return err
		}
	}
	// Node rules go first: every one referencing the managed group, the
	// rule letting in a group the Service brought, unless another load
	// balancer lets the same group in, and those of former first groups
	// the load balancer still owes (classic_revoke.go).
	if managed != nil {
		owed.owe(managed.id, true)
	}
	if desc != nil && len(desc.SecurityGroups) > 0 && !notOurs[desc.SecurityGroups[0]] {
		owed.owe(desc.SecurityGroups[0], false)
	}
	if err := r.revokeOwed(ctx, svc, owed, "", nil); err != nil {
		return err
	}
	if desc != nil {
		if _, err := r.ELB.DeleteLoadBalancer(ctx, &elb.DeleteLoadBalancerInput{LoadBalancerName: aws.String(name)}); err != nil {
			return fmt.Errorf("delete Classic load balancer %s: %w", name, err)
		}
		klog.InfoS("Deleted Classic load balancer", "service", klog.KObj(svc), "name", name)
	}
	if managed != nil {
		return r.deleteManagedGroup(ctx, managed)
	}
	return nil
}
