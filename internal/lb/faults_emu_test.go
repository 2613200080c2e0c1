package lb

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// Fault paths against the emulator: throttling and server errors on
// Describe and mutating calls, through the SDK's real retries. The error
// is returned, nothing is deleted or leaked, and a later sync converges.

// emuD is an instance addInstanceD adds to the emulator after the
// reconciler first looked (running, us-east-1a, the node group).
const emuD = "i-0a1b2c3d4e5f600d0"

func addInstanceD(t *testing.T, e *emu) {
	t.Helper()
	err := e.srv.AddInstance(awsemu.Instance{ID: emuD, SubnetID: emuSubnetA, PrivateIP: "10.0.1.77", SecurityGroupIDs: []string{emuNodeSG},
		Tags: map[string]string{"kubernetes.io/cluster/demo": "owned"}})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEmuDescribeFaults: while a Describe call fails (throttled or 5xx,
// after the SDK's retries), Ensure, Update and Delete return the error.
// Nothing is deleted: a sync changes at most the targets it could look up
// before the failing call, and a failed Delete at most the rules it
// removes first. Once AWS answers again, one sync converges.
func TestEmuDescribeFaults(t *testing.T) {
	t.Parallel()
	targets := map[string]int{"elasticloadbalancing:RegisterInstancesWithLoadBalancer": 1, "elasticloadbalancing:DeregisterInstancesFromLoadBalancer": 1}
	nlbTargets := map[string]int{v2 + "RegisterTargets": 1, v2 + "DeregisterTargets": 1}
	tests := []struct {
		name  string
		nlb   bool
		fault awsemu.Fault
		// updateOK: Update does not make the failing call.
		updateOK bool
		// sync are the mutating calls of Ensure and Update while it fails.
		sync map[string]int
		// deleteFails: Delete makes the failing call too, after the
		// mutating calls deleteCalls.
		deleteFails bool
		deleteCalls map[string]int
	}{
		{name: "Classic DescribeLoadBalancers throttled", fault: withAction(awsemu.Throttle("elasticloadbalancing", 1), "DescribeLoadBalancers"), deleteFails: true},
		{name: "Classic DescribeTags 500", fault: awsemu.Fault{Service: "elasticloadbalancing", Action: "DescribeTags", HTTPStatus: http.StatusInternalServerError},
			updateOK: true, sync: targets},
		{name: "Classic DescribeLoadBalancerAttributes 503", fault: awsemu.Fault{Service: "elasticloadbalancing", Action: "DescribeLoadBalancerAttributes", HTTPStatus: http.StatusServiceUnavailable},
			updateOK: true, sync: targets},
		// Update syncs the instances before it reads the groups.
		{name: "Classic DescribeSecurityGroups throttled", fault: withAction(awsemu.Throttle("ec2", 1), "DescribeSecurityGroups"), sync: targets, deleteFails: true},
		{name: "NLB DescribeLoadBalancers throttled", nlb: true, fault: withAction(awsemu.Throttle("elasticloadbalancingv2", 1), "DescribeLoadBalancers"), deleteFails: true},
		{name: "NLB DescribeListeners 500", nlb: true, fault: awsemu.Fault{Service: "elasticloadbalancingv2", Action: "DescribeListeners", HTTPStatus: http.StatusInternalServerError},
			updateOK: true, sync: nlbTargets},
		// Delete reads the target groups (and the tags) before it changes
		// anything: a failed read leaves everything as it was.
		{name: "NLB DescribeTargetGroups throttled", nlb: true, fault: withAction(awsemu.Throttle("elasticloadbalancingv2", 1), "DescribeTargetGroups"),
			deleteFails: true},
		{name: "NLB DescribeTargetHealth 503", nlb: true, fault: awsemu.Fault{Service: "elasticloadbalancingv2", Action: "DescribeTargetHealth", HTTPStatus: http.StatusServiceUnavailable}},
		// The targets are synced before the node rules read the groups.
		{name: "NLB DescribeSecurityGroups 500", nlb: true, fault: awsemu.Fault{Service: "ec2", Action: "DescribeSecurityGroups", HTTPStatus: http.StatusInternalServerError},
			sync: nlbTargets, deleteFails: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEmu(t, emuOptions{})
			svc := emuService("faulty", nil)
			if tc.nlb {
				svc = emuService("faulty", map[string]string{nlbType: "nlb"})
			}
			e.ensure(svc, e.nodes(emuA, emuB))
			registered := func() []string {
				if tc.nlb {
					return targetIDs(e.listenerGroups(lbName(svc))[80])
				}
				return sortedIDs(e.classic(lbName(svc)).Instances)
			}
			before := e.srv.Inventory()

			// B leaves and C joins while AWS fails.
			nodes := e.nodes(emuA, emuC)
			e.reset()
			id := e.srv.InjectFault(tc.fault)
			if _, err := e.r.Ensure(e.ctx(), svc, nodes); err == nil {
				t.Errorf("Ensure succeeded while %s failed", tc.fault.Action)
			}
			// The SDK retried the retryable error: three attempts a call.
			if n := e.srv.Calls(tc.fault.Service, tc.fault.Action); n == 0 || n%3 != 0 {
				t.Errorf("%s called %d times, want a multiple of 3 (the SDK's attempts)", tc.fault.Action, n)
			}
			if err := e.r.Update(e.ctx(), svc, nodes); (err == nil) != tc.updateOK {
				t.Errorf("Update = %v while %s failed; want success: %t", err, tc.fault.Action, tc.updateOK)
			}
			e.wantMutations("syncs while "+tc.fault.Action+" fails", merge(tc.sync))
			wantEq(t, "inventory while "+tc.fault.Action+" fails", e.srv.Inventory(), before)
			if len(tc.sync) == 0 {
				wantEq(t, "registered while "+tc.fault.Action+" fails", registered(), []string{emuA, emuB})
			}
			if tc.deleteFails {
				e.reset()
				if err := e.r.Delete(e.ctx(), svc); err == nil {
					t.Errorf("Delete succeeded while %s failed", tc.fault.Action)
				}
				e.wantMutations("Delete while "+tc.fault.Action+" fails", merge(tc.deleteCalls))
				wantEq(t, "inventory after the failed Delete", e.srv.Inventory(), before)
				// Get fails too, or reports the load balancer: either way the
				// service controller calls Delete again.
				if _, ok, err := e.r.Get(e.ctx(), svc); err == nil && !ok {
					t.Errorf("Get reports nothing after the failed Delete")
				}
			}
			e.srv.ClearFault(id)

			// AWS answers again: one sync converges.
			e.ensure(svc, nodes)
			wantEq(t, "registered after recovery", registered(), []string{emuA, emuC})
			e.reset()
			e.ensure(svc, nodes)
			e.wantMutations("re-sync after recovery", map[string]int{})
			e.delete(svc)
			e.wantNothingLeft()
		})
	}
}

func withAction(f awsemu.Fault, action string) awsemu.Fault { f.Action = action; return f }

// TestEmuTransientFaultsAbsorbed: a fault that clears within the SDK's
// attempts is invisible: the sync succeeds and creates each resource once.
func TestEmuTransientFaultsAbsorbed(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"classic", "nlb"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			nlb := kind == "nlb"
			e := newEmu(t, emuOptions{})
			ann := map[string]string{}
			if nlb {
				ann[nlbType] = "nlb"
			}
			svc := emuService("transient", ann)
			for _, f := range []awsemu.Fault{
				{Service: "ec2", Action: "CreateSecurityGroup", HTTPStatus: http.StatusServiceUnavailable, Remaining: 2},
				{Service: "ec2", Action: "AuthorizeSecurityGroupIngress", HTTPStatus: http.StatusInternalServerError, Remaining: 2},
				{Service: "elasticloadbalancing", Action: "CreateLoadBalancer", Code: "Throttling", Remaining: 2},
				{Service: "elasticloadbalancingv2", Action: "CreateLoadBalancer", Code: "Throttling", Remaining: 2},
				{Service: "elasticloadbalancingv2", Action: "CreateTargetGroup", HTTPStatus: http.StatusInternalServerError, Remaining: 2},
				{Service: "elasticloadbalancingv2", Action: "RegisterTargets", Code: "Throttling", Remaining: 2},
				{Service: "elasticloadbalancing", Action: "RegisterInstancesWithLoadBalancer", HTTPStatus: http.StatusServiceUnavailable, Remaining: 2},
			} {
				e.srv.InjectFault(f)
			}
			e.ensure(svc, e.nodes(emuA, emuB))
			inv := e.srv.Inventory()
			if nlb {
				if inv.NetworkLBs != 1 || inv.TargetGroups != 1 || inv.Listeners != 1 || inv.SecurityGroups != e.groups {
					t.Errorf("NLB: inventory %+v", inv)
				}
				wantEq(t, "NLB targets", targetIDs(e.listenerGroups(lbName(svc))[80]), []string{emuA, emuB})
				wantEq(t, "CreateLoadBalancer attempts", e.srv.Calls("elasticloadbalancingv2", "CreateLoadBalancer"), 3)
			} else {
				if inv.ClassicLBs != 1 || inv.SecurityGroups != e.groups+1 {
					t.Errorf("Classic: inventory %+v", inv)
				}
				wantEq(t, "Classic instances", sortedIDs(e.classic(lbName(svc)).Instances), []string{emuA, emuB})
				wantEq(t, "CreateSecurityGroup attempts", e.srv.Calls("ec2", "CreateSecurityGroup"), 3)
				wantEq(t, "CreateLoadBalancer attempts", e.srv.Calls("elasticloadbalancing", "CreateLoadBalancer"), 3)
			}
			wantEq(t, "AuthorizeSecurityGroupIngress attempts", e.srv.Calls("ec2", "AuthorizeSecurityGroupIngress") >= 3, true)
			e.reset()
			e.ensure(svc, e.nodes(emuA, emuB))
			e.wantMutations("re-sync", map[string]int{})
			e.delete(svc)
			e.wantNothingLeft()
		})
	}
}

