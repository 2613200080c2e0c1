package lb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/awsccmctl/awsccmctl/internal/lbconfig"
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

// NLB attribute keys.
const (
	attrCrossZone      = "load_balancing.cross_zone.enabled"
	attrAccessLogs     = "access_logs.s3.enabled"
	attrAccessLogsBkt  = "access_logs.s3.bucket"
	attrAccessLogsPfx  = "access_logs.s3.prefix"
	attrPreserveClient = "preserve_client_ip.enabled"
	attrProxyV2        = "proxy_protocol_v2.enabled"
)

// describeNLB returns the network load balancer called name, or nil.
func (r *Reconciler) describeNLB(ctx context.Context, name string) (*elbv2types.LoadBalancer, error) {
	out, err := r.ELBv2.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{Names: []string{name}})
	if err != nil {
		if isCode(err, codeLBNotFoundClassic) {
			return nil, nil
		}
		return nil, fmt.Errorf("describe load balancer %s: %w", name, err)
	}
	for i := range out.LoadBalancers {
		lb := &out.LoadBalancers[i]
		if aws.ToString(lb.LoadBalancerName) != name {
			continue
		}
		if lb.Type != elbv2types.LoadBalancerTypeEnumNetwork {
			return nil, fmt.Errorf("load balancer %s is of type %s, not network; it is not this CCM's", name, lb.Type)
		}
		return lb, nil
	}
	return nil, nil
}

// nlbState is what one sync knows of an NLB.
type nlbState struct {
	lb        *elbv2types.LoadBalancer
	created   bool
	listeners []elbv2types.Listener
	groups    map[string]*elbv2types.TargetGroup // by ARN
	// fresh are target groups created in this sync: their targets are known.
	fresh map[string]bool
	// used are the target groups the listeners forward to after the sync.
	used map[string]bool
	// cleanupErr is the failure to delete a target group no listener uses
	// any more: the rest of the sync goes on (a new node port must still
	// be opened), and Ensure returns it at the end.
	cleanupErr error
}

// ensureNLB creates the NLB if it is missing, then changes whatever
// differs from cfg, and returns its DNS name.
func (r *Reconciler) ensureNLB(ctx context.Context, svc *corev1.Service, cfg *lbconfig.Config, targets []target) (string, error) {
	st := &nlbState{groups: map[string]*elbv2types.TargetGroup{}, fresh: map[string]bool{}}
	lb, err := r.describeNLB(ctx, cfg.Name)
	if err != nil {
		return "", err
	}
	if lb == nil {
		if lb, err = r.createNLB(ctx, svc, cfg); err != nil {
			return "", err
		}
		st.created = true
	} else {
		r.warnNoNLBGroup(svc, cfg, lb)
		if err := r.loadNLB(ctx, st, lb); err != nil {
			return "", err
		}
		if err := r.syncNLBTags(ctx, svc, cfg, lb); err != nil {
			return "", err
		}
		r.keepScheme(svc, cfg, string(lb.Scheme))
	}
	st.lb = lb
	if err := r.syncNLBListeners(ctx, svc, cfg, st, targets); err != nil {
		return "", err
	}
	if st.cleanupErr == nil && r.targetGroupSweepPending(cfg.Name) {
		st.cleanupErr = r.sweepTargetGroups(ctx, svc, aws.ToString(lb.LoadBalancerArn), st.used)
	}
	if err := r.syncNLBAttributes(ctx, cfg, st); err != nil {
		return "", err
	}
	if err := r.syncNLBNodeRules(ctx, svc, cfg, st, targets, true); err != nil {
		return "", err
	}
	if st.cleanupErr != nil {
		// The load balancer serves as asked; only an old target group is
		// left. The error makes the service controller retry.
		return "", st.cleanupErr
	}
	return aws.ToString(lb.DNSName), nil
}

// loadNLB reads the listeners and target groups of an existing NLB.
func (r *Reconciler) loadNLB(ctx context.Context, st *nlbState, lb *elbv2types.LoadBalancer) error {
	ls, err := r.ELBv2.DescribeListeners(ctx, &elbv2.DescribeListenersInput{LoadBalancerArn: lb.LoadBalancerArn})
	if err != nil {
		return fmt.Errorf("describe listeners of %s: %w", aws.ToString(lb.LoadBalancerName), err)
	}
	st.listeners = ls.Listeners
	tgs, err := r.ELBv2.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{LoadBalancerArn: lb.LoadBalancerArn})
	if err != nil {
		return fmt.Errorf("describe target groups of %s: %w", aws.ToString(lb.LoadBalancerName), err)
	}
	for i := range tgs.TargetGroups {
		st.groups[aws.ToString(tgs.TargetGroups[i].TargetGroupArn)] = &tgs.TargetGroups[i]
	}
	return nil
}

