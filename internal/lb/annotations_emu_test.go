package lb

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/awsccmctl/awsccmctl/internal/lbconfig"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// Every load-balancer annotation against the emulator: what each value
// makes in AWS, what an invalid value leaves alone, and the problems that
// stop a load balancer altogether.

// annCase is one annotation setting and the AWS state it must produce.
type annCase struct {
	name string
	// keys are the registry keys the case covers.
	keys  []string
	nlb   bool
	ann   map[string]string
	mod   func(*corev1.Service)
	nodes []string // default A and B
	// fixture changes the demo fixture.
	fixture func(*awsemu.Fixture)
	check   func(t *testing.T, e *emu, svc *corev1.Service)
}

// Subnets with IDs as AWS makes them (the demo's are not hex), which
// hexSubnets adds to the demo VPC, untagged, in zones a and b.
const (
	emuHexSubnetA = "subnet-0123456789abcdef0"
	emuHexSubnetB = "subnet-0123456789abcdef1"
)

func hexSubnets(f *awsemu.Fixture) {
	f.Subnets = append(f.Subnets,
		awsemu.Subnet{ID: emuHexSubnetA, VPCID: emuVPC, AvailabilityZone: "us-east-1a", CIDR: "10.0.10.0/24"},
		awsemu.Subnet{ID: emuHexSubnetB, VPCID: emuVPC, AvailabilityZone: "us-east-1b", CIDR: "10.0.11.0/24"})
}

