package lb

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	"k8s.io/klog/v2"

	"github.com/awsccmctl/awsccmctl/internal/lbconfig"
)

// Classic policy names. They MUST NOT change: upstream creates the same
// policies, and an adopted load balancer already has them.
const (
	proxyProtocolPolicy     = "k8s-proxyprotocol-enabled"
	sslNegotiationPolicyFmt = "k8s-SSLNegotiationPolicy-%s"
)

// healthCheckKeys govern the health check.
var healthCheckKeys = []string{
	lbconfig.KeyHealthCheckProtocol, lbconfig.KeyHealthCheckPort, lbconfig.KeyHealthCheckPath,
	lbconfig.KeyHealthCheckHealthyThresh, lbconfig.KeyHealthCheckUnhealthyThresh,
	lbconfig.KeyHealthCheckInterval, lbconfig.KeyHealthCheckTimeout, lbconfig.KeyBackendProtocol,
}

// listenerKeys govern the listeners.
var listenerKeys = []string{lbconfig.KeySSLCert, lbconfig.KeySSLPorts, lbconfig.KeyBackendProtocol, lbconfig.FieldPorts}

// syncClassicShape brings subnets, security groups and listeners of an
// existing load balancer to cfg.
func (r *Reconciler) syncClassicShape(ctx context.Context, cfg *lbconfig.Config, desc *elbtypes.LoadBalancerDescription, groupIDs []string) error {
	name := aws.String(cfg.Name)
	if cfg.Valid(lbconfig.KeySubnets) {
		subnets, err := r.subnetsFor(ctx, cfg)
		if err != nil {
			// Keep what the load balancer has rather than detach it.
			klog.ErrorS(err, "Keeping the load balancer's subnets", "name", cfg.Name)
		} else {
			want, have := subnetIDs(subnets), desc.Subnets
			if detach := minus(have, want); len(detach) > 0 {
				if _, err := r.ELB.DetachLoadBalancerFromSubnets(ctx, &elb.DetachLoadBalancerFromSubnetsInput{LoadBalancerName: name, Subnets: detach}); err != nil {
					return fmt.Errorf("detach load balancer %s from subnets %v: %w", cfg.Name, detach, err)
				}
			}
			if attach := minus(want, have); len(attach) > 0 {
				if _, err := r.ELB.AttachLoadBalancerToSubnets(ctx, &elb.AttachLoadBalancerToSubnetsInput{LoadBalancerName: name, Subnets: attach}); err != nil {
					return fmt.Errorf("attach load balancer %s to subnets %v: %w", cfg.Name, attach, err)
				}
			}
		}
	}
	if !sameSet(groupIDs, desc.SecurityGroups) {
		if _, err := r.ELB.ApplySecurityGroupsToLoadBalancer(ctx, &elb.ApplySecurityGroupsToLoadBalancerInput{LoadBalancerName: name, SecurityGroups: groupIDs}); err != nil {
			return fmt.Errorf("apply security groups %v to load balancer %s: %w", groupIDs, cfg.Name, err)
		}
		desc.SecurityGroups = groupIDs
	}
	if !cfg.Valid(listenerKeys...) {
		return nil
	}
	want := classicListeners(cfg)
	var remove []int32
	var keep []elbtypes.ListenerDescription
	for _, ld := range desc.ListenerDescriptions {
		if ld.Listener == nil {
			continue
		}
		if slices.ContainsFunc(want, func(w elbtypes.Listener) bool { return sameClassicListener(*ld.Listener, w) }) {
			keep = append(keep, ld)
			continue
		}
		remove = append(remove, ld.Listener.LoadBalancerPort)
	}
	var add []elbtypes.Listener
	for _, w := range want {
		if !slices.ContainsFunc(keep, func(ld elbtypes.ListenerDescription) bool { return sameClassicListener(*ld.Listener, w) }) {
			add = append(add, w)
		}
	}
	if len(remove) > 0 {
		if _, err := r.ELB.DeleteLoadBalancerListeners(ctx, &elb.DeleteLoadBalancerListenersInput{LoadBalancerName: name, LoadBalancerPorts: remove}); err != nil {
			return fmt.Errorf("delete listeners %v of load balancer %s: %w", remove, cfg.Name, err)
		}
	}
	if len(add) > 0 {
		if _, err := r.ELB.CreateLoadBalancerListeners(ctx, &elb.CreateLoadBalancerListenersInput{LoadBalancerName: name, Listeners: add}); err != nil {
			return fmt.Errorf("create listeners of load balancer %s: %w", cfg.Name, err)
		}
		for _, l := range add {
			keep = append(keep, elbtypes.ListenerDescription{Listener: &l})
		}
	}
	desc.ListenerDescriptions = keep
	return nil
}

