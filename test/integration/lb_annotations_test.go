package integration

import (
	"context"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestClassicTLSAndInternal: an internal Classic ELB with an HTTPS listener
// on 443 (HTTP backend), an SSL negotiation policy, ETP=Local health
// checks, bring-your-own plus extra security groups and target node
// labels, checked field by field.
func TestClassicTLSAndInternal(t *testing.T) {
	insts := lbNodes(t, 2)
	labelNode(t, "lb-"+insts[0].ID, "role", "edge")
	const byo, extra = "sg-0feed000000000b01", "sg-0feed000000000b02"
	addGroups(t, byo, extra)
	svc := lbService(t, "clb-tls", map[string]string{
		annPrefix + "internal":               "true",
		annPrefix + "ssl-cert":               testCertARN,
		annPrefix + "ssl-ports":              "443",
		annPrefix + "backend-protocol":       "http",
		annPrefix + "ssl-negotiation-policy": "ELBSecurityPolicy-TLS-1-2-2017-01",
		annPrefix + "security-groups":        byo,
		annPrefix + "extra-security-groups":  extra,
		annPrefix + "target-node-labels":     "role=edge",
	}, func(s *corev1.Service) { s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal },
		corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)},
		corev1.ServicePort{Name: "https", Port: 443, TargetPort: intstr.FromInt32(8080)})
	host, svc := waitHostname(t, svc.Name)
	lb := classicLB(t, lbName(svc))

	if lb.Scheme != "internal" || host != lb.DNSName || host[:9] != "internal-" {
		t.Errorf("scheme %q, hostname %q (AWS %q), want an internal- name", lb.Scheme, host, lb.DNSName)
	}
	// Internal load balancers prefer the subnets with the internal-elb role.
	if want := []string{"subnet-0itest00000000003", "subnet-0itest00000000011", "subnet-0itest00000000012"}; !slices.Equal(sorted(lb.Subnets), want) {
		t.Errorf("subnets = %v, want %v", sorted(lb.Subnets), want)
	}
	if !slices.Equal(lb.SecurityGroups, []string{byo, extra}) {
		t.Errorf("security groups = %v, want [%s %s]", lb.SecurityGroups, byo, extra)
	}
	if left := env.aws.SecurityGroupsNamed("k8s-elb-" + lbName(svc)); len(left) != 0 {
		t.Errorf("a managed group was created although the Service brings its own: %v", left)
	}
	np80, np443 := svc.Spec.Ports[0].NodePort, svc.Spec.Ports[1].NodePort
	var got []string
	for _, l := range lb.Listeners {
		got = append(got, l.Protocol+":"+itoa(l.Port)+">"+l.InstanceProtocol+":"+itoa(l.InstancePort)+" "+l.SSLCertificateID+" "+joinStr(l.PolicyNames))
	}
	want := []string{
		"HTTP:80>HTTP:" + itoa(np80) + "  ",
		"HTTPS:443>HTTP:" + itoa(np443) + " " + testCertARN + " k8s-SSLNegotiationPolicy-ELBSecurityPolicy-TLS-1-2-2017-01",
	}
	if slices.Sort(got); !slices.Equal(got, want) {
		t.Errorf("listeners:\n got %q\nwant %q", got, want)
	}
	if p, ok := lb.Policies["k8s-SSLNegotiationPolicy-ELBSecurityPolicy-TLS-1-2-2017-01"]; !ok || p.Type != "SSLNegotiationPolicyType" {
		t.Errorf("policies = %+v", lb.Policies)
	}
	if hc := lb.HealthCheck; hc.Target != "HTTP:"+itoa(svc.Spec.HealthCheckNodePort)+"/healthz" {
		t.Errorf("health check target %q, want HTTP on the health-check node port %d", hc.Target, svc.Spec.HealthCheckNodePort)
	}
	if !slices.Equal(lb.Instances, []string{insts[0].ID}) {
		t.Errorf("instances = %v, want only the role=edge node's %s", lb.Instances, insts[0].ID)
	}
	// The node rule points at the Service's own group; the group itself is
	// never changed.
	if got := ingressSummary(securityGroup(t, nodeGroupID).Ingress); !slices.Equal(got, []string{"-1 0-0 " + byo}) {
		t.Errorf("node group rules = %v", got)
	}
	if g := securityGroup(t, byo); len(g.Ingress) != 0 {
		t.Errorf("the Service's own group was changed: %+v", g.Ingress)
	}

	// A second node gets the label: it becomes a target.
	before := lbCalls()
	labelNode(t, "lb-"+insts[1].ID, "role", "edge")
	touch(t, svc.Name) // labels alone do not wake the service controller
	settle(t, before)
	if got := classicLB(t, lbName(svc)).Instances; !slices.Equal(sorted(got), sorted([]string{insts[0].ID, insts[1].ID})) {
		t.Errorf("instances after labelling = %v", got)
	}

	deleteService(t, svc.Name)
	// The Service's own groups stay, unchanged; the rule pointing at one of
	// them stays too (it may serve other load balancers).
	for _, id := range []string{byo, extra} {
		securityGroup(t, id)
	}
	inv := env.aws.Inventory()
	if inv.ClassicLBs != 0 {
		t.Errorf("Classic load balancers left: %d", inv.ClassicLBs)
	}
	removeGroupRules(t, nodeGroupID)
	assertNoLoadBalancerLeft(t)
}