func annotationCases() []annCase {
	twoPorts := func(s *corev1.Service) {
		s.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}, {Name: "https", Port: 443, NodePort: 30443, Protocol: corev1.ProtocolTCP}}
	}
	clb := func(t *testing.T, e *emu, svc *corev1.Service) awsemu.ClassicLBState {
		t.Helper()
		return e.classic(lbName(svc))
	}
	nlb := func(t *testing.T, e *emu, svc *corev1.Service) awsemu.NetworkLBState {
		t.Helper()
		return e.nlb(lbName(svc))
	}
	tg80 := func(t *testing.T, e *emu, svc *corev1.Service) awsemu.TargetGroupState {
		t.Helper()
		return e.listenerGroups(lbName(svc))[80]
	}
	return []annCase{
		{
			name: "type nlb", keys: []string{lbconfig.KeyType}, nlb: true,
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				if inv := e.srv.Inventory(); inv.NetworkLBs != 1 || inv.ClassicLBs != 0 {
					t.Errorf("inventory %+v, want one NLB", inv)
				}
				wantEq(t, "type", nlb(t, e, svc).Type, "network")
			},
		},
		{
			name: "no type is Classic", keys: []string{lbconfig.KeyType},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				if inv := e.srv.Inventory(); inv.NetworkLBs != 0 || inv.ClassicLBs != 1 {
					t.Errorf("inventory %+v, want one Classic ELB", inv)
				}
			},
		},
		{
			name: "internal Classic", keys: []string{lbconfig.KeyInternal}, ann: map[string]string{annPrefix + "internal": "true"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				lb := clb(t, e, svc)
				if lb.Scheme != "internal" || !strings.HasPrefix(lb.DNSName, "internal-") {
					t.Errorf("scheme %q, DNS name %q", lb.Scheme, lb.DNSName)
				}
			},
		},
		{
			name: "internal false is internet-facing", keys: []string{lbconfig.KeyInternal}, ann: map[string]string{annPrefix + "internal": "false"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "scheme", clb(t, e, svc).Scheme, "internet-facing")
			},
		},
		{
			name: "internal NLB", keys: []string{lbconfig.KeyInternal}, nlb: true, ann: map[string]string{annPrefix + "internal": "0"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "scheme", nlb(t, e, svc).Scheme, "internal")
			},
		},
		{
			name: "proxy protocol", keys: []string{lbconfig.KeyProxyProtocol}, ann: map[string]string{annPrefix + "proxy-protocol": "*"}, mod: twoPorts,
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				lb := clb(t, e, svc)
				for _, np := range []int32{30080, 30443} {
					wantEq(t, "backend policies of "+itoa32(np), lb.BackendPolicies[np], []string{proxyProtocolPolicy})
				}
			},
		},
		{
			name: "Classic access logs",
			keys: []string{lbconfig.KeyAccessLogEnabled, lbconfig.KeyAccessLogS3BucketName, lbconfig.KeyAccessLogS3BucketPrefix, lbconfig.KeyAccessLogEmitInterval},
			ann: map[string]string{annPrefix + "access-log-enabled": "true", annPrefix + "access-log-s3-bucket-name": "logs-bucket",
				annPrefix + "access-log-s3-bucket-prefix": "clb/web", annPrefix + "access-log-emit-interval": "5"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				a := clb(t, e, svc).Attributes
				if !a.AccessLogEnabled || a.AccessLogS3BucketName != "logs-bucket" || a.AccessLogS3BucketPrefix != "clb/web" || a.AccessLogEmitInterval != 5 {
					t.Errorf("attributes = %+v", a)
				}
			},
		},
		{
			name: "NLB access logs", nlb: true,
			keys: []string{lbconfig.KeyAccessLogEnabled, lbconfig.KeyAccessLogS3BucketName, lbconfig.KeyAccessLogS3BucketPrefix},
			ann:  map[string]string{annPrefix + "access-log-enabled": "true", annPrefix + "access-log-s3-bucket-name": "logs-bucket", annPrefix + "access-log-s3-bucket-prefix": "nlb"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				a := nlb(t, e, svc).Attributes
				if a[attrAccessLogs] != "true" || a[attrAccessLogsBkt] != "logs-bucket" || a[attrAccessLogsPfx] != "nlb" {
					t.Errorf("attributes = %v", a)
				}
			},
		},
		{
			name: "connection draining", keys: []string{lbconfig.KeyConnectionDrainingEnabled, lbconfig.KeyConnectionDrainingTimeout},
			ann: map[string]string{annPrefix + "connection-draining-enabled": "true", annPrefix + "connection-draining-timeout": "75"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				a := clb(t, e, svc).Attributes
				if !a.ConnectionDraining || a.ConnectionDrainingTimeout != 75 {
					t.Errorf("attributes = %+v", a)
				}
			},
		},
		{
			name: "idle timeout", keys: []string{lbconfig.KeyConnectionIdleTimeout}, ann: map[string]string{annPrefix + "connection-idle-timeout": "3600"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "idle timeout", clb(t, e, svc).Attributes.IdleTimeout, 3600)
			},
		},
		{
			name: "Classic cross-zone", keys: []string{lbconfig.KeyCrossZoneLoadBalancing}, ann: map[string]string{annPrefix + "cross-zone-load-balancing-enabled": "true"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "cross-zone", clb(t, e, svc).Attributes.CrossZoneLoadBalancing, true)
			},
		},
		{
			name: "NLB cross-zone", keys: []string{lbconfig.KeyCrossZoneLoadBalancing}, nlb: true, ann: map[string]string{annPrefix + "cross-zone-load-balancing-enabled": "true"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "cross-zone", nlb(t, e, svc).Attributes[attrCrossZone], "true")
			},
		},
		{
			name: "extra security groups", keys: []string{lbconfig.KeyExtraSecurityGroups}, ann: map[string]string{annPrefix + "extra-security-groups": emuExtra},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "security groups", clb(t, e, svc).SecurityGroups, []string{e.managedGroup(lbName(svc)).ID, emuExtra})
			},
		},
		{
			name: "own security groups", keys: []string{lbconfig.KeySecurityGroups}, ann: map[string]string{annPrefix + "security-groups": emuBYO + "," + emuExtra},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "security groups", clb(t, e, svc).SecurityGroups, []string{emuBYO, emuExtra})
				if gs := e.srv.SecurityGroupsNamed("k8s-elb-"); len(gs) != 0 {
					t.Errorf("managed groups created: %+v", gs)
				}
				wantEq(t, "node rules", e.nodeRules(), []string{"-1 0-0 " + emuBYO})
			},
		},
		{
			name: "Classic SSL ports by number", keys: []string{lbconfig.KeySSLCert, lbconfig.KeySSLPorts}, mod: twoPorts,
			ann: map[string]string{annPrefix + "ssl-cert": emuCert, annPrefix + "ssl-ports": "443"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "listeners", classicListenerSummary(clb(t, e, svc)), []string{"SSL:443>TCP:30443 " + emuCert, "TCP:80>TCP:30080"})
			},
		},
		{
			name: "NLB TLS ports by name", keys: []string{lbconfig.KeySSLCert, lbconfig.KeySSLPorts}, nlb: true, mod: twoPorts,
			ann: map[string]string{annPrefix + "ssl-cert": emuCert, annPrefix + "ssl-ports": "https"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				got := map[int32]string{}
				for _, l := range nlb(t, e, svc).Listeners {
					got[l.Port] = l.Protocol + " " + strings.Join(l.CertificateARNs, ",")
				}
				wantEq(t, "listeners", got, map[int32]string{80: "TCP ", 443: "TLS " + emuCert})
			},
		},
		{
			name: "Classic SSL negotiation policy", keys: []string{lbconfig.KeySSLNegotiationPolicy},
			ann: map[string]string{annPrefix + "ssl-cert": emuCert, annPrefix + "ssl-negotiation-policy": "ELBSecurityPolicy-TLS-1-2-2017-01"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				lb := clb(t, e, svc)
				const policy = "k8s-SSLNegotiationPolicy-ELBSecurityPolicy-TLS-1-2-2017-01"
				wantEq(t, "listener policies", lb.Listeners[0].PolicyNames, []string{policy})
				wantEq(t, "policy", lb.Policies[policy], awsemu.ClassicPolicy{Type: "SSLNegotiationPolicyType",
					Attributes: map[string]string{"Reference-Security-Policy": "ELBSecurityPolicy-TLS-1-2-2017-01"}})
			},
		},
		{
			name: "NLB SSL negotiation policy", keys: []string{lbconfig.KeySSLNegotiationPolicy}, nlb: true,
			ann: map[string]string{annPrefix + "ssl-cert": emuCert, annPrefix + "ssl-negotiation-policy": "ELBSecurityPolicy-TLS-1-2-2017-01"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "SSL policy", nlb(t, e, svc).Listeners[0].SSLPolicy, "ELBSecurityPolicy-TLS-1-2-2017-01")
			},
		},
		{
			name: "Classic backend http", keys: []string{lbconfig.KeyBackendProtocol}, ann: map[string]string{annPrefix + "backend-protocol": "http"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "listeners", classicListenerSummary(clb(t, e, svc)), []string{"HTTP:80>HTTP:30080"})
			},
		},
		{
			name: "Classic backend https with a certificate", keys: []string{lbconfig.KeyBackendProtocol},
			ann: map[string]string{annPrefix + "backend-protocol": "https", annPrefix + "ssl-cert": emuCert},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				lb := clb(t, e, svc)
				wantEq(t, "listeners", classicListenerSummary(lb), []string{"HTTPS:80>HTTPS:30080 " + emuCert})
				// An https or ssl backend is health-checked over SSL.
				wantEq(t, "health check target", lb.HealthCheck.Target, "SSL:30080")
			},
		},
		{
			name: "NLB backend ssl", keys: []string{lbconfig.KeyBackendProtocol}, nlb: true,
			ann: map[string]string{annPrefix + "backend-protocol": "ssl", annPrefix + "ssl-cert": emuCert},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "target group protocol", tg80(t, e, svc).Protocol, "TLS")
			},
		},
		{
			name: "Classic additional tags", keys: []string{lbconfig.KeyAdditionalResourceTags}, ann: map[string]string{annPrefix + "additional-resource-tags": "team=web, empty=,bare"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				want := map[string]string{"kubernetes.io/cluster/demo": "owned", "kubernetes.io/service-name": "default/" + svc.Name, "team": "web", "empty": "", "bare": ""}
				wantEq(t, "load balancer tags", clb(t, e, svc).Tags, want)
				wantEq(t, "managed group tags", e.managedGroup(lbName(svc)).Tags, want)
			},
		},
		{
			name: "NLB additional tags", keys: []string{lbconfig.KeyAdditionalResourceTags}, nlb: true, ann: map[string]string{annPrefix + "additional-resource-tags": "team=web"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				want := map[string]string{"kubernetes.io/cluster/demo": "owned", "kubernetes.io/service-name": "default/" + svc.Name, "team": "web"}
				wantEq(t, "load balancer tags", nlb(t, e, svc).Tags, want)
				wantEq(t, "target group tags", tg80(t, e, svc).Tags, want)
			},
		},
		{
			name: "Classic health check",
			keys: []string{lbconfig.KeyHealthCheckProtocol, lbconfig.KeyHealthCheckPort, lbconfig.KeyHealthCheckPath, lbconfig.KeyHealthCheckHealthyThresh,
				lbconfig.KeyHealthCheckUnhealthyThresh, lbconfig.KeyHealthCheckInterval, lbconfig.KeyHealthCheckTimeout},
			ann: map[string]string{annPrefix + "healthcheck-protocol": "http", annPrefix + "healthcheck-port": "8080", annPrefix + "healthcheck-path": "/ready",
				annPrefix + "healthcheck-healthy-threshold": "4", annPrefix + "healthcheck-unhealthy-threshold": "5",
				annPrefix + "healthcheck-interval": "20", annPrefix + "healthcheck-timeout": "3"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "health check", clb(t, e, svc).HealthCheck, awsemu.ClassicHealthCheck{Target: "HTTP:8080/ready", Interval: 20, Timeout: 3, HealthyThreshold: 4, UnhealthyThreshold: 5})
			},
		},
		{
			name: "NLB health check", nlb: true,
			keys: []string{lbconfig.KeyHealthCheckProtocol, lbconfig.KeyHealthCheckPort, lbconfig.KeyHealthCheckPath, lbconfig.KeyHealthCheckHealthyThresh,
				lbconfig.KeyHealthCheckUnhealthyThresh, lbconfig.KeyHealthCheckInterval, lbconfig.KeyHealthCheckTimeout},
			ann: map[string]string{annPrefix + "healthcheck-protocol": "HTTPS", annPrefix + "healthcheck-port": "10256", annPrefix + "healthcheck-path": "/livez",
				annPrefix + "healthcheck-healthy-threshold": "4", annPrefix + "healthcheck-unhealthy-threshold": "5",
				annPrefix + "healthcheck-interval": "10", annPrefix + "healthcheck-timeout": "6"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				tg := tg80(t, e, svc)
				got := [...]any{tg.HealthCheckProtocol, tg.HealthCheckPort, tg.HealthCheckPath, tg.HealthyThreshold, tg.UnhealthyThreshold, tg.HealthCheckIntervalSeconds, tg.HealthCheckTimeoutSeconds}
				wantEq(t, "health check", got, [...]any{"HTTPS", "10256", "/livez", int32(4), int32(5), int32(10), int32(6)})
				// The health checks come from the load balancer's subnets.
				for _, c := range []string{"10.0.1.0/24", "10.0.2.0/24", "10.0.3.0/24"} {
					if !slices.Contains(e.nodeRules(), "tcp 10256-10256 "+c+" kubernetes.io/rule/nlb/health="+lbName(svc)) {
						t.Errorf("node rules %v lack the health rule from %s", e.nodeRules(), c)
					}
				}
			},
		},
		{
			name: "target group attributes", keys: []string{lbconfig.KeyTargetGroupAttributes}, nlb: true,
			ann: map[string]string{annPrefix + "target-group-attributes": "preserve_client_ip.enabled=false,proxy_protocol_v2.enabled=true"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				a := tg80(t, e, svc).Attributes
				if a[attrPreserveClient] != "false" || a[attrProxyV2] != "true" {
					t.Errorf("target group attributes = %v", a)
				}
			},
		},
		{
			name: "Elastic IPs", keys: []string{lbconfig.KeyEIPAllocations}, nlb: true,
			ann: map[string]string{annPrefix + "subnets": "demo-public-a,demo-public-b", annPrefix + "eip-allocations": "eipalloc-0123456789abcdef0,eipalloc-0123456789abcdef1"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				var got []string
				for _, m := range nlb(t, e, svc).SubnetMappings {
					got = append(got, m.SubnetID+"="+m.AllocationID)
				}
				wantEq(t, "subnet mappings", got, []string{emuSubnetA + "=eipalloc-0123456789abcdef0", emuSubnetB + "=eipalloc-0123456789abcdef1"})
			},
		},
		{
			name: "private addresses", keys: []string{lbconfig.KeyPrivateIPv4Addresses}, nlb: true,
			ann: map[string]string{annPrefix + "internal": "true", annPrefix + "private-ipv4-addresses": "10.0.1.50,10.0.2.50,10.0.3.50"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				var got []string
				for _, m := range nlb(t, e, svc).SubnetMappings {
					got = append(got, m.SubnetID+"="+m.PrivateIPv4Address)
				}
				wantEq(t, "subnet mappings", got, []string{emuSubnetA + "=10.0.1.50", emuSubnetB + "=10.0.2.50", emuSubnetC + "=10.0.3.50"})
			},
		},
		{
			name: "Classic target node labels", keys: []string{lbconfig.KeyTargetNodeLabels}, ann: map[string]string{annPrefix + "target-node-labels": "role=edge,zone-b"},
			nodes: []string{emuA, emuB, emuC},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "instances", clb(t, e, svc).Instances, []string{emuB})
			},
		},
		{
			name: "NLB target node labels", keys: []string{lbconfig.KeyTargetNodeLabels}, nlb: true, ann: map[string]string{annPrefix + "target-node-labels": "role"},
			nodes: []string{emuA, emuB, emuC},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "targets", targetIDs(tg80(t, e, svc)), []string{emuB, emuC})
			},
		},
		{
			name: "Classic subnets by ID", keys: []string{lbconfig.KeySubnets}, ann: map[string]string{annPrefix + "subnets": emuHexSubnetA + "," + emuHexSubnetB},
			fixture: hexSubnets,
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "subnets", sortedIDs(clb(t, e, svc).Subnets), []string{emuHexSubnetA, emuHexSubnetB})
			},
		},
		{
			name: "NLB subnets by Name tag", keys: []string{lbconfig.KeySubnets}, nlb: true, ann: map[string]string{annPrefix + "subnets": "demo-private-c"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "subnets", nlb(t, e, svc).Subnets, []string{emuSubnetC})
			},
		},
		{
			name: "Classic source ranges", keys: []string{lbconfig.KeySourceRanges}, ann: map[string]string{"service.beta.kubernetes.io/load-balancer-source-ranges": "10.9.0.0/16"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "managed group rules", emuRules(e.managedGroup(lbName(svc)).Ingress, false), []string{"icmp 3-4 10.9.0.0/16", "tcp 80-80 10.9.0.0/16"})
			},
		},
		{
			name: "spec source ranges win", keys: []string{lbconfig.KeySourceRanges}, ann: map[string]string{"service.beta.kubernetes.io/load-balancer-source-ranges": "10.9.0.0/16"},
			mod: func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"10.8.0.0/16"} },
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "managed group rules", emuRules(e.managedGroup(lbName(svc)).Ingress, false), []string{"icmp 3-4 10.8.0.0/16", "tcp 80-80 10.8.0.0/16"})
			},
		},
		{
			name: "NLB source ranges", keys: []string{lbconfig.KeySourceRanges}, nlb: true, ann: map[string]string{"service.beta.kubernetes.io/load-balancer-source-ranges": "10.9.0.0/16"},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				rules := e.nodeRules()
				for _, want := range []string{"tcp 30080-30080 10.9.0.0/16 kubernetes.io/rule/nlb/client=" + lbName(svc), "icmp 3-4 10.9.0.0/16 kubernetes.io/rule/nlb/mtu"} {
					if !slices.Contains(rules, want) {
						t.Errorf("node rules %v lack %q", rules, want)
					}
				}
				if slices.ContainsFunc(rules, func(r string) bool { return strings.Contains(r, "0.0.0.0/0") }) {
					t.Errorf("node rules %v open to 0.0.0.0/0", rules)
				}
			},
		},
	}
}

