package routes

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// TestCreateListDelete: routes to Nodes' instances, IPv4 and IPv6, are
// created in the cluster table, listed with their Node, and deleted.
func TestCreateListDelete(t *testing.T) {
	e := newEmu(t, emuOptions{})
	a, c := e.node(emuA), e.node(emuC)
	e.mustCreate(a, "10.244.1.0/24")
	e.mustCreate(c, "10.244.3.0/24")
	e.mustCreate(c, "fd00:10:244:3::/64")
	wantSlice(t, "table", e.routes(), []string{
		"0.0.0.0/0->igw-0demo000000000001 active", "10.0.0.0/16->local active",
		"10.244.1.0/24->" + emuA + " active", "10.244.3.0/24->" + emuC + " active", "fd00:10:244:3::/64->" + emuC + " active",
	})
	wantSlice(t, "listed", listed(e.list()), []string{"10.244.1.0/24->" + a, "10.244.3.0/24->" + c, "fd00:10:244:3::/64->" + c})

	for _, cidr := range []string{"10.244.1.0/24", "fd00:10:244:3::/64"} {
		node := a
		if strings.Contains(cidr, ":") {
			node = c
		}
		if err := e.m.Delete(t.Context(), &cloudprovider.Route{DestinationCIDR: cidr, TargetNode: typesNode(node)}); err != nil {
			t.Fatalf("Delete(%s): %v", cidr, err)
		}
	}
	wantSlice(t, "listed after deletes", listed(e.list()), []string{"10.244.3.0/24->" + c})
	wantEq(t, "DeleteRoute calls", e.srv.Calls("ec2", "DeleteRoute"), 2)
}

// TestSourceDestCheckTurnedOffOnce: the first route to an instance turns
// its check off, later ones do not ask again, and an instance whose check
// is already off is left alone.
func TestSourceDestCheckTurnedOffOnce(t *testing.T) {
	off := false
	e := newEmu(t, emuOptions{fixture: func(f *awsemu.Fixture) {
		for i := range f.Instances {
			if f.Instances[i].ID == emuC {
				f.Instances[i].SourceDestCheck = &off
			}
		}
	}})
	a, c := e.node(emuA), e.node(emuC)
	e.list()
	e.mustCreate(a, "10.244.1.0/24")
	e.mustCreate(a, "10.244.101.0/24")
	e.mustCreate(c, "10.244.3.0/24")
	wantEq(t, "ModifyInstanceAttribute calls", e.srv.Calls("ec2", "ModifyInstanceAttribute"), 1)
	in, _ := e.srv.Instance(emuA)
	wantEq(t, "A's source/destination check", in.SourceDestCheck != nil && *in.SourceDestCheck, false)

	// Someone turns it on again: once the view sees that, the next route
	// turns it off again.
	if _, err := e.admin().ModifyInstanceAttribute(t.Context(), &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(emuA),
		SourceDestCheck: &ec2types.AttributeBooleanValue{Value: aws.Bool(true)}}); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(time.Minute) // past the view's MaxAge
	e.mustCreate(a, "10.244.201.0/24")
	wantEq(t, "ModifyInstanceAttribute calls after the check came back", e.srv.Calls("ec2", "ModifyInstanceAttribute"), 3)
}

// untagPrimaryENI removes the cluster tag the demo fixture gives B's
// primary interface (as a launch template's network-interface
// TagSpecification does).
func untagPrimaryENI(f *awsemu.Fixture) {
	for i := range f.Instances {
		if f.Instances[i].ID == emuB {
			f.Instances[i].ENIs[0].Tags = nil
		}
	}
}

