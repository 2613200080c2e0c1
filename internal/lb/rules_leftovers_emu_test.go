package lb

import (
	"net/http"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// Rules in node security groups: every rule the reconciler wrote for a
// Service is found again, wherever it is, and while any is left the load
// balancer is reported as existing, so its Service keeps its finalizer.

// emuLoneSG is the only, untagged, security group of instance emuLone.
const (
	emuLoneSG = "sg-0a0a0000000000a01"
	emuLone   = "i-0a1b2c3d4e5f600e1"
)

// withLoneInstance adds emuLone in subnet A with emuLoneSG as its only
// group: the reconciler opens that group, although it is not tagged. (The
// least-privilege policy does not let it: tests with emuLone run under
// the default policy.)
func withLoneInstance(f *awsemu.Fixture) {
	f.SecurityGroups = append(f.SecurityGroups, awsemu.SecurityGroup{ID: emuLoneSG, Name: "lone", Description: "a node's only group", VPCID: emuVPC})
	f.Instances = append(f.Instances, awsemu.Instance{ID: emuLone, SubnetID: emuSubnetA, PrivateIP: "10.0.1.88", SecurityGroupIDs: []string{emuLoneSG},
		Tags: map[string]string{"kubernetes.io/cluster/demo": "owned"}})
}

// loneRules are the rules of emuLoneSG.
func (e *emu) loneRules() []string { return emuRules(e.group(emuLoneSG).Ingress, true) }

// TestEmuNLBRulesInUntaggedGroup: an NLB's rules in the untagged only group
// of a node are revoked when the node leaves and when the Service goes.
func TestEmuNLBRulesInUntaggedGroup(t *testing.T) {
	t.Parallel()
	for _, then := range []string{"node leaves", "Service deleted"} {
		t.Run(then, func(t *testing.T) {
			t.Parallel()
			e := newEmu(t, emuOptions{fixture: withLoneInstance, policy: policyBroad})
			svc := emuService("lone-node", map[string]string{nlbType: "nlb"})
			e.ensure(svc, e.nodes(emuA, emuLone))
			if len(e.loneRules()) == 0 {
				t.Fatal("the lone node's group was not opened")
			}
			if then == "node leaves" {
				e.ensure(svc, e.nodes(emuA))
				if left := e.loneRules(); len(left) != 0 {
					t.Errorf("rules left in %s after its node left: %q", emuLoneSG, left)
				}
				if len(e.nodeRules()) == 0 {
					t.Error("the remaining node's group lost its rules")
				}
			}
			e.delete(svc)
			if left := e.loneRules(); len(left) != 0 {
				t.Errorf("rules left in %s: %q", emuLoneSG, left)
			}
			e.wantNothingLeft()
		})
	}
}

// TestEmuRulesOutliveLoadBalancer: the load balancer is gone (deleted by
// hand, or by an earlier CCM that left its rules), its rules are not.
// Get reports it as existing; Delete fails while RevokeSecurityGroupIngress
// fails, Get still reports it, and once AWS answers Delete leaves nothing.
func TestEmuRulesOutliveLoadBalancer(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"classic", "nlb"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			e := newEmu(t, emuOptions{fixture: withLoneInstance, policy: policyBroad})
			ann := map[string]string{}
			if kind == "nlb" {
				ann[nlbType] = "nlb"
			}
			svc := emuService("rules-left", ann)
			e.ensure(svc, e.nodes(emuA, emuLone))
			if kind == "nlb" {
				arn := e.nlb(lbName(svc)).ARN
				if _, err := e.r.ELBv2.DeleteLoadBalancer(e.ctx(), &elbv2.DeleteLoadBalancerInput{LoadBalancerArn: aws.String(arn)}); err != nil {
					t.Fatal(err)
				}
				for _, tg := range e.srv.TargetGroups() {
					if _, err := e.r.ELBv2.DeleteTargetGroup(e.ctx(), &elbv2.DeleteTargetGroupInput{TargetGroupArn: aws.String(tg.ARN)}); err != nil {
						t.Fatal(err)
					}
				}
			} else if _, err := e.r.ELB.DeleteLoadBalancer(e.ctx(), &elb.DeleteLoadBalancerInput{LoadBalancerName: aws.String(lbName(svc))}); err != nil {
				t.Fatal(err)
			}
			if len(e.nodeRules()) == 0 || len(e.loneRules()) == 0 {
				t.Fatalf("no rules left to find: node group %q, lone group %q", e.nodeRules(), e.loneRules())
			}
			if !e.exists(svc) {
				t.Fatal("Get reports nothing while the load balancer's rules are left")
			}
			id := e.srv.InjectFault(awsemu.Fault{Service: "ec2", Action: "RevokeSecurityGroupIngress", HTTPStatus: http.StatusInternalServerError})
			e.wantDeleteRetried(svc, id, "RevokeSecurityGroupIngress", nil)
			if left := e.loneRules(); len(left) != 0 {
				t.Errorf("rules left in %s: %q", emuLoneSG, left)
			}
			if slices.ContainsFunc(e.srv.CallLog(), func(c awsemu.Call) bool { return c.Action == "DeleteSecurityGroup" && kind == "nlb" }) {
				t.Error("an NLB's deletion deleted a security group")
			}
		})
	}
}
