package lb

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// TestEmuClassicGroupSwitchRevokeFailsThenRestart: the revoke of the old
// first group's node rule fails, and the CCM restarts before any retry (a
// new reconciler on the same AWS). The load balancer itself says what it
// still owes, so the restarted CCM's next sync, or the Service's deletion,
// revokes the rule. From the Service's own group to the managed one,
// nothing else in AWS marks the old rule as the load balancer's.
func TestEmuClassicGroupSwitchRevokeFailsThenRestart(t *testing.T) {
	t.Parallel()
	byo := map[string]string{annPrefix + "security-groups": emuBYO}
	for _, toOwn := range []bool{true, false} {
		for _, then := range []string{"sync", "delete"} {
			t.Run(fmt.Sprintf("toOwn=%t/%s", toOwn, then), func(t *testing.T) {
				t.Parallel()
				e := newEmu(t, emuOptions{byoGroups: true, fixture: withDBGroup})
				from, to := emuService("sg-switch-restart", nil), emuService("sg-switch-restart", byo)
				if !toOwn {
					from, to = to, from
				}
				nodes := e.nodes(emuA, emuB)
				e.ensure(from, nodes)
				oldFirst := e.classic(lbName(from)).SecurityGroups[0]
				dbRules := emuRules(e.group(emuDBSG).Ingress, true)

				id := e.srv.InjectFault(awsemu.Fault{Service: "ec2", Action: "RevokeSecurityGroupIngress", HTTPStatus: http.StatusInternalServerError})
				if _, err := e.r.Ensure(e.ctx(), to, nodes); err == nil || !strings.Contains(err.Error(), "RevokeSecurityGroupIngress") {
					t.Fatalf("Ensure = %v, want the error of RevokeSecurityGroupIngress", err)
				}
				lb := e.classic(lbName(to))
				newFirst := lb.SecurityGroups[0]
				if newFirst == oldFirst {
					t.Fatalf("the load balancer still has %s first", oldFirst)
				}
				wantOwed := oldFirst
				if toOwn {
					wantOwed += owedManagedSuffix
				}
				wantEq(t, "revocation owed, on the load balancer", lb.Tags[owedTagKey], wantOwed)
				wantEq(t, "node rules while revoking fails", e.nodeRules(), sortedIDs([]string{"-1 0-0 " + oldFirst, "-1 0-0 " + newFirst}))
				e.srv.ClearFault(id)

				// The restart: a new process, with nothing in memory.
				e.r, e.rec, e.viewClock = newEmuReconciler(t, e.srv, Options{})
				if then == "sync" {
					e.ensure(to, nodes)
					wantEq(t, "node rules after the restarted CCM's sync", e.nodeRules(), []string{"-1 0-0 " + newFirst})
					wantEq(t, "revocation owed after the sync", e.classic(lbName(to)).Tags[owedTagKey], "")
					e.reset()
					e.ensure(to, nodes)
					e.wantMutations("re-sync", map[string]int{})
				}
				e.delete(to)
				e.wantNothingLeft()
				wantEq(t, "the database group's rules (the user's)", emuRules(e.group(emuDBSG).Ingress, true), dbRules)
			})
		}
	}
}