// TestMultiInterfaceInstance: EC2 refuses an instance target when the
// instance has several interfaces, and refuses ModifyInstanceAttribute on
// its source/destination check; the route names the primary interface,
// whose check is turned off with ModifyNetworkInterfaceAttribute (the
// other interface's stays on), and is still listed with its Node.
func TestMultiInterfaceInstance(t *testing.T) {
	e := newEmu(t, emuOptions{})
	b := e.node(emuB)
	e.list()
	e.mustCreate(b, "10.244.2.0/24")
	rt, _ := e.srv.RouteTable(emuTable)
	var got awsemu.Route
	for _, r := range rt.Routes {
		if r.DestinationCIDR == "10.244.2.0/24" {
			got = r
		}
	}
	wantEq(t, "route's interface", got.NetworkInterfaceID, emuENIB)
	checks := func() (instance bool, enis map[string]bool) {
		out, err := e.admin().DescribeInstances(t.Context(), &ec2.DescribeInstancesInput{InstanceIds: []string{emuB}})
		if err != nil {
			t.Fatal(err)
		}
		in := out.Reservations[0].Instances[0]
		enis = map[string]bool{}
		for _, ni := range in.NetworkInterfaces {
			enis[aws.ToString(ni.NetworkInterfaceId)] = aws.ToBool(ni.SourceDestCheck)
		}
		return aws.ToBool(in.SourceDestCheck), enis
	}
	on, enis := checks()
	wantEq(t, "B's source/destination check", on, false)
	wantEq(t, "primary interface's check", enis[emuENIB], false)
	wantEq(t, "second interface's check", enis["eni-0demo00000000002b"], true)
	wantEq(t, "ModifyNetworkInterfaceAttribute calls", e.srv.Calls("ec2", "ModifyNetworkInterfaceAttribute"), 1)
	wantEq(t, "ModifyInstanceAttribute calls", e.srv.Calls("ec2", "ModifyInstanceAttribute"), 0)
	wantSlice(t, "listed", listed(e.list()), []string{"10.244.2.0/24->" + b})
	// Creating it again is a no-op: it already leads to B, and the check
	// is off.
	e.mustCreate(b, "10.244.2.0/24")
	e.mustCreate(b, "10.244.102.0/24")
	wantEq(t, "CreateRoute calls", e.srv.Calls("ec2", "CreateRoute"), 2)
	wantEq(t, "ReplaceRoute calls", e.srv.Calls("ec2", "ReplaceRoute"), 0)
	wantEq(t, "ModifyNetworkInterfaceAttribute calls after more routes", e.srv.Calls("ec2", "ModifyNetworkInterfaceAttribute"), 1)

	// Someone turns it on again: once the view sees that, the next route
	// turns it off again.
	if _, err := e.admin().ModifyNetworkInterfaceAttribute(t.Context(), &ec2.ModifyNetworkInterfaceAttributeInput{NetworkInterfaceId: aws.String(emuENIB),
		SourceDestCheck: &ec2types.AttributeBooleanValue{Value: aws.Bool(true)}}); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(time.Minute) // past the view's MaxAge
	e.mustCreate(b, "10.244.202.0/24")
	wantEq(t, "ModifyNetworkInterfaceAttribute calls after the check came back", e.srv.Calls("ec2", "ModifyNetworkInterfaceAttribute"), 3)
	wantEq(t, "ModifyInstanceAttribute calls at the end", e.srv.Calls("ec2", "ModifyInstanceAttribute"), 0)
}

// TestMultiInterfaceCheckAlreadyOff: no call when the primary interface's
// check is off already.
func TestMultiInterfaceCheckAlreadyOff(t *testing.T) {
	off := false
	e := newEmu(t, emuOptions{fixture: func(f *awsemu.Fixture) {
		for i := range f.Instances {
			if f.Instances[i].ID == emuB {
				f.Instances[i].ENIs[0].SourceDestCheck = &off
			}
		}
	}})
	b := e.node(emuB)
	e.list()
	e.mustCreate(b, "10.244.2.0/24")
	wantEq(t, "ModifyNetworkInterfaceAttribute calls", e.srv.Calls("ec2", "ModifyNetworkInterfaceAttribute"), 0)
	wantEq(t, "ModifyInstanceAttribute calls", e.srv.Calls("ec2", "ModifyInstanceAttribute"), 0)
}