// TestEmuAnnotations: each annotation value makes its AWS state, read back
// from the emulator; a second sync writes nothing, and Delete leaves
// nothing. Every annotation of the registry has a case.
func TestEmuAnnotations(t *testing.T) {
	t.Parallel()
	cases := annotationCases()
	covered := map[string]bool{}
	for _, tc := range cases {
		for _, k := range tc.keys {
			covered[k] = true
		}
	}
	for _, a := range lbconfig.Annotations() {
		if !covered[a.Key] {
			t.Errorf("annotation %s has no case", a.Key)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEmu(t, emuOptions{byoGroups: true, fixture: tc.fixture})
			ann := tc.ann
			if tc.nlb {
				ann = merge(ann, map[string]string{nlbType: "nlb"})
			}
			svc := emuService("ann-"+strings.ReplaceAll(strings.ToLower(tc.name), " ", "-"), ann)
			if tc.mod != nil {
				tc.mod(svc)
			}
			ids := tc.nodes
			if ids == nil {
				ids = []string{emuA, emuB}
			}
			nodes := e.nodes(ids...)
			labelNode(nodes, emuB, "role", "edge")
			labelNode(nodes, emuB, "zone-b", "")
			labelNode(nodes, emuC, "role", "other")
			e.ensure(svc, nodes)
			if ev := events(e.rec); len(ev) != 0 {
				t.Errorf("events for a valid Service: %q", ev)
			}
			tc.check(t, e, svc)

			e.reset()
			e.ensure(svc, nodes)
			e.wantMutations("second sync", map[string]int{})

			e.delete(svc)
			e.wantNothingLeft()
		})
	}
}

