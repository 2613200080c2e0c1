package integration

import (
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

const testCertARN = "arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-0000-4000-8000-00000000abcd"

// TestNLBLifecycle creates an NLB with a TLS and a TCP listener and a
// spread of annotations, checks it field by field, re-syncs it unchanged,
// adds a node, changes the health-check interval (which replaces the target
// groups, as upstream names them by it) and deletes it.
func TestNLBLifecycle(t *testing.T) {
	insts := lbNodes(t, 2)
	before := lbCalls()
	svc := lbService(t, "nlb-web", map[string]string{
		annPrefix + "type":                              "nlb",
		annPrefix + "ssl-cert":                          testCertARN,
		annPrefix + "ssl-ports":                         "https",
		annPrefix + "cross-zone-load-balancing-enabled": "true",
		annPrefix + "additional-resource-tags":          "team=web",
		annPrefix + "healthcheck-timeout":               "7",
		annPrefix + "target-group-attributes":           "preserve_client_ip.enabled=false",
	}, func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"10.1.0.0/16"} },
		corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP},
		corev1.ServicePort{Name: "https", Port: 443, TargetPort: intstr.FromInt32(8443), Protocol: corev1.ProtocolTCP})
	host, svc := waitHostname(t, svc.Name)
	create := settle(t, before)
	t.Logf("NLB create: %d calls: %s", total(create), formatCalls(create))

	name := lbName(svc)
	lb := networkLB(t, name)
	if host != lb.DNSName || lb.Scheme != "internet-facing" || !strings.Contains(host, ".elb.us-east-1.amazonaws.com") {
		t.Errorf("status hostname %q, scheme %q; AWS DNS name %q", host, lb.Scheme, lb.DNSName)
	}
	if !slices.Equal(sorted(lb.Subnets), subnets) {
		t.Errorf("subnets = %v, want %v", lb.Subnets, subnets)
	}
	if lb.Tags["kubernetes.io/cluster/"+clusterID] != "owned" || lb.Tags["kubernetes.io/service-name"] != "default/nlb-web" || lb.Tags["team"] != "web" {
		t.Errorf("tags = %v", lb.Tags)
	}
	if lb.Attributes["load_balancing.cross_zone.enabled"] != "true" {
		t.Errorf("cross-zone = %q", lb.Attributes["load_balancing.cross_zone.enabled"])
	}
	ports := map[int32]int32{80: svc.Spec.Ports[0].NodePort, 443: svc.Spec.Ports[1].NodePort}
	groups := targetGroupsByARN()
	if len(lb.Listeners) != 2 {
		t.Fatalf("listeners = %+v, want 2", lb.Listeners)
	}
	for _, l := range lb.Listeners {
		tg, ok := groups[l.TargetGroupARN]
		if !ok {
			t.Fatalf("listener %d forwards to unknown target group %s", l.Port, l.TargetGroupARN)
		}
		wantProto := map[int32]string{80: "TCP", 443: "TLS"}[l.Port]
		if l.Protocol != wantProto {
			t.Errorf("listener %d protocol %s, want %s", l.Port, l.Protocol, wantProto)
		}
		if l.Port == 443 && !slices.Equal(l.CertificateARNs, []string{testCertARN}) {
			t.Errorf("TLS listener certificates = %v", l.CertificateARNs)
		}
		if !strings.HasPrefix(tg.Name, "k8s-default-nlbweb-") || len(tg.Name) != len("k8s-default-nlbweb-")+10 {
			t.Errorf("target group name %q, want k8s-default-nlbweb-<10 hex>", tg.Name)
		}
		if tg.Protocol != "TCP" || tg.Port != ports[l.Port] || tg.TargetType != "instance" {
			t.Errorf("target group of %d: %s:%d %s, want TCP:%d instance", l.Port, tg.Protocol, tg.Port, tg.TargetType, ports[l.Port])
		}
		if tg.HealthCheckProtocol != "TCP" || tg.HealthCheckPort != "traffic-port" || tg.HealthCheckIntervalSeconds != 30 ||
			tg.HealthyThreshold != 3 || tg.UnhealthyThreshold != 3 || tg.HealthCheckTimeoutSeconds != 7 {
			t.Errorf("health check of %s: %s %s every %ds, %d/%d, timeout %ds", tg.Name, tg.HealthCheckProtocol, tg.HealthCheckPort,
				tg.HealthCheckIntervalSeconds, tg.HealthyThreshold, tg.UnhealthyThreshold, tg.HealthCheckTimeoutSeconds)
		}
		if tg.Attributes["preserve_client_ip.enabled"] != "false" {
			t.Errorf("preserve_client_ip of %s = %q", tg.Name, tg.Attributes["preserve_client_ip.enabled"])
		}
		if got, want := targetIDs(tg), sorted([]string{insts[0].ID, insts[1].ID}); !slices.Equal(got, want) {
			t.Errorf("targets of %s = %v, want %v", tg.Name, got, want)
		}
		if tg.Tags["kubernetes.io/service-name"] != "default/nlb-web" {
			t.Errorf("target group tags = %v", tg.Tags)
		}
	}
	var wantRules []string
	for _, np := range []int32{ports[80], ports[443]} {
		wantRules = append(wantRules, "tcp "+itoa(np)+"-"+itoa(np)+" 10.1.0.0/16 kubernetes.io/rule/nlb/client="+name)
		for _, c := range []string{"10.0.0.0/18", "10.0.128.0/18", "10.0.64.0/18"} {
			wantRules = append(wantRules, "tcp "+itoa(np)+"-"+itoa(np)+" "+c+" kubernetes.io/rule/nlb/health="+name)
		}
	}
	wantRules = append(wantRules, "icmp 3-4 10.1.0.0/16 kubernetes.io/rule/nlb/mtu")
	slices.Sort(wantRules)
	if got := describedRules(securityGroup(t, nodeGroupID).Ingress); !slices.Equal(got, wantRules) {
		t.Errorf("node group rules:\n got %v\nwant %v", got, wantRules)
	}

	// Unchanged re-sync: reads only.
	before = lbCalls()
	touch(t, svc.Name)
	resync := settle(t, before)
	t.Logf("NLB unchanged re-sync: %d calls: %s", total(resync), formatCalls(resync))
	if m := mutating(resync); len(m) != 0 {
		t.Errorf("unchanged re-sync made mutating calls: %s", formatCalls(m))
	}
	// 6 + 2 per port: LB, tags, listeners, target groups, attributes, node
	// groups; per port target health and (with the annotation) attributes.
	if total(resync) > 6+2*2 {
		t.Errorf("unchanged re-sync made %d calls, want at most 10: %s", total(resync), formatCalls(resync))
	}

	// A node joins: one RegisterTargets per target group, nothing else.
	before = lbCalls()
	added := lbNodes(t, 1)
	nodeAdded := settle(t, before)
	t.Logf("NLB node added: %d calls: %s", total(nodeAdded), formatCalls(nodeAdded))
	if m := mutating(nodeAdded); !mapsEqual(m, map[string]int{"elasticloadbalancingv2:RegisterTargets": 2}) {
		t.Errorf("node added: mutating calls %s, want 2 RegisterTargets", formatCalls(m))
	}
	for _, tg := range targetGroupsByARN() {
		if !slices.Contains(targetIDs(tg), added[0].ID) {
			t.Errorf("target group %s lacks the new instance %s", tg.Name, added[0].ID)
		}
	}

	// The health-check interval names the target groups: new ones replace
	// the old, which are deleted.
	old := slices.Sorted(maps.Keys(targetGroupsByARN()))
	updateService(t, svc.Name, func(s *corev1.Service) { s.Annotations[annPrefix+"healthcheck-interval"] = "10" })
	waitFor(t, 30e9, "target groups replaced", func(ctx contextT) (bool, error) {
		now := targetGroupsByARN()
		if len(now) != 2 {
			return false, nil
		}
		for arn, tg := range now {
			if slices.Contains(old, arn) || tg.HealthCheckIntervalSeconds != 10 || len(tg.Targets) != 3 {
				return false, nil
			}
		}
		return true, nil
	})

	deleteService(t, svc.Name)
	assertNoLoadBalancerLeft(t)
}

