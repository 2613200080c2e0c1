package lb

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// emuDBSG is a group that lets emuBYO in for something else than a load
// balancer: its rule is the user's.
const emuDBSG = "sg-0d0d0000000000d01"

func withDBGroup(f *awsemu.Fixture) {
	f.SecurityGroups = append(f.SecurityGroups, awsemu.SecurityGroup{ID: emuDBSG, Name: "database", Description: "lets the app in", VPCID: emuVPC,
		Ingress: []awsemu.Permission{{Protocol: "-1", GroupIDs: []string{emuBYO}}}})
}

// TestEmuClassicGroupSwitch: a Service moves from the managed security
// group to its own (the security-groups annotation) and back. Each time
// the node group lets the new first group in and stops letting the old
// one in; a rule letting the Service's group into a group that is not a
// node's is the user's and stays.
func TestEmuClassicGroupSwitch(t *testing.T) {
	t.Parallel()
	const auth, revoke, apply = "ec2:AuthorizeSecurityGroupIngress", "ec2:RevokeSecurityGroupIngress", "elasticloadbalancing:ApplySecurityGroupsToLoadBalancer"
	// The revocation a switch owes is recorded on the load balancer
	// before the switch and cleared after it.
	const tags = "elasticloadbalancing:AddTags"
	e := newEmu(t, emuOptions{byoGroups: true, fixture: withDBGroup})
	svc := emuService("sg-switch", nil)
	nodes := e.nodes(emuA, emuB)
	e.ensure(svc, nodes)
	managed := e.managedGroup(lbName(svc)).ID
	wantEq(t, "node rules with the managed group", e.nodeRules(), []string{"-1 0-0 " + managed})
	dbRules := emuRules(e.group(emuDBSG).Ingress, true)

	own := withAnn(svc, map[string]string{annPrefix + "security-groups": emuBYO})
	e.reset()
	e.ensure(own, nodes)
	e.wantMutations("to the Service's group", map[string]int{apply: 1, auth: 1, revoke: 1, tags: 2})
	wantEq(t, "node rules with the Service's group", e.nodeRules(), []string{"-1 0-0 " + emuBYO})
	e.reset()
	e.ensure(own, nodes)
	e.wantMutations("re-sync", map[string]int{})

	e.reset()
	e.ensure(svc, nodes)
	e.wantMutations("back to the managed group", map[string]int{apply: 1, auth: 1, revoke: 1, tags: 2})
	wantEq(t, "managed group", e.managedGroup(lbName(svc)).ID, managed)
	wantEq(t, "node rules with the managed group again", e.nodeRules(), []string{"-1 0-0 " + managed})
	wantEq(t, "the database group's rules", emuRules(e.group(emuDBSG).Ingress, true), dbRules)
	e.reset()
	e.ensure(svc, nodes)
	e.wantMutations("re-sync", map[string]int{})

	e.delete(svc)
	e.wantNothingLeft()
	wantEq(t, "the database group's rules after Delete", emuRules(e.group(emuDBSG).Ingress, true), dbRules)
}

// TestEmuClassicGroupSwitchShared: the Service's own group is also the
// first group of another Service's load balancer: leaving it keeps the
// node rule, which the other load balancer needs, until that one goes too.
func TestEmuClassicGroupSwitchShared(t *testing.T) {
	t.Parallel()
	e := newEmu(t, emuOptions{byoGroups: true})
	byo := map[string]string{annPrefix + "security-groups": emuBYO}
	one, other := emuService("sg-shared-one", byo), emuService("sg-shared-other", byo)
	nodes := e.nodes(emuA, emuB)
	e.ensure(one, nodes)
	e.ensure(other, nodes)
	wantEq(t, "node rules", e.nodeRules(), []string{"-1 0-0 " + emuBYO})

	managedOne := withAnn(one, map[string]string{annPrefix + "security-groups": ""})
	e.ensure(managedOne, nodes)
	managed := e.managedGroup(lbName(one)).ID
	wantEq(t, "node rules after one left the shared group", e.nodeRules(), sortedIDs([]string{"-1 0-0 " + emuBYO, "-1 0-0 " + managed}))
	e.delete(managedOne)
	wantEq(t, "node rules after one went", e.nodeRules(), []string{"-1 0-0 " + emuBYO})
	e.delete(other)
	e.wantNothingLeft()
}

// TestEmuClassicGroupSwitchRevokeFails: revoking the old group's node rule
// fails. Ensure returns the error; the next sync, which no longer sees the
// switch on the load balancer, still revokes it, and until then Delete
// would too. From the Service's own group to the managed one, only the
// remembered revocation can find the old rule (nothing else references
// that group).
func TestEmuClassicGroupSwitchRevokeFails(t *testing.T) {
	t.Parallel()
	byo := map[string]string{annPrefix + "security-groups": emuBYO}
	for _, toOwn := range []bool{true, false} {
		for _, then := range []string{"sync", "delete"} {
			t.Run(fmt.Sprintf("toOwn=%t/%s", toOwn, then), func(t *testing.T) {
				t.Parallel()
				e := newEmu(t, emuOptions{byoGroups: true})
				from, to := emuService("sg-switch-fail", nil), emuService("sg-switch-fail", byo)
				if !toOwn {
					from, to = to, from
				}
				nodes := e.nodes(emuA, emuB)
				e.ensure(from, nodes)
				oldFirst := e.classic(lbName(from)).SecurityGroups[0]

				id := e.srv.InjectFault(awsemu.Fault{Service: "ec2", Action: "RevokeSecurityGroupIngress", HTTPStatus: http.StatusInternalServerError})
				if _, err := e.r.Ensure(e.ctx(), to, nodes); err == nil || !strings.Contains(err.Error(), "RevokeSecurityGroupIngress") {
					t.Fatalf("Ensure = %v, want the error of RevokeSecurityGroupIngress", err)
				}
				newFirst := e.classic(lbName(to)).SecurityGroups[0]
				if newFirst == oldFirst {
					t.Fatalf("the load balancer still has %s first", oldFirst)
				}
				wantEq(t, "node rules while revoking fails", e.nodeRules(), sortedIDs([]string{"-1 0-0 " + oldFirst, "-1 0-0 " + newFirst}))
				e.srv.ClearFault(id)
				if then == "delete" {
					e.delete(to)
					e.wantNothingLeft()
					return
				}
				e.ensure(to, nodes)
				wantEq(t, "node rules after the retry", e.nodeRules(), []string{"-1 0-0 " + newFirst})
				e.reset()
				e.ensure(to, nodes)
				e.wantMutations("re-sync", map[string]int{})
				e.delete(to)
				e.wantNothingLeft()
			})
		}
	}
}