// TestEmuExternalTypes: Services another controller serves are not
// touched: Ensure says so, and Get and Delete make no call.
func TestEmuExternalTypes(t *testing.T) {
	t.Parallel()
	e := newEmu(t, emuOptions{})
	for _, typ := range []string{"nlb-ip", "external"} {
		svc := emuService("ext-"+typ, map[string]string{nlbType: typ})
		e.reset()
		if _, err := e.r.Ensure(e.ctx(), svc, e.nodes(emuA)); !errors.Is(err, cloudprovider.ImplementedElsewhere) {
			t.Errorf("%s: Ensure = %v, want ImplementedElsewhere", typ, err)
		}
		if e.exists(svc) {
			t.Errorf("%s: Get reports a load balancer", typ)
		}
		if err := e.r.Delete(e.ctx(), svc); !errors.Is(err, cloudprovider.ImplementedElsewhere) {
			t.Errorf("%s: Delete = %v, want ImplementedElsewhere", typ, err)
		}
		if calls := e.srv.CallCounts(); len(calls) != 0 {
			t.Errorf("%s: AWS calls %s, want none", typ, formatCalls(calls))
		}
	}
	e.wantNothingLeft()
}

// TestEmuInvalidAnnotations: an invalid value is reported in a Warning
// naming the annotation and its value, the sync goes on, and what the
// annotation governs is left as it is in AWS (where falling back to the
// default would have changed it); valid changes in the same sync still
// apply.
func TestEmuInvalidAnnotations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		nlb  bool
		// base is the valid configuration; bad the invalid value of key.
		base     map[string]string
		baseMod  func(*corev1.Service)
		key, bad string
		// also are valid changes made in the same sync, and want their calls.
		also map[string]string
		want map[string]int
		// nodes of the second sync (default A and B).
		nodes []string
		check func(t *testing.T, e *emu, svc *corev1.Service)
	}{
		{
			name: "cross-zone", base: map[string]string{annPrefix + "cross-zone-load-balancing-enabled": "true"},
			key: annPrefix + "cross-zone-load-balancing-enabled", bad: "maybe",
			also: map[string]string{annPrefix + "connection-idle-timeout": "90"},
			want: map[string]int{"elasticloadbalancing:ModifyLoadBalancerAttributes": 1},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				a := e.classic(lbName(svc)).Attributes
				if !a.CrossZoneLoadBalancing || a.IdleTimeout != 90 {
					t.Errorf("attributes = %+v, want cross-zone kept and the idle timeout changed", a)
				}
			},
		},
		{
			name: "idle timeout", base: map[string]string{annPrefix + "connection-idle-timeout": "120"},
			key: annPrefix + "connection-idle-timeout", bad: "forever",
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "idle timeout", e.classic(lbName(svc)).Attributes.IdleTimeout, 120)
			},
		},
		{
			name: "draining timeout", base: map[string]string{annPrefix + "connection-draining-enabled": "true", annPrefix + "connection-draining-timeout": "30"},
			key: annPrefix + "connection-draining-timeout", bad: "0",
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				a := e.classic(lbName(svc)).Attributes
				if !a.ConnectionDraining || a.ConnectionDrainingTimeout != 30 {
					t.Errorf("attributes = %+v", a)
				}
			},
		},
		{
			name: "access log bucket", base: map[string]string{annPrefix + "access-log-enabled": "true", annPrefix + "access-log-s3-bucket-name": "logs-bucket"},
			key: annPrefix + "access-log-s3-bucket-name", bad: "Not_A_Bucket",
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				a := e.classic(lbName(svc)).Attributes
				if !a.AccessLogEnabled || a.AccessLogS3BucketName != "logs-bucket" {
					t.Errorf("attributes = %+v", a)
				}
			},
		},
		{
			name: "health check interval", base: map[string]string{annPrefix + "healthcheck-interval": "30"},
			key: annPrefix + "healthcheck-interval", bad: "1",
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "interval", e.classic(lbName(svc)).HealthCheck.Interval, 30)
			},
		},
		{
			name: "health check timeout not below the interval", base: map[string]string{annPrefix + "healthcheck-timeout": "8"},
			key: annPrefix + "healthcheck-timeout", bad: "10",
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "health check", e.classic(lbName(svc)).HealthCheck.Timeout, 8)
			},
		},
		{
			name: "source ranges never fall back to 0.0.0.0/0",
			base: map[string]string{"service.beta.kubernetes.io/load-balancer-source-ranges": "10.1.0.0/16"},
			key:  "service.beta.kubernetes.io/load-balancer-source-ranges", bad: "10.1.0.0/33",
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "managed group rules", emuRules(e.managedGroup(lbName(svc)).Ingress, false), []string{"icmp 3-4 10.1.0.0/16", "tcp 80-80 10.1.0.0/16"})
			},
		},
		{
			name: "own security groups", base: map[string]string{annPrefix + "security-groups": emuBYO},
			key: annPrefix + "security-groups", bad: "sg-nothex",
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "security groups", e.classic(lbName(svc)).SecurityGroups, []string{emuBYO})
				if gs := e.srv.SecurityGroupsNamed("k8s-elb-"); len(gs) != 0 {
					t.Errorf("managed groups created: %+v", gs)
				}
			},
		},
		{
			name: "SSL ports", base: map[string]string{annPrefix + "ssl-cert": emuCert, annPrefix + "ssl-ports": "443"},
			baseMod: func(s *corev1.Service) {
				s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "https", Port: 443, NodePort: 30443, Protocol: corev1.ProtocolTCP})
			},
			key: annPrefix + "ssl-ports", bad: "443, 80",
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "listeners", classicListenerSummary(e.classic(lbName(svc))), []string{"SSL:443>TCP:30443 " + emuCert, "TCP:80>TCP:30080"})
			},
		},
		{
			name: "backend protocol", base: map[string]string{annPrefix + "backend-protocol": "http"},
			key: annPrefix + "backend-protocol", bad: "ftp",
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "listeners", classicListenerSummary(e.classic(lbName(svc))), []string{"HTTP:80>HTTP:30080"})
			},
		},
		{
			name: "subnets", base: map[string]string{annPrefix + "subnets": "demo-public-a,demo-public-b"},
			key: annPrefix + "subnets", bad: "subnet-zz",
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "subnets", sortedIDs(e.classic(lbName(svc)).Subnets), []string{emuSubnetA, emuSubnetB})
			},
		},
		{
			name: "additional tags", base: map[string]string{annPrefix + "additional-resource-tags": "team=web"},
			key: annPrefix + "additional-resource-tags", bad: "aws:owner=me",
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				if tags := e.classic(lbName(svc)).Tags; tags["team"] != "web" || tags["aws:owner"] != "" {
					t.Errorf("tags = %v", tags)
				}
			},
		},
		{
			name: "target node labels keep the registered instances", base: map[string]string{annPrefix + "target-node-labels": "role=edge"},
			key: annPrefix + "target-node-labels", bad: "role=not a value!",
			// B leaves too: with an invalid selector nothing is deregistered.
			nodes: []string{emuA, emuC},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "instances", e.classic(lbName(svc)).Instances, []string{emuB})
			},
		},
		{
			name: "NLB health check protocol", nlb: true, base: map[string]string{annPrefix + "healthcheck-protocol": "HTTP"},
			key: annPrefix + "healthcheck-protocol", bad: "UDP",
			also: map[string]string{annPrefix + "cross-zone-load-balancing-enabled": "true"},
			want: map[string]int{v2 + "ModifyLoadBalancerAttributes": 1},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				tg := e.listenerGroups(lbName(svc))[80]
				wantEq(t, "health check protocol", tg.HealthCheckProtocol, "HTTP")
				wantEq(t, "cross-zone", e.nlb(lbName(svc)).Attributes[attrCrossZone], "true")
			},
		},
		{
			name: "NLB health check interval would replace the target groups", nlb: true,
			key: annPrefix + "healthcheck-interval", bad: "301",
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "interval", e.listenerGroups(lbName(svc))[80].HealthCheckIntervalSeconds, 30)
			},
		},
		{
			name: "NLB target group attributes", nlb: true, base: map[string]string{annPrefix + "target-group-attributes": "proxy_protocol_v2.enabled=true"},
			key: annPrefix + "target-group-attributes", bad: "stickiness.enabled=true",
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "proxy protocol v2", e.listenerGroups(lbName(svc))[80].Attributes[attrProxyV2], "true")
			},
		},
		{
			name: "NLB source ranges", nlb: true, base: map[string]string{"service.beta.kubernetes.io/load-balancer-source-ranges": "10.1.0.0/16"},
			key: "service.beta.kubernetes.io/load-balancer-source-ranges", bad: "ten.one",
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				if !slices.Contains(e.nodeRules(), "tcp 30080-30080 10.1.0.0/16 kubernetes.io/rule/nlb/client="+lbName(svc)) {
					t.Errorf("node rules = %v", e.nodeRules())
				}
			},
		},
		{
			name: "NLB target node labels", nlb: true, base: map[string]string{annPrefix + "target-node-labels": "role=edge"},
			key: annPrefix + "target-node-labels", bad: "=edge", nodes: []string{emuA},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				wantEq(t, "targets", targetIDs(e.listenerGroups(lbName(svc))[80]), []string{emuB})
			},
		},
		{
			// Set for the other type: reported, and the load balancer is
			// otherwise synced.
			name: "NLB-only annotation on a Classic ELB", key: annPrefix + "target-group-attributes", bad: "proxy_protocol_v2.enabled=true",
			also: map[string]string{annPrefix + "cross-zone-load-balancing-enabled": "true"},
			want: map[string]int{"elasticloadbalancing:ModifyLoadBalancerAttributes": 1},
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				e.wantEvent("Warning "+ReasonInvalidConfiguration, "applies only to NLBs")
			},
		},
		{
			name: "Classic-only annotation on an NLB", nlb: true, key: annPrefix + "security-groups", bad: emuBYO,
			check: func(t *testing.T, e *emu, svc *corev1.Service) {
				e.wantEvent("Warning "+ReasonInvalidConfiguration, "applies only to Classic ELBs")
				wantEq(t, "security groups", e.nlb(lbName(svc)).SecurityGroups, []string(nil))
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEmu(t, emuOptions{byoGroups: true})
			base := tc.base
			if tc.nlb {
				base = merge(base, map[string]string{nlbType: "nlb"})
			}
			svc := emuService("invalid-"+strings.ReplaceAll(strings.ToLower(tc.name), " ", "-"), base)
			if tc.baseMod != nil {
				tc.baseMod(svc)
			}
			nodes := e.nodes(emuA, emuB)
			labelNode(nodes, emuB, "role", "edge")
			e.ensure(svc, nodes)
			beforeCLB, beforeNLB, beforeTGs := e.srv.ClassicLoadBalancers(), e.srv.NetworkLoadBalancers(), e.srv.TargetGroups()

			bad := withAnn(svc, merge(tc.also, map[string]string{tc.key: tc.bad}))
			if tc.nodes != nil {
				nodes = e.nodes(tc.nodes...)
				labelNode(nodes, emuB, "role", "edge")
			}
			e.reset()
			e.ensure(bad, nodes)
			want := tc.want
			if want == nil {
				want = map[string]int{}
				// Nothing else changed: AWS is exactly as before.
				if !reflect.DeepEqual(e.srv.ClassicLoadBalancers(), beforeCLB) || !reflect.DeepEqual(e.srv.NetworkLoadBalancers(), beforeNLB) ||
					!reflect.DeepEqual(e.srv.TargetGroups(), beforeTGs) {
					t.Errorf("load balancers changed")
				}
			}
			e.wantMutations("invalid "+tc.key, want)
			e.wantEvent("Warning "+ReasonInvalidConfiguration, tc.key, "left unchanged")
			if tc.check != nil {
				tc.check(t, e, bad)
			}
		})
	}
}

