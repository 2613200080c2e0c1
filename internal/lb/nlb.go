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

// ErrManagedNLBGroupsUnsupported is returned for a new NLB when the cloud
// config asks for NLBSecurityGroupMode=Managed: an NLB created without a
// security group can never get one, so creating it in the default mode
// would silently and permanently ignore the setting.
var ErrManagedNLBGroupsUnsupported = fmt.Errorf("NLBSecurityGroupMode = Managed is not supported by this CCM yet: remove it from the cloud config to create NLBs that open node security groups instead (the default mode)")

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
		if err := r.syncNLBTags(ctx, svc, cfg, lb); err != nil {
			return "", err
		}
		r.keepScheme(svc, cfg, string(lb.Scheme))
		if err := r.loadNLB(ctx, st, lb); err != nil {
			return "", err
		}
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
	if err := r.syncNLBNodeRules(ctx, svc, cfg, st, targets); err != nil {
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
	return r.syncNLBNodeRules(ctx, svc, cfg, st, targets)
}

// createNLB creates the load balancer in its subnets (with the Service's
// Elastic IPs or private addresses, which can only be set now).
func (r *Reconciler) createNLB(ctx context.Context, svc *corev1.Service, cfg *lbconfig.Config) (*elbv2types.LoadBalancer, error) {
	if r.Options.NLBManagedSecurityGroups {
		return nil, ErrManagedNLBGroupsUnsupported
	}
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
	klog.InfoS("Created network load balancer", "service", klog.KObj(svc), "name", cfg.Name, "dns", aws.ToString(lb.DNSName), "subnets", subnetIDs(subnets))
	return lb, nil
}

// syncNLBTags checks the NLB is this Service's and adds missing tags.
func (r *Reconciler) syncNLBTags(ctx context.Context, svc *corev1.Service, cfg *lbconfig.Config, lb *elbv2types.LoadBalancer) error {
	have, err := r.tagsOf(ctx, aws.ToString(lb.LoadBalancerArn))
	if err != nil {
		return err
	}
	if err := r.ownership(have[aws.ToString(lb.LoadBalancerArn)], svc); err != nil {
		r.Events.Eventf(svc, corev1.EventTypeWarning, ReasonForeignResource, "load balancer %s: %v", cfg.Name, err)
		return fmt.Errorf("load balancer %s is not this Service's: %w", cfg.Name, err)
	}
	want := r.ownedTags(svc, nil)
	if cfg.Valid(lbconfig.KeyAdditionalResourceTags) {
		want = r.ownedTags(svc, cfg)
	}
	if missing := missingTags(have[aws.ToString(lb.LoadBalancerArn)], want); len(missing) > 0 {
		if _, err := r.ELBv2.AddTags(ctx, &elbv2.AddTagsInput{ResourceArns: []string{aws.ToString(lb.LoadBalancerArn)}, Tags: elbv2TagList(missing)}); err != nil {
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
// with upstream's rule descriptions so existing rules are adopted.
func (r *Reconciler) syncNLBNodeRules(ctx context.Context, svc *corev1.Service, cfg *lbconfig.Config, st *nlbState, targets []target) error {
	if r.Options.DisableSecurityGroupIngress || !cfg.Valid(lbconfig.FieldLoadBalancerSourceRanges, lbconfig.KeySourceRanges) || !cfg.Valid(healthCheckKeys...) {
		return nil
	}
	var ids []string
	for _, t := range targets {
		ids = append(ids, t.Groups...)
	}
	known, err := r.groupsByID(ctx, ids)
	if err != nil {
		return err
	}
	spec, err := r.nlbNodeRules(ctx, cfg, st.lb)
	if err != nil {
		return err
	}
	return r.syncNodeRules(ctx, svc, spec, targets, known)
}

// nlbNodeRules are the NLB's rules in node groups.
func (r *Reconciler) nlbNodeRules(ctx context.Context, cfg *lbconfig.Config, lb *elbv2types.LoadBalancer) (nodeRules, error) {
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
// listeners) and its target groups, including groups a half-finished sync
// left unattached and groups an earlier failed delete left behind, found
// by their tags.
func (r *Reconciler) deleteNLB(ctx context.Context, svc *corev1.Service) error {
	name := lbnames.LoadBalancerName(svc)
	lb, err := r.describeNLB(ctx, name)
	if err != nil {
		return err
	}
	if lb != nil {
		tags, err := r.tagsOf(ctx, aws.ToString(lb.LoadBalancerArn))
		if err != nil {
			return err
		}
		if err := r.ownership(tags[aws.ToString(lb.LoadBalancerArn)], svc); err != nil {
			r.Events.Eventf(svc, corev1.EventTypeWarning, ReasonForeignResource, "load balancer %s is not deleted: %v", name, err)
			klog.InfoS("Leaving a network load balancer that is not the Service's", "service", klog.KObj(svc), "name", name, "reason", err.Error())
			lb = nil // its listeners and target groups are left too
		}
	}
	if lb == nil && svc.Annotations[lbnames.TypeAnnotation] != lbnames.TypeNLB && !r.targetGroupSweepPending(name) {
		return nil // never an NLB Service, or nothing of its NLB is left
	}
	if !r.Options.DisableSecurityGroupIngress {
		if err := r.deleteNLBRules(ctx, name); err != nil {
			return err
		}
	}
	var arns []string
	lbARN := ""
	if lb != nil {
		lbARN = aws.ToString(lb.LoadBalancerArn)
		tgs, err := r.ELBv2.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{LoadBalancerArn: lb.LoadBalancerArn})
		if err != nil {
			return fmt.Errorf("describe target groups of %s: %w", name, err)
		}
		for _, tg := range tgs.TargetGroups {
			arns = append(arns, aws.ToString(tg.TargetGroupArn))
		}
		if _, err := r.ELBv2.DeleteLoadBalancer(ctx, &elbv2.DeleteLoadBalancerInput{LoadBalancerArn: lb.LoadBalancerArn}); err != nil {
			return fmt.Errorf("delete load balancer %s: %w", name, err)
		}
		klog.InfoS("Deleted network load balancer", "service", klog.KObj(svc), "name", name)
	}
	owned, err := r.ownedTargetGroups(ctx, svc, lbARN)
	if err != nil {
		return err
	}
	var errs []error
	for _, arn := range uniqueSorted(append(arns, owned...)) {
		errs = append(errs, r.deleteTargetGroup(ctx, name, arn))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	r.targetGroupsSwept(name)
	return nil
}