// TestEmuMutatingFaults: a mutating call keeps failing in the middle of a
// sync. The error is returned; what the sync made so far is reported by
// Get (so the service controller keeps the Service's finalizer) and is
// either finished by the next sync, with nothing made twice, or removed
// by Delete.
func TestEmuMutatingFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		nlb   bool
		fault awsemu.Fault
		// leftover is what the failed sync leaves (Inventory fields).
		leftover func(inv awsemu.Inventory, e *emu) bool
	}{
		{
			// The unit equivalent of test/integration TestClassicDeleteAfterFailedCreate.
			name:  "Classic CreateLoadBalancer refused",
			fault: awsemu.Fault{Service: "elasticloadbalancing", Action: "CreateLoadBalancer", Code: "TooManyLoadBalancers"},
			leftover: func(inv awsemu.Inventory, e *emu) bool {
				return inv.ClassicLBs == 0 && inv.SecurityGroups == e.groups+1
			},
		},
		{
			name:  "Classic CreateLoadBalancer 500",
			fault: awsemu.Fault{Service: "elasticloadbalancing", Action: "CreateLoadBalancer", HTTPStatus: http.StatusInternalServerError},
			leftover: func(inv awsemu.Inventory, e *emu) bool {
				return inv.ClassicLBs == 0 && inv.SecurityGroups == e.groups+1
			},
		},
		{
			name:  "Classic RegisterInstancesWithLoadBalancer throttled",
			fault: withAction(awsemu.Throttle("elasticloadbalancing", 1), "RegisterInstancesWithLoadBalancer"),
			leftover: func(inv awsemu.Inventory, e *emu) bool {
				return inv.ClassicLBs == 1 && inv.SecurityGroups == e.groups+1
			},
		},
		{
			name:  "Classic node rule 503",
			fault: awsemu.Fault{Service: "ec2", Action: "AuthorizeSecurityGroupIngress", HTTPStatus: http.StatusServiceUnavailable},
			leftover: func(inv awsemu.Inventory, e *emu) bool {
				return inv.ClassicLBs == 1 && inv.SecurityGroups == e.groups+1
			},
		},
		{
			name: "NLB CreateTargetGroup 500", nlb: true,
			fault: awsemu.Fault{Service: "elasticloadbalancingv2", Action: "CreateTargetGroup", HTTPStatus: http.StatusInternalServerError},
			leftover: func(inv awsemu.Inventory, _ *emu) bool {
				return inv.NetworkLBs == 1 && inv.TargetGroups == 0
			},
		},
		{
			// The unit equivalent of test/integration TestNLBDeleteAfterFailedListener.
			name: "NLB CreateListener refused", nlb: true,
			fault: awsemu.Fault{Service: "elasticloadbalancingv2", Action: "CreateListener", Code: "TooManyListeners"},
			leftover: func(inv awsemu.Inventory, e *emu) bool {
				tgs := e.srv.TargetGroups()
				return inv.NetworkLBs == 1 && inv.Listeners == 0 && len(tgs) == 1 && len(tgs[0].LoadBalancerARNs) == 0
			},
		},
		{
			name: "NLB RegisterTargets throttled", nlb: true,
			fault: withAction(awsemu.Throttle("elasticloadbalancingv2", 1), "RegisterTargets"),
			leftover: func(inv awsemu.Inventory, _ *emu) bool {
				return inv.NetworkLBs == 1 && inv.TargetGroups == 1 && inv.Listeners == 0
			},
		},
		{
			name: "NLB node rule 500", nlb: true,
			fault: awsemu.Fault{Service: "ec2", Action: "AuthorizeSecurityGroupIngress", HTTPStatus: http.StatusInternalServerError},
			leftover: func(inv awsemu.Inventory, _ *emu) bool {
				return inv.NetworkLBs == 1 && inv.TargetGroups == 1 && inv.Listeners == 1
			},
		},
	}
	for _, tc := range tests {
		for _, then := range []string{"retry", "delete"} {
			t.Run(tc.name+"/"+then, func(t *testing.T) {
				t.Parallel()
				e := newEmu(t, emuOptions{})
				ann := map[string]string{}
				if tc.nlb {
					ann[nlbType] = "nlb"
				}
				svc := emuService("half-built", ann)
				nodes := e.nodes(emuA, emuB)
				id := e.srv.InjectFault(tc.fault)
				if _, err := e.r.Ensure(e.ctx(), svc, nodes); err == nil || !strings.Contains(err.Error(), tc.fault.Action) {
					t.Fatalf("Ensure = %v, want the error of %s", err, tc.fault.Action)
				}
				if inv := e.srv.Inventory(); !tc.leftover(inv, e) {
					t.Errorf("after the failed sync: %+v", inv)
				}
				// Get reports what is left, so Delete is called.
				if !e.exists(svc) {
					t.Errorf("Get reports nothing while parts of the load balancer exist")
				}
				// Failing again makes nothing twice.
				if _, err := e.r.Ensure(e.ctx(), svc, nodes); err == nil {
					t.Fatalf("second Ensure succeeded while %s fails", tc.fault.Action)
				}
				if inv := e.srv.Inventory(); !tc.leftover(inv, e) {
					t.Errorf("after the second failed sync: %+v", inv)
				}
				e.srv.ClearFault(id)

				if then == "delete" {
					e.delete(svc)
					e.wantNothingLeft()
					if e.exists(svc) {
						t.Errorf("Get reports the load balancer after Delete")
					}
					return
				}
				e.ensure(svc, nodes)
				inv := e.srv.Inventory()
				if tc.nlb {
					if inv.NetworkLBs != 1 || inv.TargetGroups != 1 || inv.Listeners != 1 {
						t.Errorf("after the retry: %+v, want one NLB, listener and target group", inv)
					}
					wantEq(t, "targets", targetIDs(e.listenerGroups(lbName(svc))[80]), []string{emuA, emuB})
				} else {
					if inv.ClassicLBs != 1 || inv.SecurityGroups != e.groups+1 {
						t.Errorf("after the retry: %+v, want one load balancer and one managed group", inv)
					}
					wantEq(t, "instances", sortedIDs(e.classic(lbName(svc)).Instances), []string{emuA, emuB})
				}
				if len(e.nodeRules()) == 0 {
					t.Errorf("no node rules after the retry")
				}
				e.reset()
				e.ensure(svc, nodes)
				e.wantMutations("re-sync after the retry", map[string]int{})
				e.delete(svc)
				e.wantNothingLeft()
			})
		}
	}
}