// TestEmuClassicUntaggedManagedNameNotAdopted: a security group named
// k8s-elb-<name> without this cluster's owned tag is not the Service's.
// Ensure neither adopts it (upstream tags and adopts it) nor creates a
// second group of that name (EC2 refuses it: InvalidGroup.Duplicate): it
// fails with a Warning naming the group and saying why. Deletion leaves
// the group and every rule referencing it alone, with a Warning, and Get
// does not wait for it; a load balancer of the Service that has it as its
// group is deleted, the group's rules still stay. It runs under the broad
// policy: IAM does not stop a wrong change here, the code must.
func TestEmuClassicUntaggedManagedNameNotAdopted(t *testing.T) {
	t.Parallel()
	for _, withLB := range []bool{false, true} {
		t.Run(fmt.Sprintf("loadBalancer=%t", withLB), func(t *testing.T) {
			t.Parallel()
			svc := emuService("untagged-sg", nil)
			const untagged = "sg-0e0e0000000000e01"
			e := newEmu(t, emuOptions{policy: policyBroad, fixture: func(f *awsemu.Fixture) {
				f.SecurityGroups = append(f.SecurityGroups,
					awsemu.SecurityGroup{ID: untagged, Name: "k8s-elb-" + lbName(svc), Description: "made by hand", VPCID: emuVPC,
						Ingress: []awsemu.Permission{{Protocol: "tcp", FromPort: ptr32(443), ToPort: ptr32(443), CIDRs: []string{"10.0.0.0/8"}}}},
					awsemu.SecurityGroup{ID: emuDBSG, Name: "database", Description: "lets the group in", VPCID: emuVPC,
						Ingress: []awsemu.Permission{{Protocol: "-1", GroupIDs: []string{untagged}}}})
				for i := range f.SecurityGroups {
					if f.SecurityGroups[i].ID == emuNodeSG {
						f.SecurityGroups[i].Ingress = append(f.SecurityGroups[i].Ingress, awsemu.Permission{Protocol: "-1", GroupIDs: []string{untagged}})
					}
				}
				if withLB {
					f.LoadBalancers = append(f.LoadBalancers, awsemu.LoadBalancer{
						Name: lbName(svc), Subnets: []string{emuSubnetA, emuSubnetB, emuSubnetC}, SecurityGroups: []string{untagged},
						Listeners: []awsemu.LBListener{{Protocol: "TCP", Port: 80, InstanceProtocol: "TCP", InstancePort: 30080}},
						Instances: []string{emuA, emuB},
						Tags:      map[string]string{"kubernetes.io/cluster/demo": "owned", "kubernetes.io/service-name": "default/untagged-sg"},
					})
				}
			}})
			nodeRules := emuRules(e.group(emuNodeSG).Ingress, true)
			if !strings.Contains(strings.Join(nodeRules, "\n"), "-1 0-0 "+untagged) {
				t.Fatalf("fixture: the node group does not let %s in: %q", untagged, nodeRules)
			}
			dbRules := emuRules(e.group(emuDBSG).Ingress, true)
			ownRules := emuRules(e.group(untagged).Ingress, true)
			before := e.srv.Inventory()
			unchanged := func(step string) {
				t.Helper()
				wantEq(t, step+": security groups", e.srv.Inventory().SecurityGroups, before.SecurityGroups)
				wantEq(t, step+": the group's tags", e.group(untagged).Tags, map[string]string(nil))
				wantEq(t, step+": the group's rules", emuRules(e.group(untagged).Ingress, true), ownRules)
				wantEq(t, step+": the node group's rules", emuRules(e.group(emuNodeSG).Ingress, true), nodeRules)
				wantEq(t, step+": the database group's rules", emuRules(e.group(emuDBSG).Ingress, true), dbRules)
			}

			e.reset()
			_, err := e.r.Ensure(e.ctx(), svc, e.nodes(emuA, emuB))
			if err == nil || !strings.Contains(err.Error(), untagged) || !strings.Contains(err.Error(), "does not carry the tag kubernetes.io/cluster/demo=owned") {
				t.Fatalf("Ensure = %v, want the untagged group named and refused", err)
			}
			e.wantEvent("Warning "+ReasonForeignResource, untagged, "k8s-elb-"+lbName(svc), "not adopted", "does not carry the tag kubernetes.io/cluster/demo=owned")
			e.wantMutations("Ensure", map[string]int{})
			wantEq(t, "inventory after Ensure", e.srv.Inventory(), before)
			unchanged("after Ensure")

			if got := e.exists(svc); got != withLB {
				t.Errorf("Get reports a load balancer: %t, want %t (the untagged group must not count as the Service's)", got, withLB)
			}
			e.reset()
			e.delete(svc)
			e.wantEvent("Warning "+ReasonForeignResource, untagged, "not deleted")
			want := map[string]int{}
			if withLB {
				want["elasticloadbalancing:DeleteLoadBalancer"] = 1
			}
			e.wantMutations("Delete", want)
			unchanged("after Delete")
			if e.exists(svc) {
				t.Error("Get reports a load balancer after Delete")
			}
		})
	}
}

func ptr32(v int32) *int32 { return &v }