func sameClassicListener(a, b elbtypes.Listener) bool {
	return strings.EqualFold(aws.ToString(a.Protocol), aws.ToString(b.Protocol)) &&
		strings.EqualFold(aws.ToString(a.InstanceProtocol), aws.ToString(b.InstanceProtocol)) &&
		a.LoadBalancerPort == b.LoadBalancerPort && aws.ToInt32(a.InstancePort) == aws.ToInt32(b.InstancePort) &&
		aws.ToString(a.SSLCertificateId) == aws.ToString(b.SSLCertificateId)
}

// syncClassicPolicies keeps proxy protocol on every backend port (or off)
// and the SSL negotiation policy on every SSL and HTTPS listener. It reads
// the state from the load balancer's description: no extra call when
// nothing changed (upstream re-creates the proxy policy every sync).
func (r *Reconciler) syncClassicPolicies(ctx context.Context, cfg *lbconfig.Config, desc *elbtypes.LoadBalancerDescription) error {
	name := aws.String(cfg.Name)
	var existing []string
	if desc.Policies != nil {
		existing = desc.Policies.OtherPolicies
	}
	createPolicy := func(policy, typ string, attrs ...elbtypes.PolicyAttribute) error {
		if slices.Contains(existing, policy) {
			return nil
		}
		_, err := r.ELB.CreateLoadBalancerPolicy(ctx, &elb.CreateLoadBalancerPolicyInput{LoadBalancerName: name, PolicyName: aws.String(policy), PolicyTypeName: aws.String(typ), PolicyAttributes: attrs})
		if err != nil && !isCode(err, codeDuplicatePolicyName) {
			return fmt.Errorf("create policy %s on load balancer %s: %w", policy, cfg.Name, err)
		}
		existing = append(existing, policy)
		return nil
	}
	if cfg.Valid(lbconfig.KeyProxyProtocol) {
		if cfg.ProxyProtocol {
			if err := createPolicy(proxyProtocolPolicy, "ProxyProtocolPolicyType", elbtypes.PolicyAttribute{AttributeName: aws.String("ProxyProtocol"), AttributeValue: aws.String("true")}); err != nil {
				return err
			}
		}
		have := map[int32][]string{}
		for _, b := range desc.BackendServerDescriptions {
			have[aws.ToInt32(b.InstancePort)] = b.PolicyNames
		}
		ports := map[int32]bool{}
		for _, l := range cfg.Listeners {
			ports[l.NodePort] = true
		}
		for port, policies := range have {
			if !ports[port] && slices.Contains(policies, proxyProtocolPolicy) {
				ports[port] = false // a backend left over from an old listener: turn it off
			}
		}
		for _, port := range sortedPorts(ports) {
			on := ports[port] && cfg.ProxyProtocol
			if slices.Contains(have[port], proxyProtocolPolicy) == on {
				continue
			}
			policies := []string{}
			if on {
				policies = []string{proxyProtocolPolicy}
			}
			if _, err := r.ELB.SetLoadBalancerPoliciesForBackendServer(ctx, &elb.SetLoadBalancerPoliciesForBackendServerInput{LoadBalancerName: name, InstancePort: aws.Int32(port), PolicyNames: policies}); err != nil {
				return fmt.Errorf("set proxy protocol %t on port %d of load balancer %s: %w", on, port, cfg.Name, err)
			}
		}
	}
	if cfg.SSLNegotiationPolicy != "" && cfg.Valid(lbconfig.KeySSLNegotiationPolicy) {
		policy := fmt.Sprintf(sslNegotiationPolicyFmt, cfg.SSLNegotiationPolicy)
		for _, ld := range desc.ListenerDescriptions {
			p := strings.ToUpper(aws.ToString(ld.Listener.Protocol))
			if (p != lbconfig.ProtocolSSL && p != lbconfig.ProtocolHTTPS) || slices.Equal(ld.PolicyNames, []string{policy}) {
				continue
			}
			if err := createPolicy(policy, "SSLNegotiationPolicyType", elbtypes.PolicyAttribute{AttributeName: aws.String("Reference-Security-Policy"), AttributeValue: aws.String(cfg.SSLNegotiationPolicy)}); err != nil {
				return err
			}
			if _, err := r.ELB.SetLoadBalancerPoliciesOfListener(ctx, &elb.SetLoadBalancerPoliciesOfListenerInput{LoadBalancerName: name, LoadBalancerPort: ld.Listener.LoadBalancerPort, PolicyNames: []string{policy}}); err != nil {
				return fmt.Errorf("set SSL negotiation policy on port %d of load balancer %s: %w", ld.Listener.LoadBalancerPort, cfg.Name, err)
			}
		}
	}
	return nil
}