// TestEmuNLBReplacementInterrupted: the health-check interval changes, the
// new target groups are made, but the listener cannot be switched to them.
// The next sync adopts the new groups (made for this Service) instead of
// making more, and deletes the old ones.
func TestEmuNLBReplacementInterrupted(t *testing.T) {
	t.Parallel()
	e := newEmu(t, emuOptions{})
	svc := emuService("nlb-swap", map[string]string{nlbType: "nlb"})
	nodes := e.nodes(emuA, emuB)
	e.ensure(svc, nodes)
	old := e.listenerGroups(lbName(svc))[80]

	svc = withAnn(svc, map[string]string{annPrefix + "healthcheck-interval": "10"})
	id := e.srv.InjectFault(awsemu.Fault{Service: "elasticloadbalancingv2", Action: "ModifyListener", HTTPStatus: http.StatusInternalServerError})
	if _, err := e.r.Ensure(e.ctx(), svc, nodes); err == nil {
		t.Fatal("Ensure succeeded while ModifyListener fails")
	}
	if n := len(e.srv.TargetGroups()); n != 2 {
		t.Fatalf("%d target groups after the failed switch, want the old and the new", n)
	}
	wantEq(t, "listener's group", e.listenerGroups(lbName(svc))[80].ARN, old.ARN)
	e.srv.ClearFault(id)

	e.reset()
	e.ensure(svc, nodes)
	e.wantMutations("finished switch", map[string]int{v2 + "ModifyListener": 1, v2 + "DeleteTargetGroup": 1})
	tgs := e.srv.TargetGroups()
	if len(tgs) != 1 || tgs[0].ARN == old.ARN || tgs[0].HealthCheckIntervalSeconds != 10 || !slices.Equal(targetIDs(tgs[0]), []string{emuA, emuB}) {
		t.Errorf("target groups %+v, want only the new one with both targets", tgs)
	}
	e.delete(svc)
	e.wantNothingLeft()
}