// updateNLB brings the targets of every target group, and the node rules,
// up to date; listeners and attributes are left alone (upstream runs the
// whole ensure here).
func (r *Reconciler) updateNLB(ctx context.Context, svc *corev1.Service, cfg *lbconfig.Config, targets []target) error {
	lb, err := r.describeNLB(ctx, cfg.Name)
	if err != nil {
		return err
	}
	if lb == nil {
		return fmt.Errorf("load balancer %s does not exist yet", cfg.Name)
	}
	st := &nlbState{lb: lb, groups: map[string]*elbv2types.TargetGroup{}, fresh: map[string]bool{}}
	tgs, err := r.ELBv2.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{LoadBalancerArn: lb.LoadBalancerArn})
	if err != nil {
		return fmt.Errorf("describe target groups of %s: %w", cfg.Name, err)
	}
	if cfg.Valid(lbconfig.KeyTargetNodeLabels) {
		for i := range tgs.TargetGroups {
			if err := r.syncTargets(ctx, &tgs.TargetGroups[i], targets, false); err != nil {
				return err
			}
		}
	}
	return r.syncNLBNodeRules(ctx, svc, cfg, st, targets, false)
}

// createNLB creates the load balancer in its subnets (with the Service's
// Elastic IPs or private addresses, and under NLBSecurityGroupMode =
// Managed its security group, which can only be set now).
func (r *Reconciler) createNLB(ctx context.Context, svc *corev1.Service, cfg *lbconfig.Config) (*elbv2types.LoadBalancer, error) {
	if len(cfg.Listeners) == 0 {
		return nil, fmt.Errorf("the Service has no port with a node port to balance")
	}
	for _, k := range []string{lbconfig.KeySubnets, lbconfig.KeyEIPAllocations, lbconfig.KeyPrivateIPv4Addresses} {
		if !cfg.Valid(k) {
			return nil, fmt.Errorf("not creating the load balancer while %s is invalid: it cannot be changed after creation", k)
		}
	}
	subnets, err := r.subnetsFor(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if n := len(cfg.EIPAllocations); n > 0 && n != len(subnets) {
		return nil, fmt.Errorf("%s lists %d allocations but the load balancer gets %d subnets (%s); give one per subnet", lbconfig.KeyEIPAllocations, n, len(subnets), strings.Join(subnetIDs(subnets), ", "))
	}
	if n := len(cfg.PrivateIPv4Addresses); n > 0 && n != len(subnets) {
		return nil, fmt.Errorf("%s lists %d addresses but the load balancer gets %d subnets (%s); give one per subnet", lbconfig.KeyPrivateIPv4Addresses, n, len(subnets), strings.Join(subnetIDs(subnets), ", "))
	}
	in := &elbv2.CreateLoadBalancerInput{
		Name: aws.String(cfg.Name),
		Type: elbv2types.LoadBalancerTypeEnumNetwork,
		Tags: elbv2TagList(r.ownedTags(svc, cfg)),
	}
	if cfg.Scheme == lbconfig.SchemeInternal {
		in.Scheme = elbv2types.LoadBalancerSchemeEnumInternal
	}
	if r.Options.NLBManagedSecurityGroups {
		// Made before the load balancer, which needs its ID. Should the
		// creation below fail, the group is found again by name: by the
		// next sync, which uses it, or by Get and Delete as a leftover.
		g, err := r.ensureNLBGroup(ctx, svc, cfg)
		if err != nil {
			return nil, err
		}
		in.SecurityGroups = []string{g.id}
	}
	for i, s := range subnets {
		m := elbv2types.SubnetMapping{SubnetId: aws.String(s.ID)}
		if len(cfg.EIPAllocations) > 0 {
			m.AllocationId = aws.String(cfg.EIPAllocations[i])
		}
		if len(cfg.PrivateIPv4Addresses) > 0 {
			m.PrivateIPv4Address = aws.String(cfg.PrivateIPv4Addresses[i])
		}
		in.SubnetMappings = append(in.SubnetMappings, m)
	}
	out, err := r.ELBv2.CreateLoadBalancer(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("create load balancer %s: %w", cfg.Name, err)
	}
	if len(out.LoadBalancers) != 1 {
		return nil, fmt.Errorf("create load balancer %s: AWS returned %d load balancers", cfg.Name, len(out.LoadBalancers))
	}
	lb := &out.LoadBalancers[0]
	if len(lb.SecurityGroups) == 0 {
		// The rest of this sync sets up the group's rules from the load
		// balancer's groups; do not depend on the response echoing them.
		lb.SecurityGroups = in.SecurityGroups
	}
	klog.InfoS("Created network load balancer", "service", klog.KObj(svc), "name", cfg.Name, "dns", aws.ToString(lb.DNSName), "subnets", subnetIDs(subnets), "securityGroups", lb.SecurityGroups)
	return lb, nil
}

// syncNLBTags checks the NLB is this Service's and adds tags it lacks
// (additional-resource-tags added later, say), as upstream does. Listeners
// get their tags when they are created (syncListener) and are otherwise
// left as found: the in-tree provider tagged none, and upstream does not
// tag an adopted NLB's listeners either, so a migration adopts them
// without a single write.
func (r *Reconciler) syncNLBTags(ctx context.Context, svc *corev1.Service, cfg *lbconfig.Config, lb *elbv2types.LoadBalancer) error {
	lbARN := aws.ToString(lb.LoadBalancerArn)
	have, err := r.tagsOf(ctx, lbARN)
	if err != nil {
		return err
	}
	if err := r.ownership(have[lbARN], svc); err != nil {
		r.Events.Eventf(svc, corev1.EventTypeWarning, ReasonForeignResource, "load balancer %s: %v", cfg.Name, err)
		return fmt.Errorf("load balancer %s is not this Service's: %w", cfg.Name, err)
	}
	want := r.ownedTags(svc, nil)
	if cfg.Valid(lbconfig.KeyAdditionalResourceTags) {
		want = r.ownedTags(svc, cfg)
	}
	if missing := missingTags(have[lbARN], want); len(missing) > 0 {
		if _, err := r.ELBv2.AddTags(ctx, &elbv2.AddTagsInput{ResourceArns: []string{lbARN}, Tags: elbv2TagList(missing)}); err != nil {
			return fmt.Errorf("tag load balancer %s: %w", cfg.Name, err)
		}
	}
	return nil
}

// tagsOf reads the tags of up to 20 ELBv2 resources.
func (r *Reconciler) tagsOf(ctx context.Context, arns ...string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for start := 0; start < len(arns); start += 20 {
		got, err := r.ELBv2.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: arns[start:min(start+20, len(arns))]})
		if err != nil {
			return nil, fmt.Errorf("describe tags: %w", err)
		}
		for _, d := range got.TagDescriptions {
			m := map[string]string{}
			for _, t := range d.Tags {
				m[aws.ToString(t.Key)] = aws.ToString(t.Value)
			}
			out[aws.ToString(d.ResourceArn)] = m
		}
	}
	return out, nil
}

