package lb

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/internal/lbnames"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// managedNLB is an emulator with NLBSecurityGroupMode = Managed.
func managedNLB(t *testing.T, fixture func(*awsemu.Fixture)) *emu {
	return newEmu(t, emuOptions{options: Options{NLBManagedSecurityGroups: true}, fixture: fixture})
}

// nlbGroup returns the Service's managed NLB group, which must exist.
func (e *emu) nlbGroup(svc *corev1.Service) awsemu.SecurityGroup {
	e.t.Helper()
	gs := e.srv.SecurityGroupsNamed(lbnames.NLBSecurityGroupName(DefaultClusterName, svc))
	if len(gs) != 1 {
		e.t.Fatalf("managed NLB groups of %s: %+v, want 1", svc.Name, gs)
	}
	return gs[0]
}

// TestEmuNLBManagedSecurityGroup: under NLBSecurityGroupMode = Managed a
// new NLB gets upstream's group (name, description, tags), attached at
// creation; the group lets the source ranges in on the listener ports and
// node groups let the group in (no CIDR rules); a steady sync changes
// nothing, a source-range change only the group's rules, and deletion
// leaves nothing.
func TestEmuNLBManagedSecurityGroup(t *testing.T) {
	t.Parallel()
	e := managedNLB(t, nil)
	svc := emuService("nlb-sg", map[string]string{nlbType: "nlb", annPrefix + "additional-resource-tags": "team=web",
		annPrefix + "healthcheck-port": "10256", annPrefix + "healthcheck-protocol": "HTTP", annPrefix + "healthcheck-path": "/healthz"},
		corev1.ServicePort{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP},
		corev1.ServicePort{Name: "https", Port: 443, NodePort: 30443, Protocol: corev1.ProtocolTCP})
	svc.Spec.LoadBalancerSourceRanges = []string{"10.1.0.0/16", "192.0.2.0/24"}
	nodes := e.nodes(emuA, emuB)
	name := lbName(svc)

	e.reset()
	e.ensure(svc, nodes)
	g := e.nlbGroup(svc)
	lb := e.nlb(name)
	wantEq(t, "NLB security groups", lb.SecurityGroups, []string{g.ID})
	wantEq(t, "description", g.Description, "[k8s] Managed SecurityGroup for LoadBalancer")
	wantEq(t, "VPC", g.VPCID, emuVPC)
	wantEq(t, "tags", g.Tags, map[string]string{"kubernetes.io/cluster/demo": "owned", "team": "web"})
	wantEq(t, "group ingress", emuRules(g.Ingress, false), []string{
		"icmp 3-4 10.1.0.0/16", "icmp 3-4 192.0.2.0/24",
		"tcp 443-443 10.1.0.0/16", "tcp 443-443 192.0.2.0/24",
		"tcp 80-80 10.1.0.0/16", "tcp 80-80 192.0.2.0/24",
	})
	// Node groups let the NLB's group in, on the node ports and the
	// health-check port: no client CIDR, no subnet CIDR, no MTU rule.
	wantEq(t, "node rules", e.nodeRules(), []string{
		"tcp 10256-10256 " + g.ID + " kubernetes.io/rule/nlb/health=" + name,
		"tcp 30080-30080 " + g.ID + " kubernetes.io/rule/nlb/client=" + name,
		"tcp 30443-30443 " + g.ID + " kubernetes.io/rule/nlb/client=" + name,
	})
	muts := e.mutations()
	wantEq(t, "CreateSecurityGroup calls", muts["ec2:CreateSecurityGroup"], 1)
	wantEq(t, "SetSecurityGroups calls", muts[v2+"SetSecurityGroups"], 0)

	e.reset()
	e.ensure(svc, nodes)
	e.update(svc, nodes)
	e.wantMutations("steady syncs", map[string]int{})
	// One DescribeSecurityGroups each, as without the group: the NLB's
	// group is described with the node groups.
	wantEq(t, "DescribeSecurityGroups calls", e.lbCalls()["ec2:DescribeSecurityGroups"], 2)

	// A new source range changes the group's rules only.
	svc.Spec.LoadBalancerSourceRanges = []string{"10.1.0.0/16"}
	e.reset()
	e.ensure(svc, nodes)
	e.wantMutations("source ranges", map[string]int{"ec2:RevokeSecurityGroupIngress": 1})
	wantEq(t, "group ingress after the change", emuRules(e.nlbGroup(svc).Ingress, false), []string{"icmp 3-4 10.1.0.0/16", "tcp 443-443 10.1.0.0/16", "tcp 80-80 10.1.0.0/16"})

	e.delete(svc)
	e.wantNothingLeft()
	if gs := e.srv.SecurityGroupsNamed("k8s-default-nlbsg-"); len(gs) != 0 {
		t.Errorf("managed NLB group left: %+v", gs)
	}
	if e.exists(svc) {
		t.Error("Get reports the load balancer after Delete")
	}
}

