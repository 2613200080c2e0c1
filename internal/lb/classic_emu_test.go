package lb

import (
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/awsccmctl/awsccmctl/internal/instances"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// Classic ELBs against the emulator: creation field by field, the diff
// logic (an unchanged sync writes nothing, each change makes exactly its
// calls), adoption of an existing load balancer, refusal of foreign ones,
// and deletion.

// TestEmuClassicLifecycle creates a Classic ELB with a spread of
// annotations, checks it field by field, re-syncs it unchanged, adds a
// node, changes and breaks an annotation, and deletes it (the unit
// equivalent of test/integration TestClassicLoadBalancerLifecycle).
func TestEmuClassicLifecycle(t *testing.T) {
	t.Parallel()
	e := newEmu(t, emuOptions{})
	svc := emuService("clb-web", map[string]string{
		annPrefix + "proxy-protocol":                    "*",
		annPrefix + "connection-draining-enabled":       "true",
		annPrefix + "connection-draining-timeout":       "30",
		annPrefix + "connection-idle-timeout":           "120",
		annPrefix + "cross-zone-load-balancing-enabled": "true",
		annPrefix + "additional-resource-tags":          "team=web,cost-center=",
		annPrefix + "healthcheck-healthy-threshold":     "3",
	})
	svc.Spec.LoadBalancerSourceRanges = []string{"10.1.0.0/16"}
	nodes := e.nodes(emuA, emuB)

	st := e.ensure(svc, nodes)
	name := lbName(svc)
	lb := e.classic(name)
	if st.Ingress[0].Hostname != lb.DNSName || lb.Scheme != "internet-facing" {
		t.Errorf("status hostname %q, scheme %q; AWS DNS name %q", st.Ingress[0].Hostname, lb.Scheme, lb.DNSName)
	}
	// One discovered subnet per zone: the demo has one per zone, all
	// public through the main route table.
	if want := []string{emuSubnetA, emuSubnetB, emuSubnetC}; !slices.Equal(sortedIDs(lb.Subnets), want) {
		t.Errorf("subnets = %v, want %v", lb.Subnets, want)
	}
	wantTags := map[string]string{"kubernetes.io/cluster/demo": "owned", "kubernetes.io/service-name": "default/clb-web", "team": "web", "cost-center": ""}
	if !maps.Equal(lb.Tags, wantTags) {
		t.Errorf("tags = %v, want %v", lb.Tags, wantTags)
	}
	if len(lb.Listeners) != 1 || lb.Listeners[0].Protocol != "TCP" || lb.Listeners[0].Port != 80 || lb.Listeners[0].InstanceProtocol != "TCP" || lb.Listeners[0].InstancePort != 30080 {
		t.Errorf("listeners = %+v, want TCP:80 -> TCP:30080", lb.Listeners)
	}
	if want := []string{emuA, emuB}; !slices.Equal(sortedIDs(lb.Instances), want) {
		t.Errorf("instances = %v, want %v", lb.Instances, want)
	}
	if hc := lb.HealthCheck; hc != (awsemu.ClassicHealthCheck{Target: "TCP:30080", Interval: 10, Timeout: 5, HealthyThreshold: 3, UnhealthyThreshold: 6}) {
		t.Errorf("health check = %+v", hc)
	}
	if a := lb.Attributes; !a.CrossZoneLoadBalancing || !a.ConnectionDraining || a.ConnectionDrainingTimeout != 30 || a.IdleTimeout != 120 || a.AccessLogEnabled {
		t.Errorf("attributes = %+v", a)
	}
	if got := lb.BackendPolicies[30080]; !slices.Equal(got, []string{proxyProtocolPolicy}) {
		t.Errorf("backend policies of 30080 = %v", got)
	}
	if p := lb.Policies[proxyProtocolPolicy]; p.Type != "ProxyProtocolPolicyType" || p.Attributes["ProxyProtocol"] != "true" {
		t.Errorf("policies = %+v", lb.Policies)
	}
	sg := e.managedGroup(name)
	if !slices.Equal(lb.SecurityGroups, []string{sg.ID}) {
		t.Errorf("security groups = %v, want the managed %s", lb.SecurityGroups, sg.ID)
	}
	if sg.VPCID != emuVPC || !maps.Equal(sg.Tags, wantTags) {
		t.Errorf("managed group in %s tagged %v, want %s and %v", sg.VPCID, sg.Tags, emuVPC, wantTags)
	}
	if got := emuRules(sg.Ingress, false); !slices.Equal(got, []string{"icmp 3-4 10.1.0.0/16", "tcp 80-80 10.1.0.0/16"}) {
		t.Errorf("managed group ingress = %v", got)
	}
	if got := e.nodeRules(); !slices.Equal(got, []string{"-1 0-0 " + sg.ID}) {
		t.Errorf("node group rules = %v, want all traffic from %s", got, sg.ID)
	}

	// An unchanged re-sync changes nothing and reads four times.
	e.reset()
	e.ensure(svc, nodes)
	e.wantMutations("unchanged re-sync", map[string]int{})
	wantReads := map[string]int{"elasticloadbalancing:DescribeLoadBalancers": 1, "elasticloadbalancing:DescribeTags": 1,
		"elasticloadbalancing:DescribeLoadBalancerAttributes": 1, "ec2:DescribeSecurityGroups": 1}
	if got := e.lbCalls(); !maps.Equal(got, wantReads) {
		t.Errorf("unchanged re-sync calls %s, want %s", formatCalls(got), formatCalls(wantReads))
	}

	// A node joins (the service controller's node sync runs Update): one
	// registration, nothing else.
	nodes = e.nodes(emuA, emuB, emuC)
	e.reset()
	e.update(svc, nodes)
	e.wantMutations("node added", map[string]int{"elasticloadbalancing:RegisterInstancesWithLoadBalancer": 1})
	if got := sortedIDs(e.classic(name).Instances); !slices.Equal(got, emuRunning) {
		t.Errorf("instances = %v, want %v", got, emuRunning)
	}
	e.reset()
	e.ensure(svc, nodes)
	e.wantMutations("re-sync after the node joined", map[string]int{})

	// One annotation changes: one attribute write.
	svc = withAnn(svc, map[string]string{annPrefix + "connection-idle-timeout": "300"})
	e.reset()
	e.ensure(svc, nodes)
	e.wantMutations("idle timeout change", map[string]int{"elasticloadbalancing:ModifyLoadBalancerAttributes": 1})
	if got := e.classic(name).Attributes.IdleTimeout; got != 300 {
		t.Errorf("idle timeout = %d, want 300", got)
	}

	// An invalid annotation: a Warning naming it; what it governs stays.
	svc = withAnn(svc, map[string]string{annPrefix + "cross-zone-load-balancing-enabled": "maybe"})
	e.reset()
	e.ensure(svc, nodes)
	e.wantEvent("Warning "+ReasonInvalidConfiguration, annPrefix+"cross-zone-load-balancing-enabled", `"maybe"`)
	e.wantMutations("invalid annotation", map[string]int{})
	if !e.classic(name).Attributes.CrossZoneLoadBalancing {
		t.Errorf("cross-zone was turned off because of an invalid annotation")
	}

	e.reset()
	e.delete(svc)
	e.wantNothingLeft()
	if e.exists(svc) {
		t.Errorf("Get reports the load balancer after Delete")
	}
	// Deleting again finds nothing and changes nothing.
	e.reset()
	e.delete(svc)
	e.wantMutations("second Delete", map[string]int{})
}

// TestEmuClassicDiff: starting from the same load balancer, each change of
// the Service makes exactly the calls it needs, and AWS ends up as asked.
func TestEmuClassicDiff(t *testing.T) {
	t.Parallel()
	const (
		attrs  = "elasticloadbalancing:ModifyLoadBalancerAttributes"
		hc     = "elasticloadbalancing:ConfigureHealthCheck"
		mkL    = "elasticloadbalancing:CreateLoadBalancerListeners"
		rmL    = "elasticloadbalancing:DeleteLoadBalancerListeners"
		auth   = "ec2:AuthorizeSecurityGroupIngress"
		revoke = "ec2:RevokeSecurityGroupIngress"
	)
	twoPorts := func(s *corev1.Service) {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "https", Port: 443, NodePort: 30443, Protocol: corev1.ProtocolTCP})
	}
	tests := []struct {
		name string
		// base annotations of the load balancer before the change.
		base map[string]string
		// ann and mod change the Service; nodes replaces A and B.
		ann   map[string]string
		mod   func(*corev1.Service)
		nodes []string
		// update runs Update instead of Ensure.
		update bool
		want   map[string]int
		check  func(t *testing.T, e *emu, lb awsemu.ClassicLBState)
	}{
		{name: "nothing", want: map[string]int{}},
		{
			name: "idle timeout", ann: map[string]string{annPrefix + "connection-idle-timeout": "300"},
			want: map[string]int{attrs: 1},
			check: func(t *testing.T, _ *emu, lb awsemu.ClassicLBState) {
				wantEq(t, "idle timeout", lb.Attributes.IdleTimeout, 300)
			},
		},
		{
			name: "cross-zone and draining in one write",
			ann: map[string]string{annPrefix + "cross-zone-load-balancing-enabled": "true",
				annPrefix + "connection-draining-enabled": "true", annPrefix + "connection-draining-timeout": "45"},
			want: map[string]int{attrs: 1},
			check: func(t *testing.T, _ *emu, lb awsemu.ClassicLBState) {
				a := lb.Attributes
				if !a.CrossZoneLoadBalancing || !a.ConnectionDraining || a.ConnectionDrainingTimeout != 45 {
					t.Errorf("attributes = %+v", a)
				}
			},
		},
		{
			name: "cross-zone off again",
			base: map[string]string{annPrefix + "cross-zone-load-balancing-enabled": "true"},
			ann:  map[string]string{annPrefix + "cross-zone-load-balancing-enabled": "false"},
			want: map[string]int{attrs: 1},
			check: func(t *testing.T, _ *emu, lb awsemu.ClassicLBState) {
				wantEq(t, "cross-zone", lb.Attributes.CrossZoneLoadBalancing, false)
			},
		},
		{
			name: "access logs on",
			ann: map[string]string{annPrefix + "access-log-enabled": "true", annPrefix + "access-log-s3-bucket-name": "logs-bucket",
				annPrefix + "access-log-s3-bucket-prefix": "/web/", annPrefix + "access-log-emit-interval": "5"},
			want: map[string]int{attrs: 1},
			check: func(t *testing.T, _ *emu, lb awsemu.ClassicLBState) {
				a := lb.Attributes
				if !a.AccessLogEnabled || a.AccessLogS3BucketName != "logs-bucket" || a.AccessLogS3BucketPrefix != "web" || a.AccessLogEmitInterval != 5 {
					t.Errorf("attributes = %+v", a)
				}
			},
		},
		{
			name: "access logs off",
			base: map[string]string{annPrefix + "access-log-enabled": "true", annPrefix + "access-log-s3-bucket-name": "logs-bucket"},
			ann:  map[string]string{annPrefix + "access-log-enabled": "false"},
			want: map[string]int{attrs: 1},
			check: func(t *testing.T, _ *emu, lb awsemu.ClassicLBState) {
				wantEq(t, "access logs", lb.Attributes.AccessLogEnabled, false)
			},
		},
		{
			name: "port added", mod: twoPorts,
			// The listener, and the client rule for its port.
			want: map[string]int{mkL: 1, auth: 1},
			check: func(t *testing.T, e *emu, lb awsemu.ClassicLBState) {
				wantEq(t, "listeners", classicListenerSummary(lb), []string{"TCP:443>TCP:30443", "TCP:80>TCP:30080"})
				wantEq(t, "managed group rules", emuRules(e.managedGroup(lb.Name).Ingress, false),
					[]string{"icmp 3-4 0.0.0.0/0", "tcp 443-443 0.0.0.0/0", "tcp 80-80 0.0.0.0/0"})
			},
		},
		{
			name: "port removed",
			mod: func(s *corev1.Service) {
				s.Spec.Ports = []corev1.ServicePort{{Name: "https", Port: 443, NodePort: 30443, Protocol: corev1.ProtocolTCP}}
			},
			// The health check follows the first listener's node port.
			want: map[string]int{mkL: 1, rmL: 1, hc: 1, auth: 1, revoke: 1},
			check: func(t *testing.T, e *emu, lb awsemu.ClassicLBState) {
				wantEq(t, "listeners", classicListenerSummary(lb), []string{"TCP:443>TCP:30443"})
				wantEq(t, "health check", lb.HealthCheck.Target, "TCP:30443")
				wantEq(t, "managed group rules", emuRules(e.managedGroup(lb.Name).Ingress, false), []string{"icmp 3-4 0.0.0.0/0", "tcp 443-443 0.0.0.0/0"})
			},
		},
		{
			name: "node port changed",
			mod:  func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30081 },
			// Same client port: the managed group is left alone.
			want: map[string]int{mkL: 1, rmL: 1, hc: 1},
			check: func(t *testing.T, _ *emu, lb awsemu.ClassicLBState) {
				wantEq(t, "listeners", classicListenerSummary(lb), []string{"TCP:80>TCP:30081"})
				wantEq(t, "health check", lb.HealthCheck.Target, "TCP:30081")
			},
		},
		{
			name: "health check interval",
			ann:  map[string]string{annPrefix + "healthcheck-interval": "30", annPrefix + "healthcheck-unhealthy-threshold": "3"},
			want: map[string]int{hc: 1},
			check: func(t *testing.T, _ *emu, lb awsemu.ClassicLBState) {
				wantEq(t, "health check", lb.HealthCheck, awsemu.ClassicHealthCheck{Target: "TCP:30080", Interval: 30, Timeout: 5, HealthyThreshold: 2, UnhealthyThreshold: 3})
			},
		},
		{
			name: "health check protocol and path",
			ann:  map[string]string{annPrefix + "healthcheck-protocol": "HTTP", annPrefix + "healthcheck-path": "/ready", annPrefix + "healthcheck-port": "8080"},
			want: map[string]int{hc: 1},
			check: func(t *testing.T, _ *emu, lb awsemu.ClassicLBState) {
				wantEq(t, "health check target", lb.HealthCheck.Target, "HTTP:8080/ready")
			},
		},
		{
			name: "source ranges",
			mod:  func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"192.168.0.0/16"} },
			want: map[string]int{auth: 1, revoke: 1},
			check: func(t *testing.T, e *emu, lb awsemu.ClassicLBState) {
				wantEq(t, "managed group rules", emuRules(e.managedGroup(lb.Name).Ingress, false), []string{"icmp 3-4 192.168.0.0/16", "tcp 80-80 192.168.0.0/16"})
			},
		},
		{
			name: "source ranges annotation, IPv6 included",
			ann:  map[string]string{"service.beta.kubernetes.io/load-balancer-source-ranges": "10.2.0.0/16, 2001:db8::/32"},
			want: map[string]int{auth: 1, revoke: 1},
			check: func(t *testing.T, e *emu, lb awsemu.ClassicLBState) {
				wantEq(t, "managed group rules", emuRules(e.managedGroup(lb.Name).Ingress, false),
					[]string{"icmp 3-4 10.2.0.0/16", "icmp 3-4 2001:db8::/32", "tcp 80-80 10.2.0.0/16", "tcp 80-80 2001:db8::/32"})
			},
		},
		{
			name: "extra security group",
			ann:  map[string]string{annPrefix + "extra-security-groups": emuExtra},
			// The node rule stays on the first (managed) group.
			want: map[string]int{"elasticloadbalancing:ApplySecurityGroupsToLoadBalancer": 1},
			check: func(t *testing.T, e *emu, lb awsemu.ClassicLBState) {
				managed := e.managedGroup(lb.Name).ID
				wantEq(t, "security groups", lb.SecurityGroups, []string{managed, emuExtra})
				wantEq(t, "node rules", e.nodeRules(), []string{"-1 0-0 " + managed})
			},
		},
		{
			name: "own security groups replace the managed one",
			ann:  map[string]string{annPrefix + "security-groups": emuBYO},
			// The node group lets the new first group in, and no longer the
			// managed group, now attached to nothing. The load balancer
			// records the revocation it owes before the switch and clears
			// it after (two AddTags).
			want: map[string]int{"elasticloadbalancing:ApplySecurityGroupsToLoadBalancer": 1, "elasticloadbalancing:AddTags": 2, auth: 1, revoke: 1},
			check: func(t *testing.T, e *emu, lb awsemu.ClassicLBState) {
				wantEq(t, "security groups", lb.SecurityGroups, []string{emuBYO})
				wantEq(t, "revocations owed", lb.Tags[owedTagKey], "")
				wantEq(t, "node rules", e.nodeRules(), []string{"-1 0-0 " + emuBYO})
				if g := e.group(emuBYO); len(g.Ingress) != 0 {
					t.Errorf("the Service's own group was changed: %+v", g.Ingress)
				}
			},
		},
		{
			name: "proxy protocol on",
			ann:  map[string]string{annPrefix + "proxy-protocol": "*"},
			want: map[string]int{"elasticloadbalancing:CreateLoadBalancerPolicy": 1, "elasticloadbalancing:SetLoadBalancerPoliciesForBackendServer": 1},
			check: func(t *testing.T, _ *emu, lb awsemu.ClassicLBState) {
				wantEq(t, "backend policies", lb.BackendPolicies[30080], []string{proxyProtocolPolicy})
			},
		},
		{
			name: "proxy protocol off",
			base: map[string]string{annPrefix + "proxy-protocol": "*"},
			ann:  map[string]string{annPrefix + "proxy-protocol": ""},
			want: map[string]int{"elasticloadbalancing:SetLoadBalancerPoliciesForBackendServer": 1},
			check: func(t *testing.T, _ *emu, lb awsemu.ClassicLBState) {
				if got := lb.BackendPolicies[30080]; len(got) != 0 {
					t.Errorf("backend policies of 30080 = %v, want none", got)
				}
			},
		},
		{
			name: "certificate added",
			ann:  map[string]string{annPrefix + "ssl-cert": emuCert},
			want: map[string]int{mkL: 1, rmL: 1},
			check: func(t *testing.T, _ *emu, lb awsemu.ClassicLBState) {
				wantEq(t, "listeners", classicListenerSummary(lb), []string{"SSL:80>TCP:30080 " + emuCert})
			},
		},
		{
			name: "SSL negotiation policy changed",
			base: map[string]string{annPrefix + "ssl-cert": emuCert, annPrefix + "ssl-negotiation-policy": "ELBSecurityPolicy-TLS-1-2-2017-01"},
			ann:  map[string]string{annPrefix + "ssl-negotiation-policy": "ELBSecurityPolicy-TLS13-1-2-2021-06"},
			want: map[string]int{"elasticloadbalancing:CreateLoadBalancerPolicy": 1, "elasticloadbalancing:SetLoadBalancerPoliciesOfListener": 1},
			check: func(t *testing.T, _ *emu, lb awsemu.ClassicLBState) {
				wantEq(t, "listener policies", lb.Listeners[0].PolicyNames, []string{"k8s-SSLNegotiationPolicy-ELBSecurityPolicy-TLS13-1-2-2021-06"})
			},
		},
		{
			name: "additional tags",
			base: map[string]string{annPrefix + "additional-resource-tags": "team=web"},
			ann:  map[string]string{annPrefix + "additional-resource-tags": "team=shop,tier=front"},
			want: map[string]int{"elasticloadbalancing:AddTags": 1},
			check: func(t *testing.T, _ *emu, lb awsemu.ClassicLBState) {
				if lb.Tags["team"] != "shop" || lb.Tags["tier"] != "front" || lb.Tags["kubernetes.io/cluster/demo"] != "owned" {
					t.Errorf("tags = %v", lb.Tags)
				}
			},
		},
		{
			name: "subnets named", ann: map[string]string{annPrefix + "subnets": "demo-public-a,demo-public-b"},
			want: map[string]int{"elasticloadbalancing:DetachLoadBalancerFromSubnets": 1},
			check: func(t *testing.T, _ *emu, lb awsemu.ClassicLBState) {
				wantEq(t, "subnets", sortedIDs(lb.Subnets), []string{emuSubnetA, emuSubnetB})
			},
		},
		{
			name: "target removed", nodes: []string{emuA}, update: true,
			want: map[string]int{"elasticloadbalancing:DeregisterInstancesFromLoadBalancer": 1},
			check: func(t *testing.T, _ *emu, lb awsemu.ClassicLBState) {
				wantEq(t, "instances", lb.Instances, []string{emuA})
			},
		},
		{
			name: "target added", nodes: []string{emuA, emuB, emuC},
			want: map[string]int{"elasticloadbalancing:RegisterInstancesWithLoadBalancer": 1},
			check: func(t *testing.T, _ *emu, lb awsemu.ClassicLBState) {
				wantEq(t, "instances", sortedIDs(lb.Instances), emuRunning)
			},
		},
		{
			name: "target selected by label", ann: map[string]string{annPrefix + "target-node-labels": "role=edge"},
			want: map[string]int{"elasticloadbalancing:DeregisterInstancesFromLoadBalancer": 1},
			check: func(t *testing.T, _ *emu, lb awsemu.ClassicLBState) {
				wantEq(t, "instances", lb.Instances, []string{emuB})
			},
		},
		{
			// AWS cannot change a scheme: a Warning, and nothing is written.
			name: "internal annotation added later", ann: map[string]string{annPrefix + "internal": "true"},
			want: map[string]int{},
			check: func(t *testing.T, e *emu, lb awsemu.ClassicLBState) {
				wantEq(t, "scheme", lb.Scheme, "internet-facing")
				e.wantEvent("Warning "+ReasonInvalidConfiguration, annPrefix+"internal", "recreate the Service")
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEmu(t, emuOptions{byoGroups: true})
			svc := emuService("clb-diff", tc.base)
			e.ensure(svc, e.nodes(emuA, emuB))
			before := e.classic(lbName(svc))

			changed := withAnn(svc, tc.ann)
			if tc.mod != nil {
				tc.mod(changed)
			}
			nodes := e.nodes(emuA, emuB)
			if tc.nodes != nil {
				nodes = e.nodes(tc.nodes...)
			}
			labelNode(nodes, emuB, "role", "edge")
			e.reset()
			if tc.update {
				e.update(changed, nodes)
			} else {
				e.ensure(changed, nodes)
			}
			e.wantMutations("change", tc.want)
			after := e.classic(lbName(svc))
			if tc.check != nil {
				tc.check(t, e, after)
			}
			if after.DNSName != before.DNSName {
				t.Errorf("DNS name changed from %s to %s", before.DNSName, after.DNSName)
			}

			// Converged: the same sync again writes nothing.
			e.reset()
			e.ensure(changed, nodes)
			e.wantMutations("second sync", map[string]int{})

			e.delete(changed)
			e.wantNothingLeft()
		})
	}
}