func networkLB(t *testing.T, name string) awsemu.NetworkLBState {
	t.Helper()
	for _, lb := range env.aws.NetworkLoadBalancers() {
		if lb.Name == name {
			return lb
		}
	}
	t.Fatalf("no network load balancer %s in AWS", name)
	return awsemu.NetworkLBState{}
}

func targetGroupsByARN() map[string]awsemu.TargetGroupState {
	out := map[string]awsemu.TargetGroupState{}
	for _, tg := range env.aws.TargetGroups() {
		out[tg.ARN] = tg
	}
	return out
}

func targetIDs(tg awsemu.TargetGroupState) []string {
	var out []string
	for _, x := range tg.Targets {
		out = append(out, x.ID)
	}
	return sorted(out)
}

// describedRules renders rules as "proto from-to source description".
func describedRules(perms []awsemu.Permission) []string { return renderRules(perms, true) }

// renderRules renders rules one source a line, sorted, with or without
// their descriptions.
func renderRules(perms []awsemu.Permission, withDesc bool) []string {
	var out []string
	for _, p := range perms {
		from, to := int32(0), int32(0)
		if p.FromPort != nil {
			from = *p.FromPort
		}
		if p.ToPort != nil {
			to = *p.ToPort
		}
		for _, src := range append(append(slices.Clone(p.CIDRs), p.IPv6CIDRs...), p.GroupIDs...) {
			line := p.Protocol + " " + itoa(from) + "-" + itoa(to) + " " + src
			if withDesc {
				line += " " + p.Descriptions[src]
			}
			out = append(out, line)
		}
	}
	slices.Sort(out)
	return out
}
