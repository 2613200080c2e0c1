package awsemu

import (
	"maps"
	"slices"
)

// Inspection accessors for tests: snapshots of the load-balancing and
// security group model, deep copies taken under the services' locks, so a
// test can assert what a reconciler left behind without going through the
// APIs (and without their eventual consistency, paging or call counting).

// ClassicLBState is a snapshot of a Classic load balancer.
type ClassicLBState struct {
	Name           string
	Scheme         string
	DNSName        string
	VPCID          string
	Subnets        []string
	SecurityGroups []string
	Tags           map[string]string
	Listeners      []ClassicListenerState
	Instances      []string // registered instance IDs
	HealthCheck    ClassicHealthCheck
	Attributes     ClassicAttributes
	// Policies are the load balancer's own policies by name.
	Policies map[string]ClassicPolicy
	// BackendPolicies are the policy names set for each instance port.
	BackendPolicies map[int32][]string
}

// ClassicListenerState is a Classic listener and the policies set on it.
type ClassicListenerState struct {
	Protocol         string
	Port             int32
	InstanceProtocol string
	InstancePort     int32
	SSLCertificateID string
	PolicyNames      []string
}

// ClassicHealthCheck is a Classic load balancer's health check (the AWS
// default TCP check of the first listener's instance port until
// ConfigureHealthCheck changes it).
type ClassicHealthCheck struct {
	Target             string
	Interval           int32
	Timeout            int32
	HealthyThreshold   int32
	UnhealthyThreshold int32
}

// ClassicAttributes are a Classic load balancer's attributes.
type ClassicAttributes struct {
	CrossZoneLoadBalancing    bool
	IdleTimeout               int32
	ConnectionDraining        bool
	ConnectionDrainingTimeout int32
	AccessLogEnabled          bool
	AccessLogS3BucketName     string
	AccessLogS3BucketPrefix   string
	AccessLogEmitInterval     int32
}

// ClassicPolicy is a policy created with CreateLoadBalancerPolicy.
type ClassicPolicy struct {
	Type       string
	Attributes map[string]string
}

// NetworkLBState is a snapshot of an ELBv2 load balancer (Network, or
// Application when a fixture seeds one) with its listeners and the target
// groups its listeners forward to.
type NetworkLBState struct {
	Name           string
	ARN            string
	Type           string
	Scheme         string
	DNSName        string
	VPCID          string
	Subnets        []string
	SubnetMappings []SubnetMappingState // one per subnet, in subnet order
	SecurityGroups []string
	Tags           map[string]string
	// Attributes are all load balancer attributes, defaults included.
	Attributes   map[string]string
	Listeners    []ListenerState
	TargetGroups []TargetGroupState
}

// SubnetMappingState is the address a load balancer has in one subnet
// (empty unless CreateLoadBalancer gave SubnetMappings with addresses).
type SubnetMappingState struct {
	SubnetID           string
	AllocationID       string
	PrivateIPv4Address string
}

// ListenerState is an ELBv2 listener.
type ListenerState struct {
	ARN             string
	LoadBalancerARN string
	Port            int32
	Protocol        string
	SSLPolicy       string
	CertificateARNs []string
	TargetGroupARN  string // of the forward default action
	Tags            map[string]string
}

// TargetGroupState is an ELBv2 target group with its effective health
// check settings (AWS defaults filled in).
type TargetGroupState struct {
	Name                       string
	ARN                        string
	Protocol                   string
	Port                       int32
	TargetType                 string
	VPCID                      string
	HealthCheckProtocol        string
	HealthCheckPort            string
	HealthCheckPath            string
	HealthCheckIntervalSeconds int32
	HealthCheckTimeoutSeconds  int32
	HealthyThreshold           int32
	UnhealthyThreshold         int32
	Matcher                    string // HTTP codes of HTTP(S) health checks
	// Attributes are all target group attributes, defaults included.
	Attributes       map[string]string
	Targets          []TargetState
	Tags             map[string]string
	LoadBalancerARNs []string
}

// TargetState is a registered target.
type TargetState struct {
	ID   string
	Port int32
}