// TestEmuBlockingProblems: problems with the Service itself stop the sync
// with an error before AWS is asked anything, with a Warning naming them.
// A Service whose type annotation changed keeps its load balancer.
func TestEmuBlockingProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		svc    func() *corev1.Service
		before bool // create the Classic ELB first
		field  string
		parts  []string
	}{
		{
			name: "loadBalancerIP",
			svc: func() *corev1.Service {
				s := emuService("blocked-ip", nil)
				s.Spec.LoadBalancerIP = "203.0.113.7"
				return s
			},
			field: lbconfig.FieldLoadBalancerIP, parts: []string{"203.0.113.7"},
		},
		{
			name: "mixed protocols",
			svc: func() *corev1.Service {
				return emuService("blocked-mixed", map[string]string{nlbType: "nlb"},
					corev1.ServicePort{Name: "dns-udp", Port: 53, NodePort: 30053, Protocol: corev1.ProtocolUDP},
					corev1.ServicePort{Name: "dns-tcp", Port: 53, NodePort: 30054, Protocol: corev1.ProtocolTCP})
			},
			field: lbconfig.FieldPorts, parts: []string{"mixed protocols"},
		},
		{
			// Refusing reads nothing from AWS: the Classic ELB stays and no
			// NLB is made (the unit equivalent of test/integration
			// TestTypeChangeRejected).
			name:   "type changed from Classic to NLB",
			before: true,
			svc:    func() *corev1.Service { return emuService("blocked-type", nil) },
			field:  lbconfig.KeyType, parts: []string{"Classic ELB"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEmu(t, emuOptions{})
			svc := tc.svc()
			nodes := e.nodes(emuA)
			var host string
			if tc.before {
				host = e.ensure(svc, nodes).Ingress[0].Hostname
				svc = withAnn(svc, map[string]string{nlbType: "nlb"}, func(s *corev1.Service) {
					s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{Hostname: host}}
				})
			}
			before := e.srv.Inventory()
			e.reset()
			for _, sync := range []func() error{
				func() error { _, err := e.r.Ensure(e.ctx(), svc, nodes); return err },
				func() error { return e.r.Update(e.ctx(), svc, nodes) },
			} {
				if err := sync(); err == nil || !strings.Contains(err.Error(), tc.field) {
					t.Errorf("sync = %v, want an error naming %s", err, tc.field)
				}
				e.wantEvent("Warning "+ReasonInvalidConfiguration, append([]string{tc.field}, tc.parts...)...)
			}
			if calls := e.srv.CallCounts(); len(calls) != 0 {
				t.Errorf("AWS calls %s, want none", formatCalls(calls))
			}
			wantEq(t, "inventory", e.srv.Inventory(), before)
			if tc.before {
				if lb := e.classic(lbName(svc)); lb.DNSName != host {
					t.Errorf("Classic DNS name %q, want %q", lb.DNSName, host)
				}
			}
		})
	}
}