// TestEmuClassicTLSAndInternal: an internal Classic ELB with an HTTPS
// listener on 443 (HTTP backend), an SSL negotiation policy, ETP=Local
// health checks, bring-your-own plus extra security groups and target node
// labels, checked field by field (moved here from test/integration, where it
// needed the apiserver for nothing it checked).
func TestEmuClassicTLSAndInternal(t *testing.T) {
	t.Parallel()
	// Private subnets in zones a and b with the internal-elb role, behind
	// a route table without an internet gateway, as in the integration
	// fixture.
	private := func(f *awsemu.Fixture) {
		tags := map[string]string{"kubernetes.io/cluster/demo": "shared", "kubernetes.io/role/internal-elb": "1"}
		f.Subnets = append(f.Subnets,
			awsemu.Subnet{ID: emuPrivateA, VPCID: emuVPC, AvailabilityZone: "us-east-1a", CIDR: "10.0.101.0/24", Tags: tags},
			awsemu.Subnet{ID: emuPrivateB, VPCID: emuVPC, AvailabilityZone: "us-east-1b", CIDR: "10.0.102.0/24", Tags: tags})
		f.RouteTables = append(f.RouteTables, awsemu.RouteTable{ID: "rtb-0demo000000000002", VPCID: emuVPC, SubnetIDs: []string{emuPrivateA, emuPrivateB}})
	}
	e := newEmu(t, emuOptions{byoGroups: true, fixture: private})
	svc := emuService("clb-tls", map[string]string{
		annPrefix + "internal":               "true",
		annPrefix + "ssl-cert":               emuCert,
		annPrefix + "ssl-ports":              "443",
		annPrefix + "backend-protocol":       "http",
		annPrefix + "ssl-negotiation-policy": "ELBSecurityPolicy-TLS-1-2-2017-01",
		annPrefix + "security-groups":        emuBYO,
		annPrefix + "extra-security-groups":  emuExtra,
		annPrefix + "target-node-labels":     "role=edge",
	},
		corev1.ServicePort{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP},
		corev1.ServicePort{Name: "https", Port: 443, NodePort: 30443, Protocol: corev1.ProtocolTCP})
	svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	svc.Spec.HealthCheckNodePort = 32100
	nodes := e.nodes(emuA, emuB)
	labelNode(nodes, emuA, "role", "edge")

	st := e.ensure(svc, nodes)
	name := lbName(svc)
	lb := e.classic(name)
	if host := st.Ingress[0].Hostname; lb.Scheme != "internal" || host != lb.DNSName || !strings.HasPrefix(host, "internal-") {
		t.Errorf("scheme %q, hostname %q (AWS %q), want an internal- name", lb.Scheme, host, lb.DNSName)
	}
	// Internal load balancers prefer the subnets with the internal-elb role.
	wantEq(t, "subnets", sortedIDs(lb.Subnets), sortedIDs([]string{emuPrivateA, emuPrivateB, emuSubnetC}))
	wantEq(t, "security groups", lb.SecurityGroups, []string{emuBYO, emuExtra})
	if left := e.srv.SecurityGroupsNamed("k8s-elb-" + name); len(left) != 0 {
		t.Errorf("a managed group was created although the Service brings its own: %+v", left)
	}
	wantEq(t, "listeners", classicListenerSummary(lb), []string{
		"HTTP:80>HTTP:30080",
		"HTTPS:443>HTTP:30443 " + emuCert + " k8s-SSLNegotiationPolicy-ELBSecurityPolicy-TLS-1-2-2017-01",
	})
	p := lb.Policies["k8s-SSLNegotiationPolicy-ELBSecurityPolicy-TLS-1-2-2017-01"]
	if p.Type != "SSLNegotiationPolicyType" || p.Attributes["Reference-Security-Policy"] != "ELBSecurityPolicy-TLS-1-2-2017-01" {
		t.Errorf("policies = %+v", lb.Policies)
	}
	wantEq(t, "health check target", lb.HealthCheck.Target, "HTTP:32100/healthz")
	wantEq(t, "instances", lb.Instances, []string{emuA})
	// The node rule points at the Service's own group, which itself is
	// never changed.
	wantEq(t, "node rules", e.nodeRules(), []string{"-1 0-0 " + emuBYO})
	if g := e.group(emuBYO); len(g.Ingress) != 0 {
		t.Errorf("the Service's own group was changed: %+v", g.Ingress)
	}

	// A second node gets the label: it becomes a target.
	labelNode(nodes, emuB, "role", "edge")
	e.reset()
	e.update(svc, nodes)
	e.wantMutations("labelled node", map[string]int{"elasticloadbalancing:RegisterInstancesWithLoadBalancer": 1})
	wantEq(t, "instances", sortedIDs(e.classic(name).Instances), []string{emuA, emuB})
	e.reset()
	e.ensure(svc, nodes)
	e.wantMutations("re-sync", map[string]int{})

	e.delete(svc)
	// The Service's own groups stay, unchanged; the node rule letting the
	// first one in goes with the load balancer (no other one uses it).
	if inv := e.srv.Inventory(); inv.ClassicLBs != 0 || inv.SecurityGroups != e.groups {
		t.Errorf("after Delete: %+v, want no load balancer and the fixture's %d groups", inv, e.groups)
	}
	wantEq(t, "node rules after Delete", e.nodeRules(), []string(nil))
}