// TestEmuDeleteRetriesDependencyViolation: DeleteSecurityGroup fails with
// DependencyViolation twice (as while AWS releases a deleted load
// balancer's interfaces). Delete returns an error each time, Get keeps
// reporting the group, and the third Delete finishes (the unit equivalent
// of test/integration TestClassicDeleteRetriesDependencyViolation).
func TestEmuDeleteRetriesDependencyViolation(t *testing.T) {
	t.Parallel()
	e := newEmu(t, emuOptions{})
	svc := emuService("clb-depviol", nil)
	e.ensure(svc, e.nodes(emuA))
	sgName := "k8s-elb-" + lbName(svc)
	e.srv.InjectFault(awsemu.Fault{Service: "ec2", Action: "DeleteSecurityGroup", Code: "DependencyViolation", Remaining: 2})
	for i := 1; i <= 2; i++ {
		err := e.r.Delete(e.ctx(), svc)
		if err == nil || !strings.Contains(err.Error(), "DependencyViolation") {
			t.Fatalf("Delete %d = %v, want DependencyViolation", i, err)
		}
		if len(e.srv.ClassicLoadBalancers()) != 0 {
			t.Errorf("Delete %d: the load balancer is still there", i)
		}
		if len(e.srv.SecurityGroupsNamed(sgName)) != 1 {
			t.Fatalf("Delete %d: group %s is gone", i, sgName)
		}
		if !e.exists(svc) {
			t.Errorf("Delete %d: Get reports nothing while the group is left", i)
		}
	}
	e.delete(svc)
	wantEq(t, "DeleteSecurityGroup calls", e.srv.Calls("ec2", "DeleteSecurityGroup"), 3)
	e.wantNothingLeft()
	if e.exists(svc) {
		t.Errorf("Get reports the load balancer after Delete")
	}
}