// TestInternalNLBWithAddresses: an internal UDP NLB in the subnets named
// by the annotation (Name tags), with fixed private addresses, ETP=Local
// health checks on HTTP, and a node removed from its targets.
func TestInternalNLBWithAddresses(t *testing.T) {
	insts := lbNodes(t, 2)
	svc := lbService(t, "nlb-dns", map[string]string{
		annPrefix + "type":                    "nlb",
		annPrefix + "internal":                "true",
		annPrefix + "subnets":                 "itest-private-a, itest-private-b",
		annPrefix + "private-ipv4-addresses":  "10.0.192.10,10.0.208.10",
		annPrefix + "healthcheck-interval":    "10",
		annPrefix + "target-group-attributes": "proxy_protocol_v2.enabled=true",
	}, func(s *corev1.Service) { s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal },
		corev1.ServicePort{Name: "dns", Port: 53, TargetPort: intstr.FromInt32(5353), Protocol: corev1.ProtocolUDP})
	_, svc = waitHostname(t, svc.Name)
	lb := networkLB(t, lbName(svc))
	if lb.Scheme != "internal" {
		t.Errorf("scheme = %q", lb.Scheme)
	}
	var mappings []string
	for _, m := range lb.SubnetMappings {
		mappings = append(mappings, m.SubnetID+"="+m.PrivateIPv4Address)
	}
	if want := []string{"subnet-0itest00000000011=10.0.192.10", "subnet-0itest00000000012=10.0.208.10"}; !slices.Equal(sorted(mappings), want) {
		t.Errorf("subnet mappings = %v, want %v", mappings, want)
	}
	if len(lb.Listeners) != 1 || lb.Listeners[0].Protocol != "UDP" || lb.Listeners[0].Port != 53 {
		t.Fatalf("listeners = %+v", lb.Listeners)
	}
	tg := targetGroupsByARN()[lb.Listeners[0].TargetGroupARN]
	hcPort := itoa(svc.Spec.HealthCheckNodePort)
	if tg.Protocol != "UDP" || tg.Port != svc.Spec.Ports[0].NodePort || tg.HealthCheckProtocol != "HTTP" || tg.HealthCheckPort != hcPort ||
		tg.HealthCheckPath != "/healthz" || tg.HealthCheckIntervalSeconds != 10 || tg.HealthyThreshold != 2 || tg.UnhealthyThreshold != 2 {
		t.Errorf("target group %+v", tg)
	}
	if tg.Attributes["proxy_protocol_v2.enabled"] != "true" {
		t.Errorf("proxy_protocol_v2.enabled = %q", tg.Attributes["proxy_protocol_v2.enabled"])
	}
	// UDP clients from anywhere; health checks from the two subnets on the
	// health-check node port.
	np := itoa(svc.Spec.Ports[0].NodePort)
	want := []string{
		"icmp 3-4 0.0.0.0/0 kubernetes.io/rule/nlb/mtu",
		"tcp " + hcPort + "-" + hcPort + " 10.0.192.0/20 kubernetes.io/rule/nlb/health=" + lbName(svc),
		"tcp " + hcPort + "-" + hcPort + " 10.0.208.0/20 kubernetes.io/rule/nlb/health=" + lbName(svc),
		"udp " + np + "-" + np + " 0.0.0.0/0 kubernetes.io/rule/nlb/client=" + lbName(svc),
	}
	if got := describedRules(securityGroup(t, nodeGroupID).Ingress); !slices.Equal(got, want) {
		t.Errorf("node group rules:\n got %v\nwant %v", got, want)
	}

	// An unchanged re-sync with an HTTP health check writes nothing
	// (upstream compares the path with its own request and modifies the
	// target group on every sync).
	before := lbCalls()
	touch(t, svc.Name)
	if m := mutating(settle(t, before)); len(m) != 0 {
		t.Errorf("unchanged re-sync with an HTTP health check made mutating calls: %s", formatCalls(m))
	}

	// A node leaves: one DeregisterTargets, nothing else changes.
	before = lbCalls()
	if err := env.kube.CoreV1().Nodes().Delete(context.Background(), "lb-"+insts[1].ID, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	removed := settle(t, before)
	t.Logf("NLB node removed: %d calls: %s", total(removed), formatCalls(removed))
	if m := mutating(removed); !mapsEqual(m, map[string]int{"elasticloadbalancingv2:DeregisterTargets": 1}) {
		t.Errorf("node removed: mutating calls %s, want one DeregisterTargets", formatCalls(m))
	}
	if got := targetIDs(targetGroupsByARN()[tg.ARN]); !slices.Equal(got, []string{insts[0].ID}) {
		t.Errorf("targets after the node left = %v, want [%s]", got, insts[0].ID)
	}

	// Source ranges change: only the client and MTU rules change.
	before = lbCalls()
	updateService(t, svc.Name, func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"192.168.0.0/16"} })
	changed := settle(t, before)
	if m := mutating(changed); !mapsEqual(m, map[string]int{"ec2:AuthorizeSecurityGroupIngress": 1, "ec2:RevokeSecurityGroupIngress": 1}) {
		t.Errorf("source ranges change: mutating calls %s, want one revoke and one authorize", formatCalls(m))
	}
	got := describedRules(securityGroup(t, nodeGroupID).Ingress)
	if !slices.Contains(got, "udp "+np+"-"+np+" 192.168.0.0/16 kubernetes.io/rule/nlb/client="+lbName(svc)) ||
		!slices.Contains(got, "icmp 3-4 192.168.0.0/16 kubernetes.io/rule/nlb/mtu") || slices.Contains(got, want[0]) {
		t.Errorf("node group rules after the change: %v", got)
	}

	deleteService(t, svc.Name)
	assertNoLoadBalancerLeft(t)
}