// Inventory counts the resources a load-balancer reconciler creates.
type Inventory struct {
	ClassicLBs int
	NetworkLBs int // all ELBv2 load balancers
	Listeners  int // ELBv2 listeners (Classic listeners belong to their load balancer)
	// TargetGroups counts all target groups, attached or not.
	TargetGroups int
	// SecurityGroups counts all groups, fixture groups included; see
	// SecurityGroupsNamed for the ones a test created.
	SecurityGroups int
}

// ClassicLoadBalancers returns snapshots of all Classic load balancers in
// creation order.
func (s *Server) ClassicLoadBalancers() []ClassicLBState {
	s.elb.mu.RLock()
	defer s.elb.mu.RUnlock()
	out := []ClassicLBState{}
	for _, lb := range s.elb.classic.list() {
		out = append(out, s.elb.classicState(lb))
	}
	return out
}

// classicState snapshots lb. Callers hold s.mu.
func (s *elbState) classicState(lb *lbRec) ClassicLBState {
	d := s.xmlClassic(lb) // the rendering applies the health check default and listener policies
	st := ClassicLBState{
		Name: lb.Name, Scheme: lb.Scheme, DNSName: lb.DNSName, VPCID: lb.VPCID,
		Subnets: slices.Clone(lb.Subnets), SecurityGroups: slices.Clone(lb.SecurityGroups),
		Tags: cloneTags(lb.Tags), Instances: slices.Clone(lb.Instances),
		HealthCheck: ClassicHealthCheck{Target: d.HealthCheck.Target, Interval: d.HealthCheck.Interval, Timeout: d.HealthCheck.Timeout,
			HealthyThreshold: d.HealthCheck.HealthyThreshold, UnhealthyThreshold: d.HealthCheck.UnhealthyThreshold},
		Policies: map[string]ClassicPolicy{}, BackendPolicies: map[int32][]string{},
	}
	for _, ld := range d.ListenerDescriptions {
		l := ld.Listener
		st.Listeners = append(st.Listeners, ClassicListenerState{Protocol: l.Protocol, Port: l.LoadBalancerPort,
			InstanceProtocol: l.InstanceProtocol, InstancePort: l.InstancePort, SSLCertificateID: l.SSLCertificateID,
			PolicyNames: slices.Clone(ld.PolicyNames)})
	}
	a := newClassicExt().attrs
	if lb.ext != nil {
		a = lb.ext.attrs
		for _, p := range lb.ext.policies.list() {
			cp := ClassicPolicy{Type: p.PolicyTypeName, Attributes: map[string]string{}}
			for _, pa := range p.PolicyAttributeDescriptions {
				cp.Attributes[pa.AttributeName] = pa.AttributeValue
			}
			st.Policies[p.PolicyName] = cp
		}
		for port, names := range lb.ext.backendPolicies {
			st.BackendPolicies[port] = slices.Clone(names)
		}
	}
	st.Attributes = ClassicAttributes{
		CrossZoneLoadBalancing: a.CrossZoneLoadBalancing.Enabled, IdleTimeout: a.ConnectionSettings.IdleTimeout,
		ConnectionDraining: a.ConnectionDraining.Enabled, ConnectionDrainingTimeout: a.ConnectionDraining.Timeout,
		AccessLogEnabled: a.AccessLog.Enabled, AccessLogS3BucketName: a.AccessLog.S3BucketName,
		AccessLogS3BucketPrefix: a.AccessLog.S3BucketPrefix, AccessLogEmitInterval: a.AccessLog.EmitInterval,
	}
	return st
}