// syncNLBAttributes changes cross-zone and access logs only when they
// differ from what cfg asks.
func (r *Reconciler) syncNLBAttributes(ctx context.Context, cfg *lbconfig.Config, st *nlbState) error {
	arn := st.lb.LoadBalancerArn
	out, err := r.ELBv2.DescribeLoadBalancerAttributes(ctx, &elbv2.DescribeLoadBalancerAttributesInput{LoadBalancerArn: arn})
	if err != nil {
		return fmt.Errorf("describe attributes of %s: %w", cfg.Name, err)
	}
	have := map[string]string{}
	for _, a := range out.Attributes {
		have[aws.ToString(a.Key)] = aws.ToString(a.Value)
	}
	want := map[string]string{}
	if cfg.Valid(lbconfig.KeyCrossZoneLoadBalancing) {
		want[attrCrossZone] = fmt.Sprint(cfg.CrossZone)
	}
	if cfg.Valid(lbconfig.KeyAccessLogEnabled, lbconfig.KeyAccessLogS3BucketName, lbconfig.KeyAccessLogS3BucketPrefix) {
		if al := cfg.AccessLogs; al != nil {
			want[attrAccessLogs], want[attrAccessLogsBkt], want[attrAccessLogsPfx] = "true", al.Bucket, al.Prefix
		} else {
			// AWS refuses an empty bucket; leave bucket and prefix as they are.
			want[attrAccessLogs] = "false"
		}
	}
	var change []elbv2types.LoadBalancerAttribute
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if have[k] != want[k] {
			change = append(change, elbv2types.LoadBalancerAttribute{Key: aws.String(k), Value: aws.String(want[k])})
		}
	}
	if len(change) == 0 {
		return nil
	}
	if _, err := r.ELBv2.ModifyLoadBalancerAttributes(ctx, &elbv2.ModifyLoadBalancerAttributesInput{LoadBalancerArn: arn, Attributes: change}); err != nil {
		return fmt.Errorf("modify attributes of %s: %w", cfg.Name, err)
	}
	return nil
}