// TestEmuNLBManagedSecurityGroupUDP: a UDP Service's group opens UDP
// listener ports, and node groups let the group in on UDP node ports and
// on the TCP health-check ports (which the UDP rules do not cover).
func TestEmuNLBManagedSecurityGroupUDP(t *testing.T) {
	t.Parallel()
	e := managedNLB(t, nil)
	svc := emuService("nlb-dns", map[string]string{nlbType: "nlb"}, corev1.ServicePort{Name: "dns", Port: 53, NodePort: 30053, Protocol: corev1.ProtocolUDP})
	name := lbName(svc)
	e.ensure(svc, e.nodes(emuA))
	g := e.nlbGroup(svc)
	wantEq(t, "group ingress", emuRules(g.Ingress, false), []string{"icmp 3-4 0.0.0.0/0", "udp 53-53 0.0.0.0/0"})
	wantEq(t, "node rules", e.nodeRules(), []string{
		"tcp 30053-30053 " + g.ID + " kubernetes.io/rule/nlb/health=" + name,
		"udp 30053-30053 " + g.ID + " kubernetes.io/rule/nlb/client=" + name,
	})
	e.delete(svc)
	e.wantNothingLeft()
}

// TestEmuNLBWithoutGroupUnderManagedMode: an NLB created without a
// security group (before the setting, or by the in-tree provider) cannot
// get one: it keeps CIDR node rules, no group is made or attached, and a
// Warning says so and how to get one.
func TestEmuNLBWithoutGroupUnderManagedMode(t *testing.T) {
	t.Parallel()
	svc := emuService("old-nlb", map[string]string{nlbType: "nlb"})
	name := lbName(svc)
	e := managedNLB(t, func(f *awsemu.Fixture) {
		f.LoadBalancers = append(f.LoadBalancers, awsemu.LoadBalancer{Name: name, Type: awsemu.LBTypeNetwork, Subnets: []string{emuSubnetA, emuSubnetB}})
	})
	e.reset()
	e.ensure(svc, e.nodes(emuA))
	e.wantEvent("Warning "+ReasonNLBGroupUnavailable, name, "created without a security group", "Recreate the Service")
	if muts := e.mutations(); muts["ec2:CreateSecurityGroup"]+muts[v2+"SetSecurityGroups"] != 0 {
		t.Errorf("tried to give the NLB a group: %s", formatCalls(muts))
	}
	wantEq(t, "NLB security groups", e.nlb(name).SecurityGroups, nil)
	wantEq(t, "node rules", e.nodeRules(), []string{"icmp 3-4 0.0.0.0/0 kubernetes.io/rule/nlb/mtu", "tcp 30080-30080 0.0.0.0/0 kubernetes.io/rule/nlb/client=" + name})
	e.delete(svc)
	e.wantNothingLeft()
}