// TestMultiInterfaceUntaggedUnderLeastPrivilege: the least-privilege
// policy denies the change on an interface without the cluster tag; Create
// fails with the fix, and makes no route (it would carry no traffic).
func TestMultiInterfaceUntaggedUnderLeastPrivilege(t *testing.T) {
	e := newEmu(t, emuOptions{fixture: untagPrimaryENI})
	b := e.node(emuB)
	e.list()
	err := e.create(b, "10.244.2.0/24")
	if err == nil || !strings.Contains(err.Error(), "UnauthorizedOperation") ||
		!strings.Contains(err.Error(), "fix: tag the interface "+clustertag.Key(emuCluster)+"=owned") || !strings.Contains(err.Error(), emuENIB) {
		t.Fatalf("Create = %v, want UnauthorizedOperation on %s with the fix", err, emuENIB)
	}
	wantEq(t, "CreateRoute calls", e.srv.Calls("ec2", "CreateRoute"), 0)
}

// foreignRoutes are routes the controller must never touch: into the
// cluster CIDRs to a gateway, to an instance outside the cluster, a
// blackholed gateway route; and to a cluster instance outside the cluster
// CIDRs.
var foreignRoutes = []awsemu.Route{
	{DestinationCIDR: "10.244.50.0/24", GatewayID: "vgw-0f0f0f0f0f0f0f0f1"},
	{DestinationCIDR: "10.244.51.0/24", InstanceID: emuForeign},
	{DestinationCIDR: "10.244.52.0/24", GatewayID: "igw-0f0f0f0f0f0f0f0f2", State: awsemu.RouteStateBlackhole},
	{DestinationCIDR: "192.168.5.0/24", InstanceID: emuA},
}

// TestForeignRoutesNeverTouched: foreign routes are not listed, Delete
// refuses them, and a sync that creates and deletes the controller's own
// routes leaves them as they were.
func TestForeignRoutesNeverTouched(t *testing.T) {
	e := newEmu(t, emuOptions{fixture: func(f *awsemu.Fixture) {
		f.RouteTables[0].Routes = append(f.RouteTables[0].Routes, foreignRoutes...)
	}})
	a := e.node(emuA)
	before := e.routes()
	wantSlice(t, "listed", listed(e.list()), nil)
	for _, r := range foreignRoutes {
		err := e.m.Delete(t.Context(), &cloudprovider.Route{DestinationCIDR: r.DestinationCIDR, TargetNode: typesNode(a)})
		if err == nil || !strings.Contains(err.Error(), "not a route of this controller") {
			t.Errorf("Delete(%s) = %v, want a refusal", r.DestinationCIDR, err)
		}
	}
	e.mustCreate(a, "10.244.1.0/24")
	if err := e.m.Delete(t.Context(), &cloudprovider.Route{DestinationCIDR: "10.244.1.0/24", TargetNode: typesNode(a)}); err != nil {
		t.Fatal(err)
	}
	wantSlice(t, "table after a create and a delete", e.routes(), before)
	wantEq(t, "DeleteRoute calls", e.srv.Calls("ec2", "DeleteRoute"), 1)
	wantEq(t, "ReplaceRoute calls", e.srv.Calls("ec2", "ReplaceRoute"), 0)
}