// syncNLBNodeRules opens the node ports to the clients (and the health
// checks to the load balancer's subnets) in the node security groups,
// with upstream's rule descriptions so existing rules are adopted. An NLB
// with a managed security group is let in by that group instead, and with
// frontend (Ensure, not Update) the group's own ingress follows the
// Service's listeners and source ranges. One describe serves the load
// balancer's groups and the targets'.
func (r *Reconciler) syncNLBNodeRules(ctx context.Context, svc *corev1.Service, cfg *lbconfig.Config, st *nlbState, targets []target, frontend bool) error {
	sourcesValid := cfg.Valid(lbconfig.FieldLoadBalancerSourceRanges, lbconfig.KeySourceRanges)
	nodes := !r.Options.DisableSecurityGroupIngress && sourcesValid && cfg.Valid(healthCheckKeys...)
	frontend = frontend && sourcesValid && len(st.lb.SecurityGroups) > 0
	if !nodes && !frontend {
		return nil
	}
	ids := slices.Clone(st.lb.SecurityGroups)
	for _, t := range targets {
		ids = append(ids, t.Groups...)
	}
	known, err := r.groupsByID(ctx, ids)
	if err != nil {
		return err
	}
	managed := r.nlbManagedGroup(svc, st.lb, known)
	if frontend && managed != nil {
		if err := r.syncIngress(ctx, managed, nlbFrontendRules(cfg), func(rule) bool { return true }); err != nil {
			return err
		}
	}
	if !nodes {
		return nil
	}
	spec, err := r.nlbNodeRules(ctx, cfg, st.lb, managed)
	if err != nil {
		return err
	}
	return r.syncNodeRules(ctx, svc, spec, targets, known)
}

// nlbNodeRules are the NLB's rules in node groups: from the client CIDRs
// and the load balancer's subnets, or from managed, its managed group.
func (r *Reconciler) nlbNodeRules(ctx context.Context, cfg *lbconfig.Config, lb *elbv2types.LoadBalancer, managed *group) (nodeRules, error) {
	name := cfg.Name
	clientDesc, healthDesc := nlbClientRuleDesc+"="+name, nlbHealthRuleDesc+"="+name
	spec := nodeRules{lbName: name, mtu: true, stale: r.clusterGroupsFilter(), owns: nlbRuleOwner(name)}
	proto := "tcp"
	var clientPorts, healthPorts []int32
	for _, l := range cfg.Listeners {
		if l.Protocol == lbconfig.ProtocolUDP {
			proto = "udp"
		}
		clientPorts = append(clientPorts, l.NodePort)
		hp := l.NodePort
		if cfg.HealthCheck.Port != lbconfig.HealthCheckTrafficPort {
			var n int32
			if _, err := fmt.Sscan(cfg.HealthCheck.Port, &n); err == nil {
				hp = n
			}
		}
		healthPorts = append(healthPorts, hp)
	}
	clientPorts, healthPorts = uniqueSortedPorts(clientPorts), uniqueSortedPorts(healthPorts)
	if managed != nil {
		return nlbGroupNodeRules(spec, cfg, managed.id, clientPorts, healthPorts, proto), nil
	}
	for _, p := range clientPorts {
		for _, src := range cfg.SourceRanges {
			spec.want = append(spec.want, sourceRule(rule{Protocol: proto, From: p, To: p, Desc: clientDesc}, src))
		}
	}
	// Health checks come from the load balancer's subnets; upstream skips
	// these rules when the client rules already let everything in.
	covered := proto == "tcp" && slices.Equal(cfg.SourceRanges, []string{lbconfig.DefaultSourceRange}) && slices.Equal(clientPorts, healthPorts)
	if !covered {
		all, err := r.network.get(ctx, false)
		if err != nil {
			return spec, err
		}
		var cidrs []string
		for _, az := range lb.AvailabilityZones {
			for _, s := range all {
				if s.ID == aws.ToString(az.SubnetId) && s.CIDR != "" {
					cidrs = append(cidrs, s.CIDR)
				}
			}
		}
		for _, p := range healthPorts {
			for _, c := range uniqueSorted(cidrs) {
				spec.want = append(spec.want, rule{Protocol: "tcp", From: p, To: p, CIDR: c, Desc: healthDesc})
			}
		}
	}
	return spec, nil
}

