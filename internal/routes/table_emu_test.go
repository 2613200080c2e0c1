package routes

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

func deleteInput(table, cidr string) *ec2.DeleteRouteInput {
	return &ec2.DeleteRouteInput{RouteTableId: aws.String(table), DestinationCidrBlock: aws.String(cidr)}
}

// TestTableDiscovery: the one cluster-tagged table of the VPC (either tag
// form), or RouteTableID; everything else is an error naming the fix. Each
// listing is one DescribeRouteTables call.
func TestTableDiscovery(t *testing.T) {
	const other = "rtb-0demo000000000002"
	const otherVPC = "vpc-0other00000000001"
	addTable := func(id, vpc string, tags map[string]string) func(*awsemu.Fixture) {
		return func(f *awsemu.Fixture) {
			f.RouteTables = append(f.RouteTables, awsemu.RouteTable{ID: id, VPCID: vpc, Tags: tags})
		}
	}
	untagFirst := func(f *awsemu.Fixture) { f.RouteTables[0].Tags = map[string]string{"Name": "demo"} }
	withOtherVPC := func(f *awsemu.Fixture) {
		f.VPCs = append(f.VPCs, awsemu.VPC{ID: otherVPC, CIDR: "10.9.0.0/16"})
	}
	for _, tc := range []struct {
		name      string
		fixture   []func(*awsemu.Fixture)
		tableID   string
		wantTable string
		wantErr   []string
		problem   TableProblem
	}{
		{name: "tagged", wantTable: emuTable},
		{name: "legacy tag", fixture: []func(*awsemu.Fixture){untagFirst, addTable(other, emuVPC, map[string]string{"KubernetesCluster": "demo"})},
			wantTable: other},
		{name: "legacy tag of another cluster", fixture: []func(*awsemu.Fixture){untagFirst, addTable(other, emuVPC, map[string]string{"KubernetesCluster": "other"})},
			wantErr: []string{"no route table in VPC " + emuVPC, "kubernetes.io/cluster/demo=owned", "RouteTableID"}, problem: NoTaggedTable},
		{name: "none tagged", fixture: []func(*awsemu.Fixture){untagFirst},
			wantErr: []string{"no route table in VPC " + emuVPC, "carries the cluster tag kubernetes.io/cluster/demo", "fix: tag the route table"}, problem: NoTaggedTable},
		{name: "two tagged", fixture: []func(*awsemu.Fixture){addTable(other, emuVPC, map[string]string{"kubernetes.io/cluster/demo": "shared"})},
			wantErr: []string{"route tables " + emuTable + ", " + other, "exactly one", "remove the cluster tag from all but one"}, problem: SeveralTaggedTables},
		{name: "tagged table of another VPC ignored", fixture: []func(*awsemu.Fixture){withOtherVPC, addTable(other, otherVPC, map[string]string{"kubernetes.io/cluster/demo": "owned"})},
			wantTable: emuTable},
		{name: "RouteTableID names an untagged table", fixture: []func(*awsemu.Fixture){addTable(other, emuVPC, nil)}, tableID: other, wantTable: other},
		{name: "RouteTableID does not exist", tableID: "rtb-0000000000000dead",
			wantErr: []string{"route table rtb-0000000000000dead (RouteTableID in the cloud config) does not exist"}, problem: ConfiguredTableMissing},
		{name: "RouteTableID in another VPC", fixture: []func(*awsemu.Fixture){withOtherVPC, addTable(other, otherVPC, nil)}, tableID: other,
			wantErr: []string{"is in VPC " + otherVPC + ", not in the cluster's VPC " + emuVPC}, problem: ConfiguredTableElsewhere},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEmu(t, emuOptions{
				fixture: func(f *awsemu.Fixture) {
					for _, fn := range tc.fixture {
						fn(f)
					}
				},
				env: func(env *Env) { env.RouteTableID = tc.tableID },
			})
			_, err := e.m.List(t.Context(), "kubernetes")
			wantEq(t, "DescribeRouteTables calls", e.srv.Calls("ec2", "DescribeRouteTables"), 1)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatal("List succeeded")
				}
				// Preflight branches on the problem (routes.FindTable).
				if te := (*TableError)(nil); !errors.As(err, &te) || te.Problem != tc.problem {
					t.Errorf("error %v is not a *TableError with problem %d", err, tc.problem)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantEq(t, "table", e.m.last.id, tc.wantTable)
		})
	}
}

// TestLegacyTaggedTableUnderLeastPrivilege: a route table identified by the
// legacy tag KubernetesCluster=<id> alone is found, and the least-privilege
// policy of iam/ lets the routes create, replace and delete routes in it
// (the in-tree provider accepted that tag). A table named by RouteTableID
// whose legacy tag names another cluster stays out of reach.
func TestLegacyTaggedTableUnderLeastPrivilege(t *testing.T) {
	legacyOnly := func(cluster string) func(*awsemu.Fixture) {
		return func(f *awsemu.Fixture) {
			f.RouteTables[0].Tags = map[string]string{"Name": "demo", "KubernetesCluster": cluster}
			f.RouteTables[0].Routes = append(f.RouteTables[0].Routes, awsemu.Route{DestinationCIDR: "10.244.2.0/24", GatewayID: "igw-0demo000000000001"})
		}
	}
	t.Run("legacy tag of this cluster", func(t *testing.T) {
		e := newEmu(t, emuOptions{fixture: legacyOnly(emuCluster)})
		a, b := e.node(emuA), e.node(emuB)
		e.list()
		e.mustCreate(a, "10.244.1.0/24") // CreateRoute
		e.mustCreate(b, "10.244.2.0/24") // ReplaceRoute of the route to the gateway
		if err := e.m.Delete(t.Context(), &cloudprovider.Route{DestinationCIDR: "10.244.1.0/24", TargetNode: typesNode(a)}); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		wantSlice(t, "table", e.routes(), []string{
			"0.0.0.0/0->igw-0demo000000000001 active", "10.0.0.0/16->local active", "10.244.2.0/24->" + emuB + " active",
		})
		wantEq(t, "calls", fmt.Sprint(e.calls("CreateRoute", "ReplaceRoute", "DeleteRoute")), fmt.Sprint(map[string]int{"CreateRoute": 1, "ReplaceRoute": 1, "DeleteRoute": 1}))
	})
	t.Run("RouteTableID, legacy tag of another cluster", func(t *testing.T) {
		e := newEmu(t, emuOptions{fixture: legacyOnly("other"), env: func(env *Env) { env.RouteTableID = emuTable }})
		a := e.node(emuA)
		e.list()
		err := e.create(a, "10.244.1.0/24")
		if err == nil || !strings.Contains(err.Error(), "UnauthorizedOperation") {
			t.Fatalf("Create = %v, want UnauthorizedOperation", err)
		}
	})
}
