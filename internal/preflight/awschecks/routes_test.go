package awschecks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/routes"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

const demoRTB = "rtb-0demo000000000001" // the demo VPC's main table, tagged for cluster demo

func TestRouteTables(t *testing.T) {
	untag := func(f *awsemu.Fixture) { delete(f.RouteTables[0].Tags, "kubernetes.io/cluster/demo") }
	otherVPC := awsemu.RouteTable{ID: "rtb-0other00000000001", VPCID: "vpc-0other00000000001", Tags: map[string]string{"kubernetes.io/cluster/demo": "shared"}}
	cases := []struct {
		name    string
		fixture func(*awsemu.Fixture)
		routes  CloudRoutes
		cc      *cloudconfig.Global
		input   func(*Input)
		status  preflight.Status
		text    []string
		calls   int // DescribeRouteTables calls
	}{
		{name: "cloud routes off", routes: CloudRoutesOff, fixture: untag, status: pass,
			text: []string{"cloud routes are off: the CCM needs no route table"}, calls: 0},
		{name: "one tagged table", routes: CloudRoutesOn, status: pass,
			text: []string{"route table " + demoRTB + " is the only one in the cluster's VPC " + demoVPC +
				" (from the control-plane instances) with the cluster tag kubernetes.io/cluster/demo"}, calls: 1},
		{name: "legacy tag", routes: CloudRoutesOn, status: pass,
			fixture: func(f *awsemu.Fixture) {
				untag(f)
				f.RouteTables[0].Tags["KubernetesCluster"] = "demo"
			},
			text: []string{"route table " + demoRTB + " is the only one", "with the cluster tag KubernetesCluster=demo"}, calls: 1},
		{name: "legacy tag of another cluster does not count", routes: CloudRoutesOn, status: fail,
			fixture: func(f *awsemu.Fixture) {
				untag(f)
				f.RouteTables[0].Tags["KubernetesCluster"] = "old"
			},
			text: []string{"no route table in VPC " + demoVPC + " carries the cluster tag"}, calls: 2},
		{name: "untagged, cloud routes on: the CCM's error, and the fix names the subnets' main table", routes: CloudRoutesOn, fixture: untag, status: fail,
			text: []string{`the CCM's route controller would fail every sync with "` + ccmSays(routes.NoTaggedTable, "") + `"`,
				"aws ec2 create-tags --resources " + demoRTB + " --tags Key=kubernetes.io/cluster/demo,Value=owned"}, calls: 2},
		{name: "only a table of another VPC is tagged: the CCM does not look there", routes: CloudRoutesOn, status: fail,
			fixture: func(f *awsemu.Fixture) {
				untag(f)
				f.VPCs = append(f.VPCs, awsemu.VPC{ID: otherVPC.VPCID, CIDR: "10.9.0.0/16"})
				f.RouteTables = append(f.RouteTables, otherVPC)
			},
			text: []string{ccmSays(routes.NoTaggedTable, ""), "aws ec2 create-tags --resources " + demoRTB}, calls: 2},
		{name: "the cloud config's VPC is where the CCM looks", routes: CloudRoutesOn, status: pass, cc: &cloudconfig.Global{VPC: otherVPC.VPCID},
			fixture: func(f *awsemu.Fixture) {
				untag(f)
				f.VPCs = append(f.VPCs, awsemu.VPC{ID: otherVPC.VPCID, CIDR: "10.9.0.0/16"})
				f.RouteTables = append(f.RouteTables, otherVPC)
			},
			text: []string{"route table rtb-0other00000000001 is the only one in the cluster's VPC vpc-0other00000000001 (from the cloud config)"}, calls: 1},
		{name: "untagged, cloud routes unknown: a warning that says when it matters", fixture: untag, status: warn,
			text: []string{"pass --cloud-routes=on|off"}, calls: 2},
		{name: "untagged, a subnet with its own table", routes: CloudRoutesOn, status: fail,
			fixture: func(f *awsemu.Fixture) {
				untag(f)
				f.RouteTables[0].SubnetIDs = f.RouteTables[0].SubnetIDs[:2]
				f.RouteTables = append(f.RouteTables, awsemu.RouteTable{ID: "rtb-0demo00000000000c", VPCID: demoVPC, SubnetIDs: []string{subnetC}})
			},
			text: []string{"the cluster's subnets use 2 route tables (" + demoRTB + ", rtb-0demo00000000000c) but the route controller manages one"}, calls: 2},
		{name: "a tagged table in another VPC of the region does not count", routes: CloudRoutesOn, status: pass,
			fixture: func(f *awsemu.Fixture) {
				f.VPCs = append(f.VPCs, awsemu.VPC{ID: otherVPC.VPCID, CIDR: "10.9.0.0/16"})
				f.RouteTables = append(f.RouteTables, otherVPC)
			},
			text: []string{"route table " + demoRTB + " is the only one in the cluster's VPC " + demoVPC}, calls: 1},
		{name: "two tagged tables in the VPC", routes: CloudRoutesOn, status: fail,
			fixture: func(f *awsemu.Fixture) {
				f.RouteTables = append(f.RouteTables, awsemu.RouteTable{ID: "rtb-0demo00000000000c", VPCID: demoVPC, Tags: map[string]string{"KubernetesCluster": "demo"}})
			},
			text: []string{ccmSays(routes.SeveralTaggedTables, "", demoRTB, "rtb-0demo00000000000c"), "set RouteTableID",
				"aws ec2 delete-tags --resources <rtb-id> --tags Key=kubernetes.io/cluster/demo, or Key=KubernetesCluster"}, calls: 1},
		{name: "no control plane known, instances in several VPCs", routes: CloudRoutesOn, status: fail,
			fixture: func(f *awsemu.Fixture) {
				f.VPCs = append(f.VPCs, awsemu.VPC{ID: otherVPC.VPCID, CIDR: "10.9.0.0/16"})
				f.Subnets = append(f.Subnets, awsemu.Subnet{ID: "subnet-0other0000000001", VPCID: otherVPC.VPCID, CIDR: "10.9.1.0/24", AvailabilityZone: "us-east-1a"})
				f.Instances = append(f.Instances, awsemu.Instance{ID: instanceID(1), Type: "t3.micro", SubnetID: "subnet-0other0000000001", PrivateIP: "10.9.1.10",
					Tags: map[string]string{"kubernetes.io/cluster/demo": "owned"}})
			},
			input: func(in *Input) {
				in.InstanceIDs, in.ControlPlaneInstanceIDs = append(in.InstanceIDs, instanceID(1)), nil
			},
			text: []string{"the cluster's instances are in 2 VPCs: " + demoVPC + ", " + otherVPC.VPCID, "set VPC in [Global] of the cloud config"}, calls: 0},
		{name: "the control plane's VPC is where the CCM looks", routes: CloudRoutesOn, status: pass,
			fixture: func(f *awsemu.Fixture) {
				f.VPCs = append(f.VPCs, awsemu.VPC{ID: otherVPC.VPCID, CIDR: "10.9.0.0/16"})
				f.Subnets = append(f.Subnets, awsemu.Subnet{ID: "subnet-0other0000000001", VPCID: otherVPC.VPCID, CIDR: "10.9.1.0/24", AvailabilityZone: "us-east-1a"})
				f.Instances = append(f.Instances, awsemu.Instance{ID: instanceID(1), Type: "t3.micro", SubnetID: "subnet-0other0000000001", PrivateIP: "10.9.1.10",
					Tags: map[string]string{"kubernetes.io/cluster/demo": "owned"}})
			},
			input: func(in *Input) { in.InstanceIDs = append(in.InstanceIDs, instanceID(1)) },
			text:  []string{"route table " + demoRTB + " is the only one in the cluster's VPC " + demoVPC + " (from the control-plane instances)"}, calls: 1},
		{name: "RouteTableID exists", routes: CloudRoutesOn, fixture: untag, cc: &cloudconfig.Global{RouteTableID: demoRTB, VPC: demoVPC}, status: pass,
			text: []string{"the cloud config's RouteTableID " + demoRTB + " is in the cluster's VPC " + demoVPC + " (from the cloud config)"}, calls: 1},
		{name: "RouteTableID missing", routes: CloudRoutesOn, cc: &cloudconfig.Global{RouteTableID: "rtb-0nothere000000001"}, status: fail,
			text: []string{ccmSays(routes.ConfiguredTableMissing, "rtb-0nothere000000001")}, calls: 1},
		{name: "RouteTableID of another VPC", routes: CloudRoutesOn, cc: &cloudconfig.Global{RouteTableID: "rtb-0other00000000001", VPC: demoVPC},
			fixture: func(f *awsemu.Fixture) {
				f.VPCs = append(f.VPCs, awsemu.VPC{ID: otherVPC.VPCID, CIDR: "10.9.0.0/16"})
				f.RouteTables = append(f.RouteTables, otherVPC)
			},
			status: fail, text: []string{"route table rtb-0other00000000001 (RouteTableID in the cloud config) is in VPC vpc-0other00000000001, not in the cluster's VPC " + demoVPC,
				"set RouteTableID in [Global] of the cloud config to a route table of VPC " + demoVPC}, calls: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, tc.fixture, true)
			in := e.baseInput()
			in.CloudRoutes = tc.routes
			if tc.cc != nil {
				in.CloudConfig = &cloudconfig.Config{Global: *tc.cc}
			}
			if tc.input != nil {
				tc.input(&in)
			}
			f := run(t, in)[IDRouteTables]
			if f.Status != tc.status {
				t.Errorf("status = %s, want %s\n  message: %s\n  fix: %s", f.Status, tc.status, f.Message, f.Remediation)
			}
			for _, s := range tc.text {
				if !strings.Contains(f.Message+"\n"+f.Remediation, s) {
					t.Errorf("%q not in\n  message: %s\n  fix: %s", s, f.Message, f.Remediation)
				}
			}
			if got := e.srv.CallCounts()["ec2:DescribeRouteTables"]; got != tc.calls {
				t.Errorf("DescribeRouteTables calls = %d, want %d", got, tc.calls)
			}
		})
	}
}