func uniqueSortedPorts(ps []int32) []int32 {
	out := slices.Clone(ps)
	slices.Sort(out)
	return slices.Compact(out)
}

func elbv2TagList(tags []tag) []elbv2types.Tag {
	out := make([]elbv2types.Tag, len(tags))
	for i, t := range tags {
		out[i] = elbv2types.Tag{Key: aws.String(t.Key), Value: aws.String(t.Value)}
	}
	return out
}

// deleteNLB deletes the NLB's rules in node groups, the NLB (with its
// listeners), its target groups, including groups a half-finished sync
// left unattached and groups an earlier failed delete left behind, found
// by their tags, and last its managed security group (see
// ownServiceGroups), which AWS frees once the load balancer is gone. seen
// is what the Get just before found (nil: describe the NLB here).
//
// One listing of the region's target groups serves both the NLB's own (the
// groups it forwards to) and the leftovers, and one DescribeTags call (20
// ARNs a call) reads the NLB's tags with the candidates'.
func (r *Reconciler) deleteNLB(ctx context.Context, svc *corev1.Service, managed *group, seen *lookup) error {
	name := lbnames.LoadBalancerName(svc)
	var lb *elbv2types.LoadBalancer
	if seen != nil && seen.nlbKnown {
		lb = seen.nlb
	} else {
		var err error
		if lb, err = r.describeNLB(ctx, name); err != nil {
			return err
		}
	}
	// Without the NLB itself, only these can leave parts of one behind.
	mayHaveParts := managed != nil || svc.Annotations[lbnames.TypeAnnotation] == lbnames.TypeNLB || r.targetGroupSweepPending(name)
	if lb == nil && !mayHaveParts {
		return nil // never an NLB Service, or nothing of its NLB is left
	}
	lbARN := ""
	if lb != nil {
		lbARN = aws.ToString(lb.LoadBalancerArn)
	}
	all, err := r.vpcTargetGroups(ctx, svc)
	if err != nil {
		return err
	}
	candidates := unusedTargetGroups(all, lbARN)
	read := candidates
	if lb != nil {
		read = append([]string{lbARN}, candidates...)
	}
	var tags map[string]map[string]string
	if len(read) > 0 {
		if tags, err = r.tagsOf(ctx, read...); err != nil {
			return err
		}
	}
	if lb != nil {
		if err := r.ownership(tags[lbARN], svc); err != nil {
			r.Events.Eventf(svc, corev1.EventTypeWarning, ReasonForeignResource, "load balancer %s is not deleted: %v", name, err)
			klog.InfoS("Leaving a network load balancer that is not the Service's", "service", klog.KObj(svc), "name", name, "reason", err.Error())
			// Its listeners and target groups are left too: only groups
			// no load balancer uses remain candidates.
			lb, lbARN, candidates = nil, "", unusedTargetGroups(all, "")
			if !mayHaveParts {
				return nil
			}
		}
	}
	if !r.Options.DisableSecurityGroupIngress {
		managedID := ""
		if managed != nil {
			managedID = managed.id
		}
		if err := r.deleteNLBRules(ctx, name, managedID); err != nil {
			return err
		}
	}
	var arns []string
	if lb != nil {
		for _, tg := range all {
			if slices.Contains(tg.LoadBalancerArns, lbARN) {
				arns = append(arns, aws.ToString(tg.TargetGroupArn))
			}
		}
		if _, err := r.ELBv2.DeleteLoadBalancer(ctx, &elbv2.DeleteLoadBalancerInput{LoadBalancerArn: lb.LoadBalancerArn}); err != nil {
			return fmt.Errorf("delete load balancer %s: %w", name, err)
		}
		klog.InfoS("Deleted network load balancer", "service", klog.KObj(svc), "name", name)
	}
	var errs []error
	for _, arn := range uniqueSorted(append(arns, r.taggedFor(svc, candidates, tags)...)) {
		errs = append(errs, r.deleteTargetGroup(ctx, name, arn))
	}
	tgErr := errors.Join(errs...)
	if tgErr == nil {
		r.targetGroupsSwept(name)
	}
	if managed != nil {
		return errors.Join(tgErr, r.deleteManagedGroup(ctx, managed))
	}
	return tgErr
}