func labelNode(t *testing.T, name, k, v string) {
	t.Helper()
	n, err := getNode(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	n.Labels[k] = v
	if _, err := env.kube.CoreV1().Nodes().Update(context.Background(), n, updateOpts); err != nil {
		t.Fatal(err)
	}
}

// addGroups adds security groups of the cluster's VPC to AWS, as a user
// bringing their own would.
func addGroups(t *testing.T, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := env.aws.AddSecurityGroup(id, "byo-"+id, vpcID); err != nil {
			t.Fatal(err)
		}
	}
}

// removeGroupRules clears the rules a test left on purpose.
func removeGroupRules(t *testing.T, id string) {
	t.Helper()
	if err := env.aws.ClearIngress(id); err != nil {
		t.Fatal(err)
	}
}

func joinStr(s []string) string { return strings.Join(s, ",") }

// TestStoppedInstanceIsNotRegistered: AWS refuses to register an instance
// that is not running (kubernetes#74694: upstream's sync then fails for
// every Service while any node is stopped). The stopped node is left out
// and the sync succeeds; once running, it is registered at the next sync.
func TestStoppedInstanceIsNotRegistered(t *testing.T) {
	insts := lbNodes(t, 2)
	if err := env.aws.SetInstanceState(insts[1].ID, "stopped"); err != nil {
		t.Fatal(err)
	}
	clb := lbService(t, "clb-stopped", nil, nil)
	nlb := lbService(t, "nlb-stopped", map[string]string{annPrefix + "type": "nlb"}, nil)
	_, clb = waitHostname(t, clb.Name)
	_, nlb = waitHostname(t, nlb.Name)
	if got := classicLB(t, lbName(clb)).Instances; !slices.Equal(got, []string{insts[0].ID}) {
		t.Errorf("Classic instances = %v, want only the running %s", got, insts[0].ID)
	}
	for _, tg := range env.aws.TargetGroups() {
		if got := targetIDs(tg); !slices.Equal(got, []string{insts[0].ID}) {
			t.Errorf("targets of %s = %v, want only the running %s", tg.Name, got, insts[0].ID)
		}
	}
	for _, name := range []string{clb.Name, nlb.Name} {
		evs, err := serviceEvents(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Reason == "SyncLoadBalancerFailed" {
				t.Errorf("%s: %s", name, e.Message)
			}
		}
	}

	if err := env.aws.SetInstanceState(insts[1].ID, "running"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(cacheMaxAge) // the instance view sees the new state
	touch(t, clb.Name)
	touch(t, nlb.Name)
	want := sorted([]string{insts[0].ID, insts[1].ID})
	waitFor(t, 30*time.Second, "the started instance registered", func(ctx context.Context) (bool, error) {
		if !slices.Equal(sorted(classicLB(t, lbName(clb)).Instances), want) {
			return false, nil
		}
		for _, tg := range env.aws.TargetGroups() {
			if !slices.Equal(targetIDs(tg), want) {
				return false, nil
			}
		}
		return true, nil
	})
}
