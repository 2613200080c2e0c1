package lb

import (
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// Network load balancers against the emulator: creation field by field,
// the diff logic, adoption, refusal of foreign resources and deletion.

const (
	v2 = "elasticloadbalancingv2:"
	// nlbType is the type annotation ("nlb" selects an NLB).
	nlbType = annPrefix + "type"
)

// TestEmuNLBLifecycle creates an NLB with a TLS and a TCP listener and a
// spread of annotations, checks it field by field, re-syncs it unchanged,
// adds a node, changes the health-check interval (which replaces the target
// groups, as upstream names them by it) and deletes it (the unit equivalent
// of test/integration TestNLBLifecycle).
func TestEmuNLBLifecycle(t *testing.T) {
	t.Parallel()
	e := newEmu(t, emuOptions{})
	svc := emuService("nlb-web", map[string]string{
		nlbType:                 "nlb",
		annPrefix + "ssl-cert":  emuCert,
		annPrefix + "ssl-ports": "https",
		annPrefix + "cross-zone-load-balancing-enabled": "true",
		annPrefix + "additional-resource-tags":          "team=web",
		annPrefix + "healthcheck-timeout":               "7",
		annPrefix + "target-group-attributes":           "preserve_client_ip.enabled=false",
	},
		corev1.ServicePort{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP},
		corev1.ServicePort{Name: "https", Port: 443, NodePort: 30443, Protocol: corev1.ProtocolTCP})
	svc.Spec.LoadBalancerSourceRanges = []string{"10.1.0.0/16"}
	nodes := e.nodes(emuA, emuB)

	st := e.ensure(svc, nodes)
	name := lbName(svc)
	lb := e.nlb(name)
	if host := st.Ingress[0].Hostname; host != lb.DNSName || lb.Type != "network" || lb.Scheme != "internet-facing" || !strings.Contains(host, ".elb.us-east-1.amazonaws.com") {
		t.Errorf("status hostname %q, type %q, scheme %q; AWS DNS name %q", host, lb.Type, lb.Scheme, lb.DNSName)
	}
	wantEq(t, "subnets", sortedIDs(lb.Subnets), []string{emuSubnetA, emuSubnetB, emuSubnetC})
	wantTags := map[string]string{"kubernetes.io/cluster/demo": "owned", "kubernetes.io/service-name": "default/nlb-web", "team": "web"}
	wantEq(t, "tags", lb.Tags, wantTags)
	wantEq(t, "cross-zone", lb.Attributes[attrCrossZone], "true")
	if len(lb.SecurityGroups) != 0 || len(e.srv.SecurityGroupsNamed("k8s-elb-")) != 0 {
		t.Errorf("NLB security groups %v; managed groups %+v; want none", lb.SecurityGroups, e.srv.SecurityGroupsNamed("k8s-elb-"))
	}
	if len(lb.Listeners) != 2 {
		t.Fatalf("listeners = %+v, want 2", lb.Listeners)
	}
	for _, l := range lb.Listeners {
		wantProto := map[int32]string{80: "TCP", 443: "TLS"}[l.Port]
		if l.Protocol != wantProto {
			t.Errorf("listener %d protocol %s, want %s", l.Port, l.Protocol, wantProto)
		}
		if wantCerts := map[int32][]string{443: {emuCert}}[l.Port]; !slices.Equal(l.CertificateARNs, wantCerts) {
			t.Errorf("listener %d certificates %v, want %v", l.Port, l.CertificateARNs, wantCerts)
		}
		wantEq(t, "listener tags", l.Tags, wantTags)
	}
	groups := e.listenerGroups(name)
	for port, np := range map[int32]int32{80: 30080, 443: 30443} {
		tg := groups[port]
		// The target group name is upstream's: existing ones are adopted.
		wantEq(t, "target group name", tg.Name, upstreamTargetGroupName("demo", "default", "nlb-web", port, np))
		if tg.Protocol != "TCP" || tg.Port != np || tg.TargetType != "instance" || tg.VPCID != emuVPC {
			t.Errorf("target group of %d: %s:%d %s in %s, want TCP:%d instance", port, tg.Protocol, tg.Port, tg.TargetType, tg.VPCID, np)
		}
		if tg.HealthCheckProtocol != "TCP" || tg.HealthCheckPort != "traffic-port" || tg.HealthCheckIntervalSeconds != 30 ||
			tg.HealthyThreshold != 3 || tg.UnhealthyThreshold != 3 || tg.HealthCheckTimeoutSeconds != 7 {
			t.Errorf("health check of %s: %s %s every %ds, %d/%d, timeout %ds", tg.Name, tg.HealthCheckProtocol, tg.HealthCheckPort,
				tg.HealthCheckIntervalSeconds, tg.HealthyThreshold, tg.UnhealthyThreshold, tg.HealthCheckTimeoutSeconds)
		}
		wantEq(t, "preserve_client_ip of "+tg.Name, tg.Attributes[attrPreserveClient], "false")
		wantEq(t, "targets of "+tg.Name, targetIDs(tg), []string{emuA, emuB})
		wantEq(t, "tags of "+tg.Name, tg.Tags, wantTags)
	}
	var wantRules []string
	for _, np := range []string{"30080", "30443"} {
		wantRules = append(wantRules, "tcp "+np+"-"+np+" 10.1.0.0/16 kubernetes.io/rule/nlb/client="+name)
		for _, c := range []string{"10.0.1.0/24", "10.0.2.0/24", "10.0.3.0/24"} {
			wantRules = append(wantRules, "tcp "+np+"-"+np+" "+c+" kubernetes.io/rule/nlb/health="+name)
		}
	}
	wantRules = append(wantRules, "icmp 3-4 10.1.0.0/16 kubernetes.io/rule/nlb/mtu")
	wantEq(t, "node rules", e.nodeRules(), sortedIDs(wantRules))

	// Unchanged re-sync: reads only, 6 + 2 per port (load balancer, tags,
	// listeners, target groups, attributes, node groups; per port target
	// health and, with the annotation, target group attributes).
	e.reset()
	e.ensure(svc, nodes)
	e.wantMutations("unchanged re-sync", map[string]int{})
	if n := sumCalls(e.lbCalls()); n > 6+2*2 {
		t.Errorf("unchanged re-sync made %d calls, want at most 10: %s", n, formatCalls(e.lbCalls()))
	}

	// A node joins: one RegisterTargets per target group, nothing else.
	nodes = e.nodes(emuA, emuB, emuC)
	e.reset()
	e.update(svc, nodes)
	e.wantMutations("node added", map[string]int{v2 + "RegisterTargets": 2})
	for _, tg := range e.listenerGroups(name) {
		wantEq(t, "targets of "+tg.Name, targetIDs(tg), emuRunning)
	}

	// The health-check interval names the target groups: new ones replace
	// the old, which are deleted once no listener uses them.
	old := e.listenerGroups(name)
	svc = withAnn(svc, map[string]string{annPrefix + "healthcheck-interval": "10"})
	e.reset()
	e.ensure(svc, nodes)
	e.wantMutations("interval change", map[string]int{v2 + "CreateTargetGroup": 2, v2 + "RegisterTargets": 2,
		v2 + "ModifyTargetGroupAttributes": 2, v2 + "ModifyListener": 2, v2 + "DeleteTargetGroup": 2})
	if n := len(e.srv.TargetGroups()); n != 2 {
		t.Errorf("%d target groups after the interval change, want 2", n)
	}
	for port, tg := range e.listenerGroups(name) {
		if tg.ARN == old[port].ARN || tg.HealthCheckIntervalSeconds != 10 || !slices.Equal(targetIDs(tg), emuRunning) || tg.Attributes[attrPreserveClient] != "false" {
			t.Errorf("target group of %d after the interval change: %+v", port, tg)
		}
	}
	e.reset()
	e.ensure(svc, nodes)
	e.wantMutations("re-sync after the interval change", map[string]int{})

	e.delete(svc)
	e.wantNothingLeft()
	if e.exists(svc) {
		t.Errorf("Get reports the load balancer after Delete")
	}
}

// TestEmuInternalNLBWithAddresses: an internal UDP NLB in the subnets named
// by the annotation (Name tags), with fixed private addresses, ETP=Local
// health checks on HTTP, a node removed from its targets and its source
// ranges changed (moved here from test/integration).
func TestEmuInternalNLBWithAddresses(t *testing.T) {
	t.Parallel()
	e := newEmu(t, emuOptions{})
	svc := emuService("nlb-dns", map[string]string{
		nlbType:                               "nlb",
		annPrefix + "internal":                "true",
		annPrefix + "subnets":                 "demo-public-a, demo-private-c",
		annPrefix + "private-ipv4-addresses":  "10.0.1.200,10.0.3.200",
		annPrefix + "healthcheck-interval":    "10",
		annPrefix + "target-group-attributes": "proxy_protocol_v2.enabled=true",
	}, corev1.ServicePort{Name: "dns", Port: 53, NodePort: 30053, Protocol: corev1.ProtocolUDP})
	svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	svc.Spec.HealthCheckNodePort = 32100
	nodes := e.nodes(emuA, emuB, emuC)

	e.ensure(svc, nodes)
	name := lbName(svc)
	lb := e.nlb(name)
	wantEq(t, "scheme", lb.Scheme, "internal")
	var mappings []string
	for _, m := range lb.SubnetMappings {
		mappings = append(mappings, m.SubnetID+"="+m.PrivateIPv4Address)
	}
	wantEq(t, "subnet mappings", sortedIDs(mappings), []string{emuSubnetA + "=10.0.1.200", emuSubnetC + "=10.0.3.200"})
	if len(lb.Listeners) != 1 || lb.Listeners[0].Protocol != "UDP" || lb.Listeners[0].Port != 53 {
		t.Fatalf("listeners = %+v", lb.Listeners)
	}
	tg := e.listenerGroups(name)[53]
	if tg.Protocol != "UDP" || tg.Port != 30053 || tg.HealthCheckProtocol != "HTTP" || tg.HealthCheckPort != "32100" ||
		tg.HealthCheckPath != "/healthz" || tg.HealthCheckIntervalSeconds != 10 || tg.HealthyThreshold != 2 || tg.UnhealthyThreshold != 2 {
		t.Errorf("target group %+v", tg)
	}
	wantEq(t, "proxy_protocol_v2.enabled", tg.Attributes[attrProxyV2], "true")
	wantEq(t, "targets", targetIDs(tg), emuRunning)
	// UDP clients from anywhere; health checks from the two subnets on the
	// health-check node port.
	want := []string{
		"icmp 3-4 0.0.0.0/0 kubernetes.io/rule/nlb/mtu",
		"tcp 32100-32100 10.0.1.0/24 kubernetes.io/rule/nlb/health=" + name,
		"tcp 32100-32100 10.0.3.0/24 kubernetes.io/rule/nlb/health=" + name,
		"udp 30053-30053 0.0.0.0/0 kubernetes.io/rule/nlb/client=" + name,
	}
	wantEq(t, "node rules", e.nodeRules(), want)

	// An unchanged re-sync with an HTTP health check writes nothing
	// (upstream compares the path with its own request and modifies the
	// target group on every sync).
	e.reset()
	e.ensure(svc, nodes)
	e.wantMutations("unchanged re-sync", map[string]int{})

	// A node leaves: one DeregisterTargets, nothing else changes.
	nodes = e.nodes(emuA, emuB)
	e.reset()
	e.update(svc, nodes)
	e.wantMutations("node removed", map[string]int{v2 + "DeregisterTargets": 1})
	wantEq(t, "targets", targetIDs(e.listenerGroups(name)[53]), []string{emuA, emuB})

	// Source ranges change: only the client and MTU rules change.
	svc = withAnn(svc, nil, func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"192.168.0.0/16"} })
	e.reset()
	e.ensure(svc, nodes)
	e.wantMutations("source ranges", map[string]int{"ec2:AuthorizeSecurityGroupIngress": 1, "ec2:RevokeSecurityGroupIngress": 1})
	wantEq(t, "node rules", e.nodeRules(), []string{
		"icmp 3-4 192.168.0.0/16 kubernetes.io/rule/nlb/mtu",
		"tcp 32100-32100 10.0.1.0/24 kubernetes.io/rule/nlb/health=" + name,
		"tcp 32100-32100 10.0.3.0/24 kubernetes.io/rule/nlb/health=" + name,
		"udp 30053-30053 192.168.0.0/16 kubernetes.io/rule/nlb/client=" + name,
	})

	e.delete(svc)
	e.wantNothingLeft()
}