// TestEmuDeleteUnderThrottling deletes a Classic ELB and an NLB while every
// load-balancing and EC2 API throttles half of the calls: the SDK's retries
// absorb it, and nothing is left (the unit equivalent of test/integration
// TestDeleteUnderThrottling).
func TestEmuDeleteUnderThrottling(t *testing.T) {
	t.Parallel()
	e := newEmu(t, emuOptions{})
	clb := emuService("clb-throttle", nil)
	nlb := emuService("nlb-throttle", map[string]string{nlbType: "nlb"},
		corev1.ServicePort{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP},
		corev1.ServicePort{Name: "https", Port: 443, NodePort: 30443, Protocol: corev1.ProtocolTCP})
	nlb.Spec.LoadBalancerSourceRanges = []string{"10.1.0.0/16"}
	nodes := e.nodes(emuA, emuB, emuC)
	e.ensure(clb, nodes)
	e.ensure(nlb, nodes)
	if len(e.nodeRules()) == 0 {
		t.Fatal("node group has no rules before deletion")
	}
	e.reset()
	for _, s := range []string{"elasticloadbalancing", "elasticloadbalancingv2", "ec2"} {
		e.srv.InjectFault(awsemu.Throttle(s, 0.5))
	}
	e.delete(clb)
	e.delete(nlb)
	// Every other request was throttled and retried.
	if n := len(e.srv.CallLog()); n < 20 {
		t.Errorf("%d requests for both deletions, want the retries of the throttled half", n)
	}
	e.srv.ClearFaults()
	e.wantNothingLeft()
}