// ccmSays is the first line of the error the CCM's routes give for the
// demo cluster in the demo VPC: what preflight must quote.
func ccmSays(p routes.TableProblem, routeTableID string, tables ...string) string {
	e := &routes.TableError{Problem: p, Env: routes.Env{VPCID: demoVPC, ClusterID: "demo", RouteTableID: routeTableID}}
	for _, id := range tables {
		e.Tables = append(e.Tables, ec2types.RouteTable{RouteTableId: aws.String(id), VpcId: aws.String(demoVPC)})
	}
	said, _, _ := strings.Cut(e.Error(), "\n")
	return said
}

// podCIDRs returns n Nodes' pod CIDRs 10.244.<i>.0/24 (none for the
// Nodes from without on).
func podCIDRs(n, without int) [][]string {
	out := make([][]string, n)
	for i := range n {
		out[i] = []string{}
		if i < without {
			out[i] = []string{fmt.Sprintf("10.244.%d.0/24", i)}
		}
	}
	return out
}

// TestRouteQuota checks the count of routes the Nodes will need against
// EC2's default quota of 50 per table: the table of the demo holds the
// local route (not counted) and 0.0.0.0/0 (counted).
func TestRouteQuota(t *testing.T) {
	withRoutes := func(cidrs ...string) func(*awsemu.Fixture) {
		return func(f *awsemu.Fixture) {
			for _, c := range cidrs {
				f.RouteTables[0].Routes = append(f.RouteTables[0].Routes, awsemu.Route{DestinationCIDR: c, GatewayID: "igw-0demo000000000001"})
			}
		}
	}
	cases := []struct {
		name    string
		fixture func(*awsemu.Fixture)
		nodes   [][]string
		cc      *cloudconfig.Global
		status  preflight.Status
		text    []string
	}{
		{name: "node mode: not counted", nodes: nil, status: pass,
			text: []string{"with the cluster tag kubernetes.io/cluster/demo"}},
		{name: "small cluster", nodes: podCIDRs(3, 3), status: pass,
			text: []string{"it will hold 4 routes of EC2's default quota of 50: 3 for the pod CIDRs of the cluster's 3 Nodes and 1 other routes"}},
		{name: "a Node's existing route is not counted twice", nodes: podCIDRs(3, 3), fixture: withRoutes("10.244.0.0/24", "192.168.0.0/16"), status: pass,
			text: []string{"it will hold 5 routes", "3 for the pod CIDRs of the cluster's 3 Nodes and 2 other routes"}},
		{name: "Nodes without pod CIDRs yet count, dual-stack Nodes twice", status: pass,
			nodes: [][]string{{}, {"10.244.1.0/24", "fd00:10:244:1::/64"}},
			text:  []string{"it will hold 4 routes", "3 for the pod CIDRs of the cluster's 2 Nodes"}},
		{name: "at the margin", nodes: podCIDRs(39, 20), status: pass, text: []string{"it will hold 40 routes"}},
		{name: "close to the quota", nodes: podCIDRs(40, 40), status: warn,
			text: []string{"route table " + demoRTB + " will hold 41 routes of EC2's default quota of 50 routes per route table",
				"9 more Nodes fill it", "--quota-code L-93826ACB", "at most 1000", "--configure-cloud-routes=false"}},
		{name: "past the quota", nodes: podCIDRs(48, 48), fixture: withRoutes("192.168.0.0/16", "192.168.1.0/24", "192.168.2.0/24"), status: warn,
			text: []string{"will need 52 routes, more than EC2's default quota of 50", "48 for the pod CIDRs of the cluster's 48 Nodes and 4 other routes",
				"RouteLimitExceeded for 2 of them"}},
		{name: "RouteTableID past the quota", nodes: podCIDRs(60, 60), cc: &cloudconfig.Global{RouteTableID: demoRTB}, status: warn,
			text: []string{"will need 61 routes"}},
		{name: "RouteTableID small cluster", nodes: podCIDRs(2, 2), cc: &cloudconfig.Global{RouteTableID: demoRTB}, status: pass,
			text: []string{"RouteTableID " + demoRTB + " is in the cluster's VPC " + demoVPC + " (from the control-plane instances); it will hold 3 routes"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, tc.fixture, true)
			in := e.baseInput()
			in.CloudRoutes, in.NodePodCIDRs = CloudRoutesOn, tc.nodes
			if tc.cc != nil {
				in.CloudConfig = &cloudconfig.Config{Global: *tc.cc}
			}
			f := run(t, in)[IDRouteTables]
			if f.Status != tc.status {
				t.Errorf("status = %s, want %s\n  message: %s\n  fix: %s", f.Status, tc.status, f.Message, f.Remediation)
			}
			for _, s := range tc.text {
				if !strings.Contains(f.Message+"\n"+f.Remediation, s) {
					t.Errorf("%q not in\n  message: %s\n  fix: %s", s, f.Message, f.Remediation)
				}
			}
			if tc.nodes == nil && strings.Contains(f.Message, "quota") {
				t.Errorf("node mode counted routes: %s", f.Message)
			}
			if got := e.srv.CallCounts()["ec2:DescribeRouteTables"]; got != 1 {
				t.Errorf("DescribeRouteTables calls = %d, want 1: the count reads the table already described", got)
			}
		})
	}
}