// TestEmuNLBDiff: starting from the same NLB, each change of the Service
// makes exactly the calls it needs, and AWS ends up as asked.
func TestEmuNLBDiff(t *testing.T) {
	t.Parallel()
	const (
		auth   = "ec2:AuthorizeSecurityGroupIngress"
		revoke = "ec2:RevokeSecurityGroupIngress"
	)
	twoPorts := func(s *corev1.Service) {
		s.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}, {Name: "https", Port: 443, NodePort: 30443, Protocol: corev1.ProtocolTCP}}
	}
	// replaced is what replacing one listener's target group costs.
	replaced := map[string]int{v2 + "CreateTargetGroup": 1, v2 + "RegisterTargets": 1, v2 + "ModifyListener": 1, v2 + "DeleteTargetGroup": 1}
	tests := []struct {
		name    string
		base    map[string]string
		baseMod func(*corev1.Service)
		ann     map[string]string
		mod     func(*corev1.Service)
		nodes   []string
		update  bool
		want    map[string]int
		check   func(t *testing.T, e *emu, lb awsemu.NetworkLBState, groups map[int32]awsemu.TargetGroupState)
	}{
		{name: "nothing", want: map[string]int{}},
		{
			name: "cross-zone on", ann: map[string]string{annPrefix + "cross-zone-load-balancing-enabled": "true"},
			want: map[string]int{v2 + "ModifyLoadBalancerAttributes": 1},
			check: func(t *testing.T, _ *emu, lb awsemu.NetworkLBState, _ map[int32]awsemu.TargetGroupState) {
				wantEq(t, "cross-zone", lb.Attributes[attrCrossZone], "true")
			},
		},
		{
			name: "access logs on",
			ann:  map[string]string{annPrefix + "access-log-enabled": "true", annPrefix + "access-log-s3-bucket-name": "logs-bucket", annPrefix + "access-log-s3-bucket-prefix": "nlb"},
			want: map[string]int{v2 + "ModifyLoadBalancerAttributes": 1},
			check: func(t *testing.T, _ *emu, lb awsemu.NetworkLBState, _ map[int32]awsemu.TargetGroupState) {
				a := lb.Attributes
				if a[attrAccessLogs] != "true" || a[attrAccessLogsBkt] != "logs-bucket" || a[attrAccessLogsPfx] != "nlb" {
					t.Errorf("attributes = %v", a)
				}
			},
		},
		{
			name: "port added", mod: twoPorts,
			// A target group and listener, and the client rule of its port
			// (health checks are covered by 0.0.0.0/0 on the traffic port).
			want: map[string]int{v2 + "CreateTargetGroup": 1, v2 + "RegisterTargets": 1, v2 + "CreateListener": 1, auth: 1},
			check: func(t *testing.T, e *emu, lb awsemu.NetworkLBState, groups map[int32]awsemu.TargetGroupState) {
				wantEq(t, "target group of 443", groups[443].Port, 30443)
				wantEq(t, "targets of 443", targetIDs(groups[443]), []string{emuA, emuB})
				if !slices.Contains(e.nodeRules(), "tcp 30443-30443 0.0.0.0/0 kubernetes.io/rule/nlb/client="+lb.Name) {
					t.Errorf("node rules %v lack the client rule of 30443", e.nodeRules())
				}
			},
		},
		{
			name: "port removed", baseMod: twoPorts,
			mod:  func(s *corev1.Service) { s.Spec.Ports = s.Spec.Ports[1:] },
			want: map[string]int{v2 + "DeleteListener": 1, v2 + "DeleteTargetGroup": 1, revoke: 1},
			check: func(t *testing.T, e *emu, lb awsemu.NetworkLBState, groups map[int32]awsemu.TargetGroupState) {
				if len(groups) != 1 || len(e.srv.TargetGroups()) != 1 || groups[443].Port != 30443 {
					t.Errorf("target groups %+v, want the one of 443", groups)
				}
				wantEq(t, "node rules", e.nodeRules(), []string{"icmp 3-4 0.0.0.0/0 kubernetes.io/rule/nlb/mtu", "tcp 30443-30443 0.0.0.0/0 kubernetes.io/rule/nlb/client=" + lb.Name})
			},
		},
		{
			name: "node port changed", mod: func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30081 },
			want: merge(replaced, map[string]int{auth: 1, revoke: 1}),
			check: func(t *testing.T, e *emu, lb awsemu.NetworkLBState, groups map[int32]awsemu.TargetGroupState) {
				wantEq(t, "target group port", groups[80].Port, 30081)
				wantEq(t, "targets", targetIDs(groups[80]), []string{emuA, emuB})
				wantEq(t, "node rules", e.nodeRules(), []string{"icmp 3-4 0.0.0.0/0 kubernetes.io/rule/nlb/mtu", "tcp 30081-30081 0.0.0.0/0 kubernetes.io/rule/nlb/client=" + lb.Name})
			},
		},
		{
			name: "thresholds", ann: map[string]string{annPrefix + "healthcheck-healthy-threshold": "5", annPrefix + "healthcheck-unhealthy-threshold": "4"},
			want: map[string]int{v2 + "ModifyTargetGroup": 1},
			check: func(t *testing.T, _ *emu, _ awsemu.NetworkLBState, groups map[int32]awsemu.TargetGroupState) {
				wantEq(t, "thresholds", [2]int32{groups[80].HealthyThreshold, groups[80].UnhealthyThreshold}, [2]int32{5, 4})
			},
		},
		{
			name: "health check timeout", ann: map[string]string{annPrefix + "healthcheck-timeout": "9"},
			want: map[string]int{v2 + "ModifyTargetGroup": 1},
			check: func(t *testing.T, _ *emu, _ awsemu.NetworkLBState, groups map[int32]awsemu.TargetGroupState) {
				wantEq(t, "timeout", groups[80].HealthCheckTimeoutSeconds, 9)
			},
		},
		{
			name: "health check path", base: map[string]string{annPrefix + "healthcheck-protocol": "HTTP"},
			ann:  map[string]string{annPrefix + "healthcheck-path": "/ready"},
			want: map[string]int{v2 + "ModifyTargetGroup": 1},
			check: func(t *testing.T, _ *emu, _ awsemu.NetworkLBState, groups map[int32]awsemu.TargetGroupState) {
				wantEq(t, "path", groups[80].HealthCheckPath, "/ready")
			},
		},
		{
			name: "health check port", ann: map[string]string{annPrefix + "healthcheck-port": "10256"},
			// The health checks now need their own rules from the subnets.
			want: map[string]int{v2 + "ModifyTargetGroup": 1, auth: 1},
			check: func(t *testing.T, e *emu, lb awsemu.NetworkLBState, groups map[int32]awsemu.TargetGroupState) {
				wantEq(t, "health check port", groups[80].HealthCheckPort, "10256")
				for _, c := range []string{"10.0.1.0/24", "10.0.2.0/24", "10.0.3.0/24"} {
					if !slices.Contains(e.nodeRules(), "tcp 10256-10256 "+c+" kubernetes.io/rule/nlb/health="+lb.Name) {
						t.Errorf("node rules %v lack the health rule from %s", e.nodeRules(), c)
					}
				}
			},
		},
		{
			name: "health check protocol", ann: map[string]string{annPrefix + "healthcheck-protocol": "HTTP"},
			// The protocol names the target group: it is replaced.
			want: replaced,
			check: func(t *testing.T, _ *emu, _ awsemu.NetworkLBState, groups map[int32]awsemu.TargetGroupState) {
				wantEq(t, "health check", groups[80].HealthCheckProtocol+" "+groups[80].HealthCheckPath, "HTTP /")
				wantEq(t, "targets", targetIDs(groups[80]), []string{emuA, emuB})
			},
		},
		{
			name: "target group attributes", ann: map[string]string{annPrefix + "target-group-attributes": "proxy_protocol_v2.enabled=true"},
			want: map[string]int{v2 + "ModifyTargetGroupAttributes": 1},
			check: func(t *testing.T, _ *emu, _ awsemu.NetworkLBState, groups map[int32]awsemu.TargetGroupState) {
				wantEq(t, "proxy protocol v2", groups[80].Attributes[attrProxyV2], "true")
			},
		},
		{
			name: "certificate added", ann: map[string]string{annPrefix + "ssl-cert": emuCert},
			want: map[string]int{v2 + "ModifyListener": 1},
			check: func(t *testing.T, _ *emu, lb awsemu.NetworkLBState, _ map[int32]awsemu.TargetGroupState) {
				wantEq(t, "listener", lb.Listeners[0].Protocol+" "+strings.Join(lb.Listeners[0].CertificateARNs, ","), "TLS "+emuCert)
			},
		},
		{
			name: "certificate changed", base: map[string]string{annPrefix + "ssl-cert": emuCert},
			ann:  map[string]string{annPrefix + "ssl-cert": emuCert2},
			want: map[string]int{v2 + "ModifyListener": 1},
			check: func(t *testing.T, _ *emu, lb awsemu.NetworkLBState, _ map[int32]awsemu.TargetGroupState) {
				wantEq(t, "certificates", lb.Listeners[0].CertificateARNs, []string{emuCert2})
			},
		},
		{
			name: "SSL policy", base: map[string]string{annPrefix + "ssl-cert": emuCert},
			// (AWS's default is ELBSecurityPolicy-TLS13-1-2-2021-06.)
			ann:  map[string]string{annPrefix + "ssl-negotiation-policy": "ELBSecurityPolicy-TLS-1-2-2017-01"},
			want: map[string]int{v2 + "ModifyListener": 1},
			check: func(t *testing.T, _ *emu, lb awsemu.NetworkLBState, _ map[int32]awsemu.TargetGroupState) {
				wantEq(t, "SSL policy", lb.Listeners[0].SSLPolicy, "ELBSecurityPolicy-TLS-1-2-2017-01")
			},
		},
		{
			name: "TLS to the backends", base: map[string]string{annPrefix + "ssl-cert": emuCert},
			ann:  map[string]string{annPrefix + "backend-protocol": "ssl"},
			want: replaced,
			check: func(t *testing.T, _ *emu, _ awsemu.NetworkLBState, groups map[int32]awsemu.TargetGroupState) {
				wantEq(t, "target group protocol", groups[80].Protocol, "TLS")
			},
		},
		{
			name: "additional tags", ann: map[string]string{annPrefix + "additional-resource-tags": "team=shop"},
			want: map[string]int{v2 + "AddTags": 1},
			check: func(t *testing.T, _ *emu, lb awsemu.NetworkLBState, _ map[int32]awsemu.TargetGroupState) {
				wantEq(t, "team tag", lb.Tags["team"], "shop")
			},
		},
		{
			name: "source ranges",
			mod:  func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"10.2.0.0/16"} },
			// One revoke (0.0.0.0/0 client and MTU rules), one authorize
			// (the new ones, and health rules from the subnets, which the
			// client rules no longer cover).
			want: map[string]int{auth: 1, revoke: 1},
			check: func(t *testing.T, e *emu, lb awsemu.NetworkLBState, _ map[int32]awsemu.TargetGroupState) {
				wantEq(t, "node rules", e.nodeRules(), []string{
					"icmp 3-4 10.2.0.0/16 kubernetes.io/rule/nlb/mtu",
					"tcp 30080-30080 10.0.1.0/24 kubernetes.io/rule/nlb/health=" + lb.Name,
					"tcp 30080-30080 10.0.2.0/24 kubernetes.io/rule/nlb/health=" + lb.Name,
					"tcp 30080-30080 10.0.3.0/24 kubernetes.io/rule/nlb/health=" + lb.Name,
					"tcp 30080-30080 10.2.0.0/16 kubernetes.io/rule/nlb/client=" + lb.Name,
				})
			},
		},
		{
			name: "target removed", nodes: []string{emuA}, update: true,
			want: map[string]int{v2 + "DeregisterTargets": 1},
			check: func(t *testing.T, _ *emu, _ awsemu.NetworkLBState, groups map[int32]awsemu.TargetGroupState) {
				wantEq(t, "targets", targetIDs(groups[80]), []string{emuA})
			},
		},
		{
			name: "target added", nodes: []string{emuA, emuB, emuC},
			want: map[string]int{v2 + "RegisterTargets": 1},
			check: func(t *testing.T, _ *emu, _ awsemu.NetworkLBState, groups map[int32]awsemu.TargetGroupState) {
				wantEq(t, "targets", targetIDs(groups[80]), emuRunning)
			},
		},
		{
			name: "target selected by label", ann: map[string]string{annPrefix + "target-node-labels": "role=edge"},
			want: map[string]int{v2 + "DeregisterTargets": 1},
			check: func(t *testing.T, _ *emu, _ awsemu.NetworkLBState, groups map[int32]awsemu.TargetGroupState) {
				wantEq(t, "targets", targetIDs(groups[80]), []string{emuB})
			},
		},
		{
			name: "internal annotation added later", ann: map[string]string{annPrefix + "internal": "true"},
			want: map[string]int{},
			check: func(t *testing.T, e *emu, lb awsemu.NetworkLBState, _ map[int32]awsemu.TargetGroupState) {
				wantEq(t, "scheme", lb.Scheme, "internet-facing")
				e.wantEvent("Warning "+ReasonInvalidConfiguration, annPrefix+"internal", "recreate the Service")
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEmu(t, emuOptions{})
			svc := emuService("nlb-diff", merge(map[string]string{nlbType: "nlb"}, tc.base))
			if tc.baseMod != nil {
				tc.baseMod(svc)
			}
			e.ensure(svc, e.nodes(emuA, emuB))
			before := e.nlb(lbName(svc))

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
			after := e.nlb(lbName(svc))
			if tc.check != nil {
				tc.check(t, e, after, e.listenerGroups(after.Name))
			}
			if after.ARN != before.ARN {
				t.Errorf("the load balancer was replaced: %s, was %s", after.ARN, before.ARN)
			}

			e.reset()
			e.ensure(changed, nodes)
			e.wantMutations("second sync", map[string]int{})

			e.delete(changed)
			e.wantNothingLeft()
		})
	}
}