// TestEmuDeleteFaults: a call of Delete keeps failing. Delete returns the
// error, Get keeps reporting what is left, and once AWS answers, Delete
// removes everything.
func TestEmuDeleteFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		nlb   bool
		fault awsemu.Fault
	}{
		{name: "Classic RevokeSecurityGroupIngress throttled", fault: withAction(awsemu.Throttle("ec2", 1), "RevokeSecurityGroupIngress")},
		{name: "Classic DeleteLoadBalancer 500", fault: awsemu.Fault{Service: "elasticloadbalancing", Action: "DeleteLoadBalancer", HTTPStatus: http.StatusInternalServerError}},
		{name: "Classic DeleteSecurityGroup 503", fault: awsemu.Fault{Service: "ec2", Action: "DeleteSecurityGroup", HTTPStatus: http.StatusServiceUnavailable}},
		{name: "NLB RevokeSecurityGroupIngress 500", nlb: true, fault: awsemu.Fault{Service: "ec2", Action: "RevokeSecurityGroupIngress", HTTPStatus: http.StatusInternalServerError}},
		{name: "NLB DeleteLoadBalancer throttled", nlb: true, fault: withAction(awsemu.Throttle("elasticloadbalancingv2", 1), "DeleteLoadBalancer")},
		{name: "NLB DeleteTargetGroup 500", nlb: true, fault: awsemu.Fault{Service: "elasticloadbalancingv2", Action: "DeleteTargetGroup", HTTPStatus: http.StatusInternalServerError}},
		{name: "NLB DeleteTargetGroup in use", nlb: true, fault: awsemu.Fault{Service: "elasticloadbalancingv2", Action: "DeleteTargetGroup", Code: "ResourceInUse"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEmu(t, emuOptions{})
			ann := map[string]string{}
			if tc.nlb {
				ann[nlbType] = "nlb"
			}
			svc := emuService("undeletable", ann)
			e.ensure(svc, e.nodes(emuA, emuB))
			e.wantDeleteRetried(svc, e.srv.InjectFault(tc.fault), tc.fault.Action, nil)
		})
	}
}

// TestEmuEC2ErrorNeverDeregisters: while DescribeInstances fails, a node
// joins. Ensure and Update fail without deregistering the instances they
// could not look up; once EC2 answers, the new instance is registered (the
// unit equivalent of test/integration TestEC2ErrorNeverDeregisters).
func TestEmuEC2ErrorNeverDeregisters(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"classic", "nlb"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			nlb := kind == "nlb"
			e := newEmu(t, emuOptions{})
			ann := map[string]string{}
			if nlb {
				ann[nlbType] = "nlb"
			}
			svc := emuService("ec2err", ann)
			e.ensure(svc, e.nodes(emuA, emuB))
			registered := func() []string {
				if nlb {
					return targetIDs(e.listenerGroups(lbName(svc))[80])
				}
				return sortedIDs(e.classic(lbName(svc)).Instances)
			}

			addInstanceD(t, e)
			id := e.srv.InjectFault(awsemu.Fault{Service: "ec2", Action: "DescribeInstances", Code: "InternalError", HTTPStatus: http.StatusInternalServerError})
			nodes := e.nodes(emuA, emuB, emuD)
			e.reset()
			if _, err := e.r.Ensure(e.ctx(), svc, nodes); err == nil || !strings.Contains(err.Error(), "look up the instances") {
				t.Errorf("Ensure = %v, want the instance lookup's error", err)
			}
			if err := e.r.Update(e.ctx(), svc, nodes); err == nil || !strings.Contains(err.Error(), "look up the instances") {
				t.Errorf("Update = %v, want the instance lookup's error", err)
			}
			// Even when every instance must be looked up again.
			e.viewClock.Step(2 * time.Minute)
			if err := e.r.Update(e.ctx(), svc, e.nodes(emuA)); err == nil {
				t.Errorf("Update succeeded while EC2 fails")
			}
			e.wantMutations("syncs while EC2 fails", map[string]int{})
			wantEq(t, "registered while EC2 fails", registered(), []string{emuA, emuB})

			e.srv.ClearFault(id)
			e.reset()
			e.ensure(svc, nodes)
			wantEq(t, "registered once EC2 answers", registered(), []string{emuA, emuB, emuD})
			if nlb {
				e.wantMutations("recovery", map[string]int{v2 + "RegisterTargets": 1})
			} else {
				e.wantMutations("recovery", map[string]int{"elasticloadbalancing:RegisterInstancesWithLoadBalancer": 1})
			}
			e.delete(svc)
			e.wantNothingLeft()
		})
	}
}