// TestRouteQuotaCountsAsTheCCM: the quota check leaves out what the CCM's
// routes leave out when they count a table (routes.QuotaCounted): the
// VPC-local route and propagated routes, which have a quota of their own.
func TestRouteQuotaCountsAsTheCCM(t *testing.T) {
	route := func(dest, gateway string, origin ec2types.RouteOrigin) ec2types.Route {
		return ec2types.Route{DestinationCidrBlock: aws.String(dest), GatewayId: aws.String(gateway), Origin: origin}
	}
	table := ec2types.RouteTable{RouteTableId: aws.String(demoRTB), Routes: []ec2types.Route{
		route("10.0.0.0/16", "local", ec2types.RouteOriginCreateRouteTable),
		route("0.0.0.0/0", "igw-0demo000000000001", ec2types.RouteOriginCreateRoute),
		route("172.16.0.0/12", "vgw-0demo000000000001", ec2types.RouteOriginEnableVgwRoutePropagation),
		route("192.168.0.0/16", "vgw-0demo000000000001", ec2types.RouteOriginEnableVgwRoutePropagation),
	}}
	r := &runner{in: Input{NodePodCIDRs: podCIDRs(2, 2)}}
	_, note, ok := r.routeQuota(table)
	if !ok {
		t.Fatalf("routeQuota warned")
	}
	want := "it will hold 3 routes of EC2's default quota of 50: 2 for the pod CIDRs of the cluster's 2 Nodes and 1 other routes already in it " +
		"(the VPC-local route and propagated routes not counted)"
	if !strings.Contains(note, want) {
		t.Errorf("note = %q, want %q", note, want)
	}
}