// TestEmuNLBAdoption: an NLB upstream built (named "a" + the Service UID,
// its target group named by upstream's hash, untagged) is adopted: nothing
// is recreated, it is tagged, and its targets and node rules are brought in
// line.
func TestEmuNLBAdoption(t *testing.T) {
	t.Parallel()
	svc := emuService("legacy-nlb", map[string]string{nlbType: "nlb"})
	name := lbName(svc)
	tgName := upstreamTargetGroupName("demo", "default", "legacy-nlb", 80, 30080)
	e := newEmu(t, emuOptions{policy: policyBroad, fixture: func(f *awsemu.Fixture) {
		f.LoadBalancers = append(f.LoadBalancers, awsemu.LoadBalancer{
			Name: name, Type: awsemu.LBTypeNetwork, Subnets: []string{emuSubnetA, emuSubnetB, emuSubnetC},
			Listeners: []awsemu.LBListener{{Protocol: "TCP", Port: 80, TargetGroup: tgName}},
			TargetGroups: []awsemu.TargetGroup{{Name: tgName, Protocol: "TCP", Port: 30080, HealthCheckProtocol: "TCP",
				HealthCheckIntervalSeconds: 30, HealthyThreshold: 3, UnhealthyThreshold: 3}},
		})
	}})
	old := e.nlb(name)
	nodes := e.nodes(emuA, emuB)

	e.reset()
	st := e.ensure(svc, nodes)
	e.wantMutations("adoption", map[string]int{v2 + "AddTags": 1, v2 + "RegisterTargets": 1, "ec2:AuthorizeSecurityGroupIngress": 1})
	lb := e.nlb(name)
	wantEq(t, "hostname", st.Ingress[0].Hostname, old.DNSName)
	wantEq(t, "ARN", lb.ARN, old.ARN)
	wantEq(t, "tags", lb.Tags, map[string]string{"kubernetes.io/cluster/demo": "owned", "kubernetes.io/service-name": "default/legacy-nlb"})
	groups := e.listenerGroups(name)
	wantEq(t, "target group", groups[80].Name, tgName)
	wantEq(t, "targets", targetIDs(groups[80]), []string{emuA, emuB})
	wantEq(t, "node rules", e.nodeRules(), []string{"icmp 3-4 0.0.0.0/0 kubernetes.io/rule/nlb/mtu", "tcp 30080-30080 0.0.0.0/0 kubernetes.io/rule/nlb/client=" + name})

	e.reset()
	e.ensure(svc, nodes)
	e.wantMutations("re-sync of the adopted NLB", map[string]int{})

	e.delete(svc)
	e.wantNothingLeft()
}

