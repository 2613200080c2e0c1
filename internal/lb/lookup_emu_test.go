package lb

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// describes counts the load-balancer describes since the last reset:
// Classic, NLB, target groups and ELBv2 tags.
func (e *emu) describes() map[string]int {
	return map[string]int{
		"elb:DescribeLoadBalancers":   e.srv.Calls("elasticloadbalancing", "DescribeLoadBalancers"),
		"elb:DescribeTags":            e.srv.Calls("elasticloadbalancing", "DescribeTags"),
		"elbv2:DescribeLoadBalancers": e.srv.Calls("elasticloadbalancingv2", "DescribeLoadBalancers"),
		"elbv2:DescribeTargetGroups":  e.srv.Calls("elasticloadbalancingv2", "DescribeTargetGroups"),
		"elbv2:DescribeTags":          e.srv.Calls("elasticloadbalancingv2", "DescribeTags"),
	}
}

// getThenDelete runs what the service controller runs to delete a
// Service's load balancer: Get, and Delete when it reports one.
func (e *emu) getThenDelete(svc *corev1.Service) {
	e.t.Helper()
	if !e.exists(svc) {
		e.t.Fatalf("Get(%s) reports no load balancer", svc.Name)
	}
	e.delete(svc)
}

// TestEmuDeleteReusesTheGetBeforeIt: the delete of a Classic load
// balancer describes it once (Get's; Delete reads its tags for ownership
// and checks for an NLB), and the delete of an NLB describes either type
// once, lists the target groups once and reads all tags in one call.
func TestEmuDeleteReusesTheGetBeforeIt(t *testing.T) {
	t.Parallel()
	e := newEmu(t, emuOptions{})
	nodes := e.nodes(emuA, emuB)
	classic := emuService("web", nil)
	nlb := emuService("nlb-web", map[string]string{nlbType: "nlb"},
		corev1.ServicePort{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP},
		corev1.ServicePort{Name: "https", Port: 443, NodePort: 30443, Protocol: corev1.ProtocolTCP})
	e.ensure(classic, nodes)
	e.ensure(nlb, nodes)

	e.reset()
	e.getThenDelete(classic)
	wantEq(t, "describes deleting a Classic load balancer", e.describes(), map[string]int{
		"elb:DescribeLoadBalancers": 1, "elb:DescribeTags": 1, "elbv2:DescribeLoadBalancers": 1,
		"elbv2:DescribeTargetGroups": 0, "elbv2:DescribeTags": 0,
	})
	e.reset()
	e.getThenDelete(nlb)
	wantEq(t, "describes deleting an NLB", e.describes(), map[string]int{
		"elb:DescribeLoadBalancers": 1, "elb:DescribeTags": 0, "elbv2:DescribeLoadBalancers": 1,
		"elbv2:DescribeTargetGroups": 1, "elbv2:DescribeTags": 1,
	})
	e.wantNothingLeft()
}

// TestEmuDeleteDescribesWhenTheGetIsNotJustBefore: a Delete on its own, one
// after Get's result has aged past lookupMaxAge, and one after an Ensure
// or Update since the Get describe afresh, and delete everything.
func TestEmuDeleteDescribesWhenTheGetIsNotJustBefore(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		between func(e *emu, svc *corev1.Service, clk *clocktesting.FakeClock)
		get     bool
	}{
		{name: "no Get", get: false, between: func(*emu, *corev1.Service, *clocktesting.FakeClock) {}},
		{name: "Get too old", get: true, between: func(_ *emu, _ *corev1.Service, clk *clocktesting.FakeClock) {
			clk.Step(lookupMaxAge + time.Second)
		}},
		{name: "Ensure since", get: true, between: func(e *emu, svc *corev1.Service, _ *clocktesting.FakeClock) {
			e.ensure(svc, e.nodes(emuA, emuB))
		}},
		{name: "Update since", get: true, between: func(e *emu, svc *corev1.Service, _ *clocktesting.FakeClock) {
			if err := e.r.Update(e.ctx(), svc, e.nodes(emuA)); err != nil {
				e.t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEmu(t, emuOptions{})
			clk := clocktesting.NewFakeClock(time.Now())
			e.r.Clock = clk
			svc := emuService("web", nil)
			e.ensure(svc, e.nodes(emuA, emuB))
			e.reset()
			if tc.get && !e.exists(svc) {
				t.Fatal("Get reports no load balancer")
			}
			tc.between(e, svc, clk)
			before := e.srv.Calls("elasticloadbalancing", "DescribeLoadBalancers")
			e.delete(svc)
			if got := e.srv.Calls("elasticloadbalancing", "DescribeLoadBalancers") - before; got != 1 {
				t.Errorf("Delete described the Classic load balancer %d times, want 1 (afresh)", got)
			}
			e.wantNothingLeft()
		})
	}
}