// TestEmuNLBManagedGroupAdoptedFromUpstream: an NLB upstream made in
// Managed mode (its group, named and described as upstream does, and
// upstream's CIDR node rules) is adopted: the group is kept, its rules
// follow the Service, and the node rules move from CIDRs to the group.
func TestEmuNLBManagedGroupAdoptedFromUpstream(t *testing.T) {
	t.Parallel()
	svc := emuService("up-nlb", map[string]string{nlbType: "nlb"})
	name := lbName(svc)
	sgName := lbnames.NLBSecurityGroupName(DefaultClusterName, svc)
	const sgID = "sg-0a0b0c0d0e0f00001"
	tg := upstreamTargetGroupName("demo", "default", "up-nlb", 80, 30080)
	owned := map[string]string{"kubernetes.io/cluster/demo": "owned", "kubernetes.io/service-name": "default/up-nlb"}
	e := managedNLB(t, func(f *awsemu.Fixture) {
		f.SecurityGroups = append(f.SecurityGroups, awsemu.SecurityGroup{ID: sgID, Name: sgName, Description: nlbGroupDescription, VPCID: emuVPC,
			Tags: map[string]string{"kubernetes.io/cluster/demo": "owned"}})
		for i := range f.SecurityGroups {
			if f.SecurityGroups[i].ID == emuNodeSG {
				p := func(port int32) *int32 { return &port }
				f.SecurityGroups[i].Ingress = append(f.SecurityGroups[i].Ingress, awsemu.Permission{Protocol: "tcp", FromPort: p(30080), ToPort: p(30080),
					CIDRs: []string{"0.0.0.0/0"}, Descriptions: map[string]string{"0.0.0.0/0": "kubernetes.io/rule/nlb/client=" + name}})
			}
		}
		f.LoadBalancers = append(f.LoadBalancers, awsemu.LoadBalancer{Name: name, Type: awsemu.LBTypeNetwork, Subnets: []string{emuSubnetA, emuSubnetB},
			SecurityGroups: []string{sgID}, Tags: owned,
			Listeners: []awsemu.LBListener{{Protocol: "TCP", Port: 80, TargetGroup: tg, Tags: owned}},
			TargetGroups: []awsemu.TargetGroup{{Name: tg, Protocol: "TCP", Port: 30080, HealthCheckProtocol: "TCP", HealthCheckIntervalSeconds: 30,
				HealthyThreshold: 3, UnhealthyThreshold: 3, Tags: owned}}})
	})
	e.reset()
	e.ensure(svc, e.nodes(emuA))
	if n := e.mutations()["ec2:CreateSecurityGroup"]; n != 0 {
		t.Errorf("%d groups created; want upstream's adopted", n)
	}
	wantEq(t, "NLB security groups", e.nlb(name).SecurityGroups, []string{sgID})
	wantEq(t, "group ingress", emuRules(e.group(sgID).Ingress, false), []string{"icmp 3-4 0.0.0.0/0", "tcp 80-80 0.0.0.0/0"})
	wantEq(t, "node rules", e.nodeRules(), []string{"tcp 30080-30080 " + sgID + " kubernetes.io/rule/nlb/client=" + name})
	e.reset()
	e.ensure(svc, e.nodes(emuA))
	e.wantMutations("re-sync", map[string]int{})
	e.delete(svc)
	e.groups-- // the adopted group goes with its NLB
	e.wantNothingLeft()
}

// TestEmuNLBManagedGroupDeleteFaults: the group outlives the load
// balancer for a while (AWS frees its interfaces later: DependencyViolation)
// and deletion also meets failures revoking the node rules that let it in.
// Every failing Delete is retried, Get keeps reporting the load balancer
// meanwhile, also from a restarted CCM that knows nothing of the earlier
// attempts, and in the end nothing is left.
func TestEmuNLBManagedGroupDeleteFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fault awsemu.Fault
		want  string
		// restart: a new reconciler (a restarted CCM) takes over after
		// the failed deletes.
		restart bool
	}{
		{name: "group in use after the NLB is gone", fault: awsemu.Fault{Service: "ec2", Action: "DeleteSecurityGroup", Code: "DependencyViolation"}, want: "DependencyViolation"},
		{name: "group in use, then a restart", fault: awsemu.Fault{Service: "ec2", Action: "DeleteSecurityGroup", Code: "DependencyViolation"}, want: "DependencyViolation", restart: true},
		{name: "node rules cannot be revoked", fault: awsemu.Fault{Service: "ec2", Action: "RevokeSecurityGroupIngress", HTTPStatus: http.StatusInternalServerError}, want: "InternalError"},
		{name: "NLB delete fails, then a restart", fault: awsemu.Fault{Service: "elasticloadbalancingv2", Action: "DeleteLoadBalancer", HTTPStatus: http.StatusServiceUnavailable}, want: "Unavailable", restart: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := managedNLB(t, nil)
			svc := emuService("nlb-del", map[string]string{nlbType: "nlb"})
			e.ensure(svc, e.nodes(emuA, emuB))
			g := e.nlbGroup(svc)
			id := e.srv.InjectFault(tc.fault)
			for i := 1; i <= 2; i++ {
				if err := e.r.Delete(e.ctx(), svc); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Delete %d = %v, want an error with %s", i, err, tc.want)
				}
				// The group is never deleted before the load balancer.
				if len(e.srv.NetworkLoadBalancers()) > 0 && len(e.srv.SecurityGroupsNamed(g.Name)) == 0 {
					t.Fatalf("Delete %d deleted the group while the NLB exists", i)
				}
				if !e.exists(svc) {
					t.Fatalf("Delete %d: Get reports nothing, with %+v left", i, e.srv.Inventory())
				}
			}
			if tc.restart {
				e.r, e.rec, _ = newEmuReconciler(t, e.srv, Options{NLBManagedSecurityGroups: true})
				if !e.exists(svc) {
					t.Fatalf("after a restart Get reports nothing, with %+v left", e.srv.Inventory())
				}
			}
			e.srv.ClearFault(id)
			e.delete(svc)
			e.wantNothingLeft()
			if gs := e.srv.SecurityGroupsNamed(g.Name); len(gs) != 0 {
				t.Errorf("group left: %+v", gs)
			}
			if e.exists(svc) {
				t.Error("Get reports the load balancer after Delete")
			}
		})
	}
}