// TestEmuNLBForeign: an NLB or target group named like the Service's but
// tagged for another cluster or Service, or a load balancer of another
// type under its name, is refused and left as it is.
func TestEmuNLBForeign(t *testing.T) {
	t.Parallel()
	svc := emuService("nlb-foreign", map[string]string{nlbType: "nlb"})
	name := lbName(svc)
	tgName := upstreamTargetGroupName("demo", "default", "nlb-foreign", 80, 30080)
	owned := map[string]string{"kubernetes.io/cluster/demo": "owned", "kubernetes.io/service-name": "default/nlb-foreign"}
	tests := []struct {
		name    string
		lb      awsemu.LoadBalancer
		event   bool
		wantErr string
	}{
		{
			name:  "NLB of another cluster",
			lb:    awsemu.LoadBalancer{Tags: map[string]string{"kubernetes.io/cluster/other": "owned"}},
			event: true, wantErr: "tagged for cluster other",
		},
		{
			name: "target group of another Service",
			lb: awsemu.LoadBalancer{Tags: owned, TargetGroups: []awsemu.TargetGroup{{Name: tgName, Port: 30080,
				Tags: map[string]string{"kubernetes.io/cluster/demo": "owned", "kubernetes.io/service-name": "shop/other"}}}},
			wantErr: "target group " + tgName + " exists but it is tagged for Service shop/other",
		},
		{
			name:    "application load balancer",
			lb:      awsemu.LoadBalancer{Type: awsemu.LBTypeApplication, Tags: owned},
			wantErr: "is of type application",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEmu(t, emuOptions{fixture: func(f *awsemu.Fixture) {
				lb := tc.lb
				lb.Name, lb.Subnets = name, []string{emuSubnetA, emuSubnetB}
				if lb.Type == "" {
					lb.Type = awsemu.LBTypeNetwork
				}
				f.LoadBalancers = append(f.LoadBalancers, lb)
			}})
			before := e.srv.Inventory()
			e.reset()
			_, err := e.r.Ensure(e.ctx(), svc, e.nodes(emuA, emuB))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Ensure = %v, want an error containing %q", err, tc.wantErr)
			}
			if tc.event {
				e.wantEvent("Warning "+ReasonForeignResource, name, tc.wantErr)
			}
			e.wantMutations("refused", map[string]int{})
			wantEq(t, "inventory", e.srv.Inventory(), before)
			if tags := e.srv.NetworkLoadBalancers()[0].Tags; !maps.Equal(tags, tc.lb.Tags) {
				t.Errorf("tags changed to %v", tags)
			}
		})
	}
}

// merge returns the union of maps, later ones winning.
func merge[V any](ms ...map[string]V) map[string]V {
	out := map[string]V{}
	for _, m := range ms {
		maps.Copy(out, m)
	}
	return out
}