// TestEmuNotCreatedWithInvalidCreationSettings: settings a load balancer
// cannot change after creation must be valid to create it; nothing is
// made (not even a security group) while they are not.
func TestEmuNotCreatedWithInvalidCreationSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ann  map[string]string
		want string
	}{
		{name: "Classic subnets", ann: map[string]string{annPrefix + "subnets": "subnet-zz"}, want: "not creating the load balancer"},
		{name: "Classic security groups", ann: map[string]string{annPrefix + "security-groups": "sg-zz"}, want: "security-group annotations are invalid"},
		{name: "Classic subnet that does not exist", ann: map[string]string{annPrefix + "subnets": "no-such-subnet"}, want: "no subnet in " + emuVPC},
		{name: "NLB Elastic IPs", ann: map[string]string{nlbType: "nlb", annPrefix + "eip-allocations": "eipalloc-zz"}, want: "it cannot be changed after creation"},
		{name: "NLB private addresses", ann: map[string]string{nlbType: "nlb", annPrefix + "internal": "true", annPrefix + "private-ipv4-addresses": "10.0.1.9"}, want: "give one per subnet"},
		{name: "NLB subnets", ann: map[string]string{nlbType: "nlb", annPrefix + "subnets": "subnet-zz"}, want: "it cannot be changed after creation"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEmu(t, emuOptions{})
			svc := emuService("not-created", tc.ann)
			_, err := e.r.Ensure(e.ctx(), svc, e.nodes(emuA, emuB))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Ensure = %v, want an error containing %q", err, tc.want)
			}
			e.wantMutations("refused creation", map[string]int{})
			e.wantNothingLeft()
			if e.exists(svc) {
				t.Errorf("Get reports a load balancer")
			}
		})
	}
}