// TestEmuNLBManagedGroupCreateFails: when the load balancer cannot be
// created after its group was, the group is not leaked: the next sync
// uses it (no second group), and a Service deleted meanwhile has it
// deleted (Get reports it as a leftover).
func TestEmuNLBManagedGroupCreateFails(t *testing.T) {
	t.Parallel()
	for _, then := range []string{"sync again", "delete"} {
		t.Run(then, func(t *testing.T) {
			t.Parallel()
			e := managedNLB(t, nil)
			svc := emuService("nlb-half", map[string]string{nlbType: "nlb"})
			nodes := e.nodes(emuA)
			id := e.srv.InjectFault(awsemu.Fault{Service: "elasticloadbalancingv2", Action: "CreateLoadBalancer", Code: "TooManyLoadBalancers"})
			if _, err := e.r.Ensure(e.ctx(), svc, nodes); err == nil || !strings.Contains(err.Error(), "TooManyLoadBalancers") {
				t.Fatalf("Ensure = %v, want TooManyLoadBalancers", err)
			}
			g := e.nlbGroup(svc)
			e.srv.ClearFault(id)
			if then == "delete" {
				if !e.exists(svc) {
					t.Fatal("Get reports nothing while the group is left")
				}
				e.delete(svc)
				e.wantNothingLeft()
				return
			}
			e.reset()
			e.ensure(svc, nodes)
			if n := e.mutations()["ec2:CreateSecurityGroup"]; n != 0 {
				t.Errorf("second sync created %d groups", n)
			}
			wantEq(t, "NLB security groups", e.nlb(lbName(svc)).SecurityGroups, []string{g.ID})
			e.delete(svc)
			e.wantNothingLeft()
		})
	}
}

// TestEmuNLBManagedGroupOutlivesTheSetting: an NLB made under Managed mode
// keeps its group reconciled and deleted when the setting is gone.
func TestEmuNLBManagedGroupOutlivesTheSetting(t *testing.T) {
	t.Parallel()
	e := managedNLB(t, nil)
	svc := emuService("nlb-keep", map[string]string{nlbType: "nlb"})
	e.ensure(svc, e.nodes(emuA))
	g := e.nlbGroup(svc)
	e.r, e.rec, _ = newEmuReconciler(t, e.srv, Options{})
	svc.Spec.LoadBalancerSourceRanges = []string{"10.9.0.0/16"}
	e.ensure(svc, e.nodes(emuA))
	wantEq(t, "group ingress", emuRules(e.group(g.ID).Ingress, false), []string{"icmp 3-4 10.9.0.0/16", "tcp 80-80 10.9.0.0/16"})
	if rules := e.nodeRules(); !slices.Equal(rules, []string{"tcp 30080-30080 " + g.ID + " kubernetes.io/rule/nlb/client=" + lbName(svc)}) {
		t.Errorf("node rules %q, want the group let in", rules)
	}
	e.delete(svc)
	e.wantNothingLeft()
}