// classicHealthCheck is cfg's health check in the Classic API's form; the
// traffic port is the first listener's node port, as upstream does.
func classicHealthCheck(cfg *lbconfig.Config) *elbtypes.HealthCheck {
	hc := cfg.HealthCheck
	port := hc.Port
	if port == lbconfig.HealthCheckTrafficPort && len(cfg.Listeners) > 0 {
		port = fmt.Sprint(cfg.Listeners[0].NodePort)
	}
	target := hc.Protocol + ":" + port
	if hc.Protocol == lbconfig.ProtocolHTTP || hc.Protocol == lbconfig.ProtocolHTTPS {
		target += hc.Path
	}
	return &elbtypes.HealthCheck{Target: aws.String(target), Interval: aws.Int32(hc.Interval), Timeout: aws.Int32(hc.Timeout),
		HealthyThreshold: aws.Int32(hc.HealthyThreshold), UnhealthyThreshold: aws.Int32(hc.UnhealthyThreshold)}
}

func (r *Reconciler) syncClassicHealthCheck(ctx context.Context, cfg *lbconfig.Config, desc *elbtypes.LoadBalancerDescription) error {
	want := classicHealthCheck(cfg)
	if have := desc.HealthCheck; have != nil && aws.ToString(have.Target) == aws.ToString(want.Target) &&
		aws.ToInt32(have.Interval) == aws.ToInt32(want.Interval) && aws.ToInt32(have.Timeout) == aws.ToInt32(want.Timeout) &&
		aws.ToInt32(have.HealthyThreshold) == aws.ToInt32(want.HealthyThreshold) && aws.ToInt32(have.UnhealthyThreshold) == aws.ToInt32(want.UnhealthyThreshold) {
		return nil
	}
	if _, err := r.ELB.ConfigureHealthCheck(ctx, &elb.ConfigureHealthCheckInput{LoadBalancerName: aws.String(cfg.Name), HealthCheck: want}); err != nil {
		return fmt.Errorf("configure health check %s of load balancer %s: %w", aws.ToString(want.Target), cfg.Name, err)
	}
	return nil
}

