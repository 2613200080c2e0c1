package integration

import (
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

const annPrefix = "service.beta.kubernetes.io/aws-load-balancer-"

// TestClassicLoadBalancerLifecycle creates a Classic ELB with a spread of
// annotations, checks it field by field, re-syncs it unchanged, adds a
// node, changes and breaks an annotation, and deletes it, counting the AWS
// calls of every step at the emulator.
func TestClassicLoadBalancerLifecycle(t *testing.T) {
	insts := lbNodes(t, 2)
	before := lbCalls()
	svc := lbService(t, "clb-web", map[string]string{
		annPrefix + "proxy-protocol":                    "*",
		annPrefix + "connection-draining-enabled":       "true",
		annPrefix + "connection-draining-timeout":       "30",
		annPrefix + "connection-idle-timeout":           "120",
		annPrefix + "cross-zone-load-balancing-enabled": "true",
		annPrefix + "additional-resource-tags":          "team=web,cost-center=",
		annPrefix + "healthcheck-healthy-threshold":     "3",
	}, func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"10.1.0.0/16"} })
	host, svc := waitHostname(t, svc.Name)
	create := settle(t, before)
	t.Logf("Classic create: %d calls: %s", total(create), formatCalls(create))

	name := lbName(svc)
	lb := classicLB(t, name)
	nodePort := svc.Spec.Ports[0].NodePort
	if host != lb.DNSName || lb.Scheme != "internet-facing" {
		t.Errorf("status hostname %q, scheme %q; AWS DNS name %q", host, lb.Scheme, lb.DNSName)
	}
	if want := subnets; !slices.Equal(sorted(lb.Subnets), want) {
		t.Errorf("subnets = %v, want the public node subnets %v", lb.Subnets, want)
	}
	for k, v := range map[string]string{"kubernetes.io/cluster/" + clusterID: "owned", "kubernetes.io/service-name": "default/clb-web", "team": "web", "cost-center": ""} {
		if got, ok := lb.Tags[k]; !ok || got != v {
			t.Errorf("tag %s = %q (present %t), want %q", k, got, ok, v)
		}
	}
	if len(lb.Listeners) != 1 || lb.Listeners[0].Protocol != "TCP" || lb.Listeners[0].Port != 80 || lb.Listeners[0].InstancePort != nodePort {
		t.Errorf("listeners = %+v, want TCP:80 -> TCP:%d", lb.Listeners, nodePort)
	}
	if want := []string{insts[0].ID, insts[1].ID}; !slices.Equal(sorted(lb.Instances), sorted(want)) {
		t.Errorf("instances = %v, want %v", lb.Instances, want)
	}
	hc := lb.HealthCheck
	if hc.Target != "TCP:"+itoa(nodePort) || hc.HealthyThreshold != 3 || hc.UnhealthyThreshold != 6 || hc.Interval != 10 || hc.Timeout != 5 {
		t.Errorf("health check = %+v", hc)
	}
	a := lb.Attributes
	if !a.CrossZoneLoadBalancing || !a.ConnectionDraining || a.ConnectionDrainingTimeout != 30 || a.IdleTimeout != 120 || a.AccessLogEnabled {
		t.Errorf("attributes = %+v", a)
	}
	if got := lb.BackendPolicies[nodePort]; !slices.Equal(got, []string{"k8s-proxyprotocol-enabled"}) {
		t.Errorf("backend policies of %d = %v", nodePort, got)
	}
	if len(lb.SecurityGroups) != 1 {
		t.Fatalf("security groups = %v, want the managed one", lb.SecurityGroups)
	}
	sg := securityGroup(t, lb.SecurityGroups[0])
	if sg.Name != "k8s-elb-"+name || sg.Tags["kubernetes.io/cluster/"+clusterID] != "owned" {
		t.Errorf("load balancer group %s named %q tagged %v", sg.ID, sg.Name, sg.Tags)
	}
	if got := ingressSummary(sg.Ingress); !slices.Equal(got, []string{"icmp 3-4 10.1.0.0/16", "tcp 80-80 10.1.0.0/16"}) {
		t.Errorf("load balancer group ingress = %v", got)
	}
	if got := ingressSummary(securityGroup(t, nodeGroupID).Ingress); !slices.Equal(got, []string{"-1 0-0 " + sg.ID}) {
		t.Errorf("node group ingress = %v, want all traffic from %s", got, sg.ID)
	}

	// An unchanged re-sync changes nothing and reads little.
	before = lbCalls()
	touch(t, svc.Name)
	resync := settle(t, before)
	t.Logf("Classic unchanged re-sync: %d calls: %s", total(resync), formatCalls(resync))
	if m := mutating(resync); len(m) != 0 {
		t.Errorf("unchanged re-sync made mutating calls: %s", formatCalls(m))
	}
	if total(resync) > 4 {
		t.Errorf("unchanged re-sync made %d calls (%s), want at most 4", total(resync), formatCalls(resync))
	}

	// A new node is registered; nothing else changes.
	before = lbCalls()
	added := lbNodes(t, 1)
	nodeAdded := settle(t, before)
	t.Logf("Classic node added: %d calls: %s", total(nodeAdded), formatCalls(nodeAdded))
	if m := mutating(nodeAdded); !mapsEqual(m, map[string]int{"elasticloadbalancing:RegisterInstancesWithLoadBalancer": 1}) {
		t.Errorf("node added: mutating calls %s, want one RegisterInstancesWithLoadBalancer", formatCalls(m))
	}
	if got := classicLB(t, name).Instances; !slices.Contains(got, added[0].ID) {
		t.Errorf("instances = %v, want %s among them", got, added[0].ID)
	}

	// One annotation changes: one attribute write.
	before = lbCalls()
	updateService(t, svc.Name, func(s *corev1.Service) { s.Annotations[annPrefix+"connection-idle-timeout"] = "300" })
	changed := settle(t, before)
	if m := mutating(changed); !mapsEqual(m, map[string]int{"elasticloadbalancing:ModifyLoadBalancerAttributes": 1}) {
		t.Errorf("idle timeout change: mutating calls %s, want one ModifyLoadBalancerAttributes", formatCalls(m))
	}
	if got := classicLB(t, name).Attributes.IdleTimeout; got != 300 {
		t.Errorf("idle timeout = %d, want 300", got)
	}

	// An invalid annotation: a Warning naming it, and what it governs stays.
	before = lbCalls()
	updateService(t, svc.Name, func(s *corev1.Service) { s.Annotations[annPrefix+"cross-zone-load-balancing-enabled"] = "maybe" })
	waitWarning(t, svc.Name, "InvalidLoadBalancerConfiguration", annPrefix+"cross-zone-load-balancing-enabled", `"maybe"`)
	invalid := settle(t, before)
	if m := mutating(invalid); len(m) != 0 {
		t.Errorf("invalid annotation: mutating calls %s, want none", formatCalls(m))
	}
	if !classicLB(t, name).Attributes.CrossZoneLoadBalancing {
		t.Errorf("cross-zone was turned off because of an invalid annotation")
	}

	deleteService(t, svc.Name)
	assertNoLoadBalancerLeft(t)
}

// ingressSummary renders rules as "proto from-to source", sorted.
func ingressSummary(perms []awsemu.Permission) []string { return renderRules(perms, false) }

func sorted(s []string) []string { out := slices.Clone(s); slices.Sort(out); return out }

func itoa(n int32) string { return strconv.Itoa(int(n)) }

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