// TestEmuNLBManagedGroupForeign: a group with the Service's managed-group
// name but another cluster's tag, or none, is not the Service's: a new NLB
// is not created with it (the error and a Warning say what to do), and
// deletion leaves it alone with a Warning instead of waiting for it.
// Upstream tags an untagged one and adopts it; this CCM and upstream both
// create the group with its tags (TagSpecifications), so an untagged group
// of that name is not one a failed creation left.
func TestEmuNLBManagedGroupForeign(t *testing.T) {
	t.Parallel()
	svc := emuService("nlb-foreign-sg", map[string]string{nlbType: "nlb"})
	sgName := lbnames.NLBSecurityGroupName(DefaultClusterName, svc)
	t.Run("another cluster's", func(t *testing.T) {
		t.Parallel()
		e := managedNLB(t, func(f *awsemu.Fixture) {
			f.SecurityGroups = append(f.SecurityGroups, awsemu.SecurityGroup{ID: "sg-0f0f0000000000f01", Name: sgName, Description: nlbGroupDescription, VPCID: emuVPC,
				Tags: map[string]string{"kubernetes.io/cluster/other": "owned"}})
		})
		before := e.srv.Inventory()
		if _, err := e.r.Ensure(e.ctx(), svc, e.nodes(emuA)); err == nil || !strings.Contains(err.Error(), "tagged for cluster other") || !strings.Contains(err.Error(), "delete it, or tag it") {
			t.Fatalf("Ensure = %v, want the foreign group refused", err)
		}
		e.wantEvent("Warning "+ReasonForeignResource, "sg-0f0f0000000000f01", "tagged for cluster other", "not adopted")
		wantEq(t, "inventory", e.srv.Inventory(), before)
		e.reset()
		e.delete(svc)
		e.wantEvent("Warning "+ReasonForeignResource, "sg-0f0f0000000000f01", "tagged for cluster other", "not deleted")
		e.wantMutations("delete", map[string]int{})
		if e.exists(svc) {
			t.Error("Get waits for another cluster's group")
		}
	})
	t.Run("untagged", func(t *testing.T) {
		t.Parallel()
		e := managedNLB(t, func(f *awsemu.Fixture) {
			f.SecurityGroups = append(f.SecurityGroups, awsemu.SecurityGroup{ID: "sg-0f0f0000000000f02", Name: sgName, Description: nlbGroupDescription, VPCID: emuVPC})
		})
		before := e.srv.Inventory()
		if _, err := e.r.Ensure(e.ctx(), svc, e.nodes(emuA)); err == nil || !strings.Contains(err.Error(), "does not carry the tag kubernetes.io/cluster/demo=owned") {
			t.Fatalf("Ensure = %v, want the untagged group refused", err)
		}
		e.wantEvent("Warning "+ReasonForeignResource, "sg-0f0f0000000000f02", "does not carry the tag kubernetes.io/cluster/demo=owned", "not adopted")
		wantEq(t, "inventory", e.srv.Inventory(), before)
		wantEq(t, "tags", e.group("sg-0f0f0000000000f02").Tags, map[string]string(nil))
		e.reset()
		e.delete(svc)
		e.wantEvent("Warning "+ReasonForeignResource, "sg-0f0f0000000000f02", "not deleted")
		e.wantMutations("delete", map[string]int{})
		if e.exists(svc) {
			t.Error("Get waits for an untagged group")
		}
	})
}

// TestEmuNLBManagedGroupRulesWhenCreateOmitsGroups: should AWS's
// CreateLoadBalancer response not list the security groups, the first
// sync still opens the new group and lets it into node groups.
func TestEmuNLBManagedGroupRulesWhenCreateOmitsGroups(t *testing.T) {
	t.Parallel()
	e := managedNLB(t, nil)
	create := e.r.ELBv2.CreateLoadBalancer
	e.r.ELBv2.CreateLoadBalancer = func(ctx context.Context, in *elbv2.CreateLoadBalancerInput, o ...func(*elbv2.Options)) (*elbv2.CreateLoadBalancerOutput, error) {
		out, err := create(ctx, in, o...)
		if err == nil {
			for i := range out.LoadBalancers {
				out.LoadBalancers[i].SecurityGroups = nil
			}
		}
		return out, err
	}
	svc := emuService("nlb-echo", map[string]string{nlbType: "nlb"})
	e.ensure(svc, e.nodes(emuA))
	g := e.nlbGroup(svc)
	wantEq(t, "group ingress", emuRules(g.Ingress, false), []string{"icmp 3-4 0.0.0.0/0", "tcp 80-80 0.0.0.0/0"})
	wantEq(t, "node rules", e.nodeRules(), []string{"tcp 30080-30080 " + g.ID + " kubernetes.io/rule/nlb/client=" + lbName(svc)})
}

// TestEmuNLBManagedGroupWithoutNodeIngress: DisableSecurityGroupIngress
// leaves node groups alone but not the NLB's own group, which still lets
// the source ranges in; deletion removes the group.
func TestEmuNLBManagedGroupWithoutNodeIngress(t *testing.T) {
	t.Parallel()
	e := newEmu(t, emuOptions{options: Options{NLBManagedSecurityGroups: true, DisableSecurityGroupIngress: true}})
	svc := emuService("nlb-noingress", map[string]string{nlbType: "nlb"})
	e.ensure(svc, e.nodes(emuA))
	wantEq(t, "group ingress", emuRules(e.nlbGroup(svc).Ingress, false), []string{"icmp 3-4 0.0.0.0/0", "tcp 80-80 0.0.0.0/0"})
	wantEq(t, "node rules", e.nodeRules(), []string(nil))
	e.delete(svc)
	e.wantNothingLeft()
}
