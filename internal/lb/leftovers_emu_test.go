package lb

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// Leftovers of failed deletes against the emulator: a target group
// replaced after a health-check or node-port change whose delete failed is
// no longer reachable from the load balancer; it is found again by its
// tags and deleted, by a later sync or at the Service's deletion.

// tgInUse fails DeleteTargetGroup as AWS does while a listener or load
// balancer still lets go of the group.
var tgInUse = awsemu.Fault{Service: "elasticloadbalancingv2", Action: "DeleteTargetGroup", Code: "ResourceInUse"}

// replacements change a listener's target group.
var replacements = []struct {
	name     string
	nodePort int32
	change   func(*corev1.Service) *corev1.Service
}{
	{"health-check interval", 30080, func(s *corev1.Service) *corev1.Service {
		return withAnn(s, map[string]string{annPrefix + "healthcheck-interval": "10"})
	}},
	{"node port", 30081, func(s *corev1.Service) *corev1.Service {
		return withAnn(s, nil, func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30081 })
	}},
}

func tgARNs(e *emu) []string {
	var out []string
	for _, tg := range e.srv.TargetGroups() {
		out = append(out, tg.ARN)
	}
	return sortedIDs(out)
}

// TestEmuNLBReplacedTargetGroupInUse: the old target group's delete fails
// with ResourceInUse after the listener moved to the new one. The sync
// reports the error, the next syncs search for the group by tag and delete
// it once AWS lets go, and from then on syncs do no listing again.
func TestEmuNLBReplacedTargetGroupInUse(t *testing.T) {
	t.Parallel()
	for _, tc := range replacements {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEmu(t, emuOptions{})
			svc := emuService("tg-in-use", map[string]string{nlbType: "nlb"})
			nodes := e.nodes(emuA, emuB)
			e.ensure(svc, nodes)
			old := e.listenerGroups(lbName(svc))[80].ARN

			svc = tc.change(svc)
			id := e.srv.InjectFault(tgInUse)
			for i := 1; i <= 2; i++ {
				if _, err := e.r.Ensure(e.ctx(), svc, nodes); err == nil || !strings.Contains(err.Error(), "ResourceInUse") {
					t.Fatalf("Ensure %d = %v, want ResourceInUse", i, err)
				}
			}
			cur := e.listenerGroups(lbName(svc))[80].ARN
			if cur == old {
				t.Fatal("the listener still forwards to the old target group")
			}
			wantEq(t, "target groups while the old one is in use", tgARNs(e), sortedIDs([]string{old, cur}))
			// The rest of the sync went on: the node port is open.
			want := fmt.Sprintf("tcp %d-%d 0.0.0.0/0 %s=%s", tc.nodePort, tc.nodePort, nlbClientRuleDesc, lbName(svc))
			if rules := e.nodeRules(); !slices.Contains(rules, want) {
				t.Errorf("node rules %q, want %q", rules, want)
			}
			// The second sync found the detached group by its tags.
			wantEq(t, "DeleteTargetGroup calls", e.srv.Calls("elasticloadbalancingv2", "DeleteTargetGroup"), 2)

			e.srv.ClearFault(id)
			e.reset()
			e.ensure(svc, nodes)
			// (The node rules moved with the node port in the failed syncs.)
			e.wantMutations("sync once AWS lets go", map[string]int{v2 + "DeleteTargetGroup": 1})
			wantEq(t, "target groups after the sweep", tgARNs(e), []string{cur})

			// Steady state: one DescribeTargetGroups (the load balancer's)
			// and one DescribeTags (the load balancer's) a sync, no listing.
			for i := 0; i < 2; i++ {
				e.reset()
				e.ensure(svc, nodes)
				e.update(svc, nodes)
				e.wantMutations("steady sync", map[string]int{})
				wantEq(t, "DescribeTargetGroups calls of Ensure and Update", e.srv.Calls("elasticloadbalancingv2", "DescribeTargetGroups"), 2)
				wantEq(t, "DescribeTags calls of Ensure and Update", e.srv.Calls("elasticloadbalancingv2", "DescribeTags"), 1)
			}
			e.delete(svc)
			e.wantNothingLeft()
		})
	}
}

