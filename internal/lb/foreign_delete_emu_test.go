package lb

import (
	"maps"
	"testing"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// TestEmuDeleteLeavesForeign: at the Service's deletion, a load balancer
// or a k8s-elb-<name> security group with the Service's names but tagged
// for another cluster or Service is neither deleted nor waited for: Delete
// succeeds, says on the Service what it left and why, and changes nothing
// of it (not even the rules that reference a foreign group).
func TestEmuDeleteLeavesForeign(t *testing.T) {
	t.Parallel()
	const foreignSG = "sg-0f0f0000000000001"
	otherCluster := map[string]string{"kubernetes.io/cluster/other": "owned"}
	tests := []struct {
		name string
		nlb  bool
		// add puts the foreign resource, named for the Service's load
		// balancer name, into the fixture.
		add   func(f *awsemu.Fixture, lbName string, tags map[string]string)
		parts []string
	}{
		{
			name: "Classic load balancer",
			add: func(f *awsemu.Fixture, name string, tags map[string]string) {
				f.LoadBalancers = append(f.LoadBalancers, awsemu.LoadBalancer{Name: name, Subnets: []string{emuSubnetA},
					Listeners: []awsemu.LBListener{{Protocol: "TCP", Port: 80, InstancePort: 31000}}, Tags: tags})
			},
			parts: []string{"Classic load balancer"},
		},
		{
			name: "network load balancer", nlb: true,
			add: func(f *awsemu.Fixture, name string, tags map[string]string) {
				f.LoadBalancers = append(f.LoadBalancers, awsemu.LoadBalancer{Name: name, Type: awsemu.LBTypeNetwork, Subnets: []string{emuSubnetA, emuSubnetB},
					Listeners:    []awsemu.LBListener{{Protocol: "TCP", Port: 80, TargetGroup: "theirs"}},
					TargetGroups: []awsemu.TargetGroup{{Name: "theirs", Port: 31000, Tags: tags}}, Tags: tags})
			},
			parts: []string{"load balancer"},
		},
		{
			name: "managed security group",
			add: func(f *awsemu.Fixture, name string, tags map[string]string) {
				f.SecurityGroups = append(f.SecurityGroups, awsemu.SecurityGroup{ID: foreignSG, Name: "k8s-elb-" + name, VPCID: emuVPC, Tags: tags})
				// A node group of theirs lets their load balancer in.
				for i := range f.SecurityGroups {
					if f.SecurityGroups[i].ID == emuNodeSG {
						f.SecurityGroups[i].Ingress = append(f.SecurityGroups[i].Ingress, awsemu.Permission{Protocol: "-1", GroupIDs: []string{foreignSG}})
					}
				}
			},
			parts: []string{"security group " + foreignSG},
		},
	}
	owners := []struct {
		name string
		tags map[string]string
		why  string
	}{
		{"another cluster", otherCluster, "tagged for cluster other, not demo"},
		{"another Service", map[string]string{"kubernetes.io/cluster/demo": "owned", "kubernetes.io/service-name": "shop/other"}, "tagged for Service shop/other, not default/foreign"},
	}
	for _, tc := range tests {
		for _, owner := range owners {
			t.Run(tc.name+"/"+owner.name, func(t *testing.T) {
				t.Parallel()
				ann := map[string]string{}
				if tc.nlb {
					ann[nlbType] = "nlb"
				}
				svc := emuService("foreign", ann)
				e := newEmu(t, emuOptions{fixture: func(f *awsemu.Fixture) { tc.add(f, lbName(emuService("foreign", nil)), maps.Clone(owner.tags)) }})
				before, sgs := e.srv.Inventory(), e.srv.SecurityGroups()
				e.reset()
				e.delete(svc)
				e.wantEvent("Warning "+ReasonForeignResource, append(tc.parts, lbName(svc), owner.why, "not deleted")...)
				e.wantMutations("Delete", map[string]int{})
				wantEq(t, "inventory after Delete", e.srv.Inventory(), before)
				wantEq(t, "security groups after Delete", e.srv.SecurityGroups(), sgs)
				if tc.name == "managed security group" && e.exists(svc) {
					t.Error("Get reports another's security group as the Service's load balancer")
				}
			})
		}
	}
}