// TestBlackholeListedAndReplaced: a route whose instance terminated is
// listed as blackhole; a Node given the same pod CIDR replaces it in
// place, and the route controller's concurrent delete of the blackhole
// then leaves the replaced route alone. A blackhole nobody needs is
// deleted.
func TestBlackholeListedAndReplaced(t *testing.T) {
	e := newEmu(t, emuOptions{})
	a, c := e.node(emuA), e.node(emuC)
	e.list()
	e.mustCreate(a, "10.244.1.0/24")
	e.mustCreate(a, "10.244.11.0/24")
	if err := e.srv.SetInstanceState(emuA, "terminated"); err != nil {
		t.Fatal(err)
	}
	e.nodes.remove(a)
	rs := e.list()
	wantSlice(t, "listed", listed(rs), []string{"10.244.1.0/24 blackhole", "10.244.11.0/24 blackhole"})

	e.mustCreate(c, "10.244.1.0/24")
	wantEq(t, "ReplaceRoute calls", e.srv.Calls("ec2", "ReplaceRoute"), 1)
	wantEq(t, "CreateRoute calls", e.srv.Calls("ec2", "CreateRoute"), 2)
	for _, r := range rs {
		if err := e.m.Delete(t.Context(), r); err != nil {
			t.Fatalf("Delete(%s): %v", r.DestinationCIDR, err)
		}
	}
	wantEq(t, "DeleteRoute calls", e.srv.Calls("ec2", "DeleteRoute"), 1)
	wantSlice(t, "listed after the sync", listed(e.list()), []string{"10.244.1.0/24->" + c})
}

// TestForeignTargetAtPodCIDRReplaced: a route to a foreign target at
// exactly a Node's pod CIDR (the cluster allocated that range to the Node)
// is replaced rather than failing with RouteAlreadyExists.
func TestForeignTargetAtPodCIDRReplaced(t *testing.T) {
	e := newEmu(t, emuOptions{fixture: func(f *awsemu.Fixture) {
		f.RouteTables[0].Routes = append(f.RouteTables[0].Routes, awsemu.Route{DestinationCIDR: "10.244.7.0/24", InstanceID: emuForeign})
	}})
	a := e.node(emuA)
	wantSlice(t, "listed", listed(e.list()), nil)
	e.mustCreate(a, "10.244.7.0/24")
	wantEq(t, "ReplaceRoute calls", e.srv.Calls("ec2", "ReplaceRoute"), 1)
	wantSlice(t, "listed", listed(e.list()), []string{"10.244.7.0/24->" + a})
}

// TestCreateRefusesWhatItCouldNotOwn: a pod CIDR outside the cluster CIDRs
// would give a route the controller never lists again; a terminated
// instance gets no route.
func TestCreateRefusesWhatItCouldNotOwn(t *testing.T) {
	e := newEmu(t, emuOptions{})
	a, gone := e.node(emuA), e.node(emuTerminated)
	e.list()
	for _, tc := range []struct{ node, cidr, want string }{
		{a, "172.16.1.0/24", "outside the cluster CIDRs"},
		{gone, "10.244.5.0/24", "is terminated"},
		{"nosuchnode", "10.244.6.0/24", "not found"},
	} {
		err := e.create(tc.node, tc.cidr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Create(%s, %s) = %v, want an error with %q", tc.node, tc.cidr, err, tc.want)
		}
	}
	wantEq(t, "CreateRoute calls", e.srv.Calls("ec2", "CreateRoute"), 0)
	wantEq(t, "ModifyInstanceAttribute calls", e.srv.Calls("ec2", "ModifyInstanceAttribute"), 0)
}

// TestSteadySyncCalls: once the routes exist, a sync (List) costs one
// DescribeRouteTables and no DescribeInstances, however stale the view.
func TestSteadySyncCalls(t *testing.T) {
	e := newEmu(t, emuOptions{})
	nodes := []string{e.node(emuA), e.node(emuB), e.node(emuC)}
	e.list()
	for i, n := range nodes {
		e.mustCreate(n, fmt.Sprintf("10.244.%d.0/24", i+1))
	}
	e.srv.ResetCalls()
	e.clock.Step(time.Hour)
	for range 3 {
		if got := len(e.list()); got != 3 {
			t.Fatalf("listed %d routes, want 3", got)
		}
	}
	wantEq(t, "DescribeRouteTables calls", e.srv.Calls("ec2", "DescribeRouteTables"), 3)
	wantEq(t, "DescribeInstances calls", e.srv.Calls("ec2", "DescribeInstances"), 0)
}

func typesNode(name string) types.NodeName { return types.NodeName(name) }