// TestEmuClassicAdoption: a Classic ELB built by the in-tree provider or
// upstream (named "a" + the Service UID, untagged, with its k8s-elb-<name>
// group, which both tag as the cluster's at creation) is adopted: not
// recreated, tagged, and brought to the Service's configuration.
func TestEmuClassicAdoption(t *testing.T) {
	t.Parallel()
	svc := emuService("legacy-web", nil)
	name := lbName(svc)
	// Wire compatibility: the name every provider computes.
	if want := "a" + strings.ReplaceAll(string(svc.UID), "-", "")[:31]; name != want || name != cloudprovider.DefaultLoadBalancerName(svc) {
		t.Fatalf("load balancer name %q, want %q", name, want)
	}
	const managedID = "sg-0a0a0000000000001"
	e := newEmu(t, emuOptions{policy: policyBroad, fixture: func(f *awsemu.Fixture) {
		f.SecurityGroups = append(f.SecurityGroups, awsemu.SecurityGroup{ID: managedID, Name: "k8s-elb-" + name, VPCID: emuVPC,
			Tags: map[string]string{"kubernetes.io/cluster/demo": "owned"}})
		f.LoadBalancers = append(f.LoadBalancers, awsemu.LoadBalancer{
			Name: name, Subnets: []string{emuSubnetA, emuSubnetB, emuSubnetC}, SecurityGroups: []string{managedID},
			Listeners: []awsemu.LBListener{{Protocol: "TCP", Port: 80, InstanceProtocol: "TCP", InstancePort: 30080}},
			Instances: []string{emuA},
		})
	}})
	dns := e.classic(name).DNSName
	nodes := e.nodes(emuA, emuB)

	e.reset()
	st := e.ensure(svc, nodes)
	// Tags, the health check (AWS's default differs from upstream's), the
	// missing instance, the client rules and the node rule; nothing is
	// created.
	e.wantMutations("adoption", map[string]int{
		"elasticloadbalancing:AddTags": 1, "elasticloadbalancing:ConfigureHealthCheck": 1,
		"elasticloadbalancing:RegisterInstancesWithLoadBalancer": 1, "ec2:AuthorizeSecurityGroupIngress": 2,
	})
	lb := e.classic(name)
	wantEq(t, "hostname", st.Ingress[0].Hostname, dns)
	wantEq(t, "tags", lb.Tags, map[string]string{"kubernetes.io/cluster/demo": "owned", "kubernetes.io/service-name": "default/legacy-web"})
	wantEq(t, "security groups", lb.SecurityGroups, []string{managedID})
	wantEq(t, "instances", sortedIDs(lb.Instances), []string{emuA, emuB})
	wantEq(t, "health check", lb.HealthCheck, awsemu.ClassicHealthCheck{Target: "TCP:30080", Interval: 10, Timeout: 5, HealthyThreshold: 2, UnhealthyThreshold: 6})
	wantEq(t, "managed group rules", emuRules(e.group(managedID).Ingress, false), []string{"icmp 3-4 0.0.0.0/0", "tcp 80-80 0.0.0.0/0"})
	wantEq(t, "node rules", e.nodeRules(), []string{"-1 0-0 " + managedID})
	if n := len(e.srv.ClassicLoadBalancers()); n != 1 {
		t.Errorf("%d Classic load balancers, want the adopted one only", n)
	}

	e.reset()
	e.ensure(svc, nodes)
	e.wantMutations("re-sync of the adopted load balancer", map[string]int{})

	// Its group is the managed one: Delete removes it too.
	e.delete(svc)
	if inv := e.srv.Inventory(); inv.ClassicLBs != 0 || inv.SecurityGroups != e.groups-1 {
		t.Errorf("after Delete: %+v, want no load balancer and the adopted group gone", inv)
	}
	if left := e.nodeRules(); len(left) != 0 {
		t.Errorf("node rules left: %v", left)
	}
}