// TestEmuNLBLeftoverTargetGroupAtDeletion: the replaced target group is
// still in use when the Service is deleted, by this process or by one
// that restarted in between (and so forgot the failed delete). Delete
// fails while any of the Service's groups is left, Get keeps reporting
// them once the load balancer is gone, and the last Delete leaves nothing.
func TestEmuNLBLeftoverTargetGroupAtDeletion(t *testing.T) {
	t.Parallel()
	for _, tc := range replacements {
		for _, restart := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/restart=%t", tc.name, restart), func(t *testing.T) {
				t.Parallel()
				e := newEmu(t, emuOptions{})
				svc := emuService("tg-leftover", map[string]string{nlbType: "nlb"})
				nodes := e.nodes(emuA, emuB)
				e.ensure(svc, nodes)
				svc = tc.change(svc)
				id := e.srv.InjectFault(tgInUse)
				if _, err := e.r.Ensure(e.ctx(), svc, nodes); err == nil {
					t.Fatal("Ensure succeeded while the old target group is in use")
				}
				if restart {
					e.r, e.rec, e.viewClock = newEmuReconciler(t, e.srv, Options{})
				}
				e.wantDeleteRetried(svc, id, "ResourceInUse", func(i int) {
					if n := len(e.srv.TargetGroups()); n != 2 {
						t.Fatalf("Delete %d: %d target groups, want both still there", i, n)
					}
				})
			})
		}
	}
}

// TestEmuLeftoverTargetGroupsByTag: at deletion the Service's target
// groups are found by tag, whatever their names, and the tags of the
// region's unattached groups are read 20 a call; another Service's groups
// and groups another load balancer uses are left alone.
func TestEmuLeftoverTargetGroupsByTag(t *testing.T) {
	t.Parallel()
	e := newEmu(t, emuOptions{fixture: func(f *awsemu.Fixture) {
		f.LoadBalancers = append(f.LoadBalancers, awsemu.LoadBalancer{Name: "someone-elses", Type: awsemu.LBTypeNetwork, Subnets: []string{emuSubnetA},
			Listeners: []awsemu.LBListener{{Protocol: "TCP", Port: 80, TargetGroup: "attached-but-tagged-for-us"}},
			TargetGroups: []awsemu.TargetGroup{{Name: "attached-but-tagged-for-us", Port: 30999, Tags: map[string]string{
				"kubernetes.io/cluster/demo": "owned", "kubernetes.io/service-name": "default/tg-by-tag"}}}})
	}})
	svc := emuService("tg-by-tag", map[string]string{nlbType: "nlb"})
	ours := map[string]string{"kubernetes.io/cluster/demo": "owned", "kubernetes.io/service-name": "default/tg-by-tag"}
	mk := func(name string, tags map[string]string) string {
		t.Helper()
		var tl []elbv2types.Tag
		for k, v := range tags {
			tl = append(tl, elbv2types.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
		out, err := e.adminELBv2().CreateTargetGroup(e.ctx(), &elbv2.CreateTargetGroupInput{Name: aws.String(name), Port: aws.Int32(30100),
			Protocol: elbv2types.ProtocolEnumTcp, VpcId: aws.String(emuVPC), TargetType: elbv2types.TargetTypeEnumInstance, Tags: tl})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.TargetGroups[0].TargetGroupArn)
	}
	// Names no spec of the Service would give: only the tags tell.
	mk("renamed-long-ago", ours)
	mk("another-cluster", map[string]string{"kubernetes.io/cluster/other": "owned", "kubernetes.io/service-name": "default/tg-by-tag"})
	var kept []string
	for i := 0; i < 25; i++ {
		kept = append(kept, mk(fmt.Sprintf("other-service-%d", i), map[string]string{"kubernetes.io/cluster/demo": "owned", "kubernetes.io/service-name": "default/other"}))
	}
	kept = append(kept, mk("untagged", nil))
	for _, tg := range e.srv.TargetGroups() {
		if tg.Name == "another-cluster" || tg.Name == "attached-but-tagged-for-us" {
			kept = append(kept, tg.ARN)
		}
	}
	e.ensure(svc, e.nodes(emuA))

	e.reset()
	e.delete(svc)
	wantEq(t, "target groups left", tgARNs(e), sortedIDs(kept))
	e.wantMutations("Delete", map[string]int{
		v2 + "DeleteLoadBalancer": 1, v2 + "DeleteTargetGroup": 2, "ec2:RevokeSecurityGroupIngress": 1})
	// The load balancer's tags (its ownership) are read with those of the
	// 27 unattached candidates and its own group: 29 ARNs, two calls (the
	// emulator, like AWS, refuses more than 20 a call).
	wantEq(t, "DescribeTags calls", e.srv.Calls("elasticloadbalancingv2", "DescribeTags"), 2)
	if e.exists(svc) {
		t.Error("Get reports the load balancer after Delete")
	}
}