// syncClassicAttributes changes only the attributes that differ from what
// cfg asks, and only those whose annotations are valid (upstream rewrites
// all of them whenever any field differs, which with AWS's defaults is
// every sync).
func (r *Reconciler) syncClassicAttributes(ctx context.Context, cfg *lbconfig.Config) error {
	out, err := r.ELB.DescribeLoadBalancerAttributes(ctx, &elb.DescribeLoadBalancerAttributesInput{LoadBalancerName: aws.String(cfg.Name)})
	if err != nil {
		return fmt.Errorf("describe attributes of load balancer %s: %w", cfg.Name, err)
	}
	have := out.LoadBalancerAttributes
	if have == nil {
		have = &elbtypes.LoadBalancerAttributes{}
	}
	change := &elbtypes.LoadBalancerAttributes{}
	dirty := false
	if cfg.Valid(lbconfig.KeyCrossZoneLoadBalancing) && (have.CrossZoneLoadBalancing == nil || have.CrossZoneLoadBalancing.Enabled != cfg.CrossZone) {
		change.CrossZoneLoadBalancing, dirty = &elbtypes.CrossZoneLoadBalancing{Enabled: cfg.CrossZone}, true
	}
	if cfg.Valid(lbconfig.KeyConnectionDrainingEnabled, lbconfig.KeyConnectionDrainingTimeout) {
		cd := have.ConnectionDraining
		if cd == nil || cd.Enabled != cfg.ConnectionDrainingEnabled || (cfg.ConnectionDrainingTimeout > 0 && aws.ToInt32(cd.Timeout) != cfg.ConnectionDrainingTimeout) {
			want := &elbtypes.ConnectionDraining{Enabled: cfg.ConnectionDrainingEnabled}
			if cfg.ConnectionDrainingTimeout > 0 {
				want.Timeout = aws.Int32(cfg.ConnectionDrainingTimeout)
			} else if cd != nil {
				want.Timeout = cd.Timeout
			}
			change.ConnectionDraining, dirty = want, true
		}
	}
	if cfg.Valid(lbconfig.KeyConnectionIdleTimeout) && cfg.IdleTimeout > 0 &&
		(have.ConnectionSettings == nil || aws.ToInt32(have.ConnectionSettings.IdleTimeout) != cfg.IdleTimeout) {
		change.ConnectionSettings, dirty = &elbtypes.ConnectionSettings{IdleTimeout: aws.Int32(cfg.IdleTimeout)}, true
	}
	if cfg.Valid(lbconfig.KeyAccessLogEnabled, lbconfig.KeyAccessLogEmitInterval, lbconfig.KeyAccessLogS3BucketName, lbconfig.KeyAccessLogS3BucketPrefix) {
		al := have.AccessLog
		switch want := cfg.AccessLogs; {
		case want == nil && al != nil && al.Enabled:
			change.AccessLog, dirty = &elbtypes.AccessLog{Enabled: false}, true
		case want != nil && (al == nil || !al.Enabled || aws.ToString(al.S3BucketName) != want.Bucket ||
			aws.ToString(al.S3BucketPrefix) != want.Prefix || aws.ToInt32(al.EmitInterval) != want.EmitInterval):
			change.AccessLog = &elbtypes.AccessLog{Enabled: true, S3BucketName: aws.String(want.Bucket), S3BucketPrefix: aws.String(want.Prefix), EmitInterval: aws.Int32(want.EmitInterval)}
			dirty = true
		}
	}
	if !dirty {
		return nil
	}
	if _, err := r.ELB.ModifyLoadBalancerAttributes(ctx, &elb.ModifyLoadBalancerAttributesInput{LoadBalancerName: aws.String(cfg.Name), LoadBalancerAttributes: change}); err != nil {
		return fmt.Errorf("modify attributes of load balancer %s: %w", cfg.Name, err)
	}
	return nil
}

// syncClassicInstances registers and deregisters by difference. With an
// invalid target-node-labels annotation the registered set is kept.
func (r *Reconciler) syncClassicInstances(ctx context.Context, cfg *lbconfig.Config, desc *elbtypes.LoadBalancerDescription, targets []target) error {
	if !cfg.Valid(lbconfig.KeyTargetNodeLabels) {
		return nil
	}
	var have []string
	for _, i := range desc.Instances {
		have = append(have, aws.ToString(i.InstanceId))
	}
	add, remove := registrations(targets, have)
	name := aws.String(cfg.Name)
	if len(add) > 0 {
		err := registerRunning(add, func(ids []string) error {
			_, err := r.ELB.RegisterInstancesWithLoadBalancer(ctx, &elb.RegisterInstancesWithLoadBalancerInput{LoadBalancerName: name, Instances: elbInstances(ids)})
			return err
		})
		if err != nil {
			return fmt.Errorf("register %d instances with load balancer %s: %w", len(add), cfg.Name, err)
		}
		klog.V(2).InfoS("Registered instances", "name", cfg.Name, "instances", add)
	}
	if len(remove) > 0 {
		if _, err := r.ELB.DeregisterInstancesFromLoadBalancer(ctx, &elb.DeregisterInstancesFromLoadBalancerInput{LoadBalancerName: name, Instances: elbInstances(remove)}); err != nil {
			return fmt.Errorf("deregister %d instances from load balancer %s: %w", len(remove), cfg.Name, err)
		}
		klog.V(2).InfoS("Deregistered instances", "name", cfg.Name, "instances", remove)
	}
	return nil
}

func elbInstances(ids []string) []elbtypes.Instance {
	out := make([]elbtypes.Instance, len(ids))
	for i, id := range ids {
		out[i] = elbtypes.Instance{InstanceId: aws.String(id)}
	}
	return out
}

// minus returns the elements of a not in b, sorted.
func minus(a, b []string) []string {
	var out []string
	for _, x := range uniqueSorted(a) {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func sameSet(a, b []string) bool { return slices.Equal(uniqueSorted(a), uniqueSorted(b)) }

func sortedPorts(m map[int32]bool) []int32 {
	out := make([]int32, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}