// TestEmuClassicForeign: a load balancer or managed group named like the
// Service's but tagged for another cluster or Service is refused with a
// Warning, and left as it is.
func TestEmuClassicForeign(t *testing.T) {
	t.Parallel()
	svc := emuService("clb-foreign", nil)
	name := lbName(svc)
	tests := []struct {
		name    string
		fixture func(*awsemu.Fixture)
		reason  string
		parts   []string
	}{
		{
			name: "load balancer of another cluster",
			fixture: func(f *awsemu.Fixture) {
				f.LoadBalancers = append(f.LoadBalancers, awsemu.LoadBalancer{Name: name, Subnets: []string{emuSubnetA},
					Listeners: []awsemu.LBListener{{Protocol: "TCP", Port: 80, InstancePort: 31000}},
					Tags:      map[string]string{"kubernetes.io/cluster/other": "owned"}})
			},
			reason: ReasonForeignResource, parts: []string{name, "tagged for cluster other"},
		},
		{
			name: "load balancer of another Service",
			fixture: func(f *awsemu.Fixture) {
				f.LoadBalancers = append(f.LoadBalancers, awsemu.LoadBalancer{Name: name, Subnets: []string{emuSubnetA},
					Listeners: []awsemu.LBListener{{Protocol: "TCP", Port: 80, InstancePort: 31000}},
					Tags:      map[string]string{"kubernetes.io/cluster/demo": "owned", "kubernetes.io/service-name": "shop/other"}})
			},
			reason: ReasonForeignResource, parts: []string{name, "tagged for Service shop/other"},
		},
		{
			name: "managed group of another cluster",
			fixture: func(f *awsemu.Fixture) {
				f.SecurityGroups = append(f.SecurityGroups, awsemu.SecurityGroup{ID: "sg-0f0f0000000000001", Name: "k8s-elb-" + name, VPCID: emuVPC,
					Tags: map[string]string{"kubernetes.io/cluster/other": "owned"}})
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEmu(t, emuOptions{fixture: tc.fixture})
			before := e.srv.ClassicLoadBalancers()
			e.reset()
			_, err := e.r.Ensure(e.ctx(), svc, e.nodes(emuA, emuB))
			if err == nil || !strings.Contains(err.Error(), "tagged for") {
				t.Fatalf("Ensure = %v, want an error saying whose it is", err)
			}
			if tc.reason != "" {
				e.wantEvent("Warning "+tc.reason, tc.parts...)
			}
			e.wantMutations("refused", map[string]int{})
			if after := e.srv.ClassicLoadBalancers(); !slices.EqualFunc(before, after, func(a, b awsemu.ClassicLBState) bool {
				return a.Name == b.Name && maps.Equal(a.Tags, b.Tags) && slices.Equal(a.Instances, b.Instances) && a.HealthCheck == b.HealthCheck
			}) {
				t.Errorf("load balancers changed:\n%+v\n%+v", before, after)
			}
			if rules := e.nodeRules(); len(rules) != 0 {
				t.Errorf("node rules added: %v", rules)
			}
		})
	}
}