// NetworkLoadBalancers returns snapshots of all ELBv2 load balancers in
// creation order.
func (s *Server) NetworkLoadBalancers() []NetworkLBState {
	s.elb.mu.RLock()
	defer s.elb.mu.RUnlock()
	out := []NetworkLBState{}
	for _, lb := range s.elb.v2.list() {
		st := NetworkLBState{
			Name: lb.Name, ARN: lb.ARN, Type: lb.Type, Scheme: lb.Scheme, DNSName: lb.DNSName, VPCID: lb.VPCID,
			Subnets: slices.Clone(lb.Subnets), SecurityGroups: slices.Clone(lb.SecurityGroups), Tags: cloneTags(lb.Tags),
			Attributes: mergedAttributes(nlbAttributeDefaults, lb.attrs),
		}
		for _, id := range lb.Subnets {
			m := lb.mappings[id]
			st.SubnetMappings = append(st.SubnetMappings, SubnetMappingState{SubnetID: id, AllocationID: m.allocationID, PrivateIPv4Address: m.privateIP})
		}
		for _, l := range s.elb.listeners.list() {
			if l.lbArn == lb.ARN {
				st.Listeners = append(st.Listeners, listenerState(l))
			}
		}
		for _, tg := range s.elb.targetGroups.list() {
			if slices.Contains(tg.lbArns, lb.ARN) {
				st.TargetGroups = append(st.TargetGroups, targetGroupState(tg))
			}
		}
		out = append(out, st)
	}
	return out
}

// TargetGroups returns snapshots of all ELBv2 target groups, attached to a
// load balancer or not, in creation order.
func (s *Server) TargetGroups() []TargetGroupState {
	s.elb.mu.RLock()
	defer s.elb.mu.RUnlock()
	out := []TargetGroupState{}
	for _, tg := range s.elb.targetGroups.list() {
		out = append(out, targetGroupState(tg))
	}
	return out
}

// Inventory counts the load-balancing resources and security groups.
func (s *Server) Inventory() Inventory {
	s.elb.mu.RLock() // before the EC2 lock, which securityGroupCount takes
	defer s.elb.mu.RUnlock()
	return Inventory{
		ClassicLBs: len(s.elb.classic.order), NetworkLBs: len(s.elb.v2.order), Listeners: len(s.elb.listeners.order),
		TargetGroups: len(s.elb.targetGroups.order), SecurityGroups: s.ec2.securityGroupCount(),
	}
}

func listenerState(l *listenerRec) ListenerState {
	st := ListenerState{ARN: l.arn, LoadBalancerARN: l.lbArn, Port: l.Port, Protocol: l.Protocol, SSLPolicy: l.SSLPolicy,
		TargetGroupARN: l.tgArn, Tags: cloneTags(l.Tags)}
	if l.CertificateARN != "" {
		st.CertificateARNs = []string{l.CertificateARN}
	}
	return st
}

func targetGroupState(tg *targetGroupRec) TargetGroupState {
	x := xmlTargetGroup(tg) // effective health check settings, as DescribeTargetGroups reports them
	st := TargetGroupState{
		Name: tg.Name, ARN: tg.ARN, Protocol: tg.Protocol, Port: tg.Port, TargetType: tg.TargetType, VPCID: tg.vpcID,
		HealthCheckProtocol: x.HealthCheckProtocol, HealthCheckPort: x.HealthCheckPort, HealthCheckPath: x.HealthCheckPath,
		HealthCheckIntervalSeconds: x.HealthCheckIntervalSeconds, HealthCheckTimeoutSeconds: x.HealthCheckTimeoutSeconds,
		HealthyThreshold: x.HealthyThresholdCount, UnhealthyThreshold: x.UnhealthyThresholdCount,
		Attributes: mergedAttributes(tgAttributeDefaults, tg.attrs), Tags: cloneTags(tg.Tags),
		LoadBalancerARNs: slices.Clone(tg.lbArns),
	}
	if x.Matcher != nil {
		st.Matcher = x.Matcher.HTTPCode
	}
	for _, t := range tg.targets {
		st.Targets = append(st.Targets, TargetState{ID: t.id, Port: t.port})
	}
	return st
}

// mergedAttributes is defaults overridden by set, as the Describe*Attributes
// calls report them.
func mergedAttributes(defaults, set map[string]string) map[string]string {
	out := maps.Clone(defaults)
	maps.Copy(out, set)
	return out
}

// cloneTags copies a tag map; nil becomes an empty map so tests can index it.
func cloneTags(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	maps.Copy(out, m)
	return out
}