// TestEmuStoppedInstance: AWS refuses to register an instance that is not
// running (kubernetes#74694: upstream's sync then fails for every Service
// while any node is stopped). A stopped node is left out and the sync
// succeeds; once it runs, it is registered at the next sync. An instance
// the view saw running but AWS refuses holds back no other (moved here from
// test/integration).
func TestEmuStoppedInstance(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"classic", "nlb"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			e := newEmu(t, emuOptions{})
			ann := map[string]string{}
			register := "elasticloadbalancing:RegisterInstancesWithLoadBalancer"
			if kind == "nlb" {
				ann[nlbType] = "nlb"
				register = v2 + "RegisterTargets"
			}
			svc := emuService("stopped", ann)
			registered := func() []string {
				if kind == "nlb" {
					return targetIDs(e.listenerGroups(lbName(svc))[80])
				}
				return sortedIDs(e.classic(lbName(svc)).Instances)
			}
			nodes := e.nodes(emuA, emuStopped)
			e.ensure(svc, nodes)
			wantEq(t, "registered", registered(), []string{emuA})
			if ev := events(e.rec); len(ev) != 0 {
				t.Errorf("events for a stopped node: %q", ev)
			}

			if err := e.srv.SetInstanceState(emuStopped, "running"); err != nil {
				t.Fatal(err)
			}
			e.viewClock.Step(instances.DefaultMaxAge) // the view asks EC2 again
			e.reset()
			e.ensure(svc, nodes)
			e.wantMutations("started instance", map[string]int{register: 1})
			wantEq(t, "registered", registered(), []string{emuA, emuStopped})

			// C stops after the view saw it running: AWS refuses it, B is
			// registered all the same (one refused call, one retry without C).
			other := emuService("other", ann)
			e.ensure(other, e.nodes(emuC))
			if err := e.srv.SetInstanceState(emuC, "stopped"); err != nil {
				t.Fatal(err)
			}
			nodes = e.nodes(emuA, emuB, emuC, emuStopped)
			e.reset()
			e.ensure(svc, nodes)
			e.wantMutations("refused instance", map[string]int{register: 2})
			wantEq(t, "registered", registered(), []string{emuA, emuB, emuStopped})
		})
	}
}

// Private subnets TestEmuClassicTLSAndInternal adds.
const (
	emuPrivateA = "subnet-0demo0000000001a"
	emuPrivateB = "subnet-0demo0000000001b"
)

// classicListenerSummary renders listeners as
// "PROTO:port>PROTO:instancePort[ cert][ policies]", sorted.
func classicListenerSummary(lb awsemu.ClassicLBState) []string {
	var out []string
	for _, l := range lb.Listeners {
		s := l.Protocol + ":" + itoa32(l.Port) + ">" + l.InstanceProtocol + ":" + itoa32(l.InstancePort)
		if l.SSLCertificateID != "" {
			s += " " + l.SSLCertificateID
		}
		if len(l.PolicyNames) > 0 {
			s += " " + strings.Join(l.PolicyNames, ",")
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}
