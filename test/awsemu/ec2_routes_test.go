package awsemu

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
)

const (
	demoRTB   = "rtb-0demo000000000001"
	demoNodeA = "i-0a1b2c3d4e5f60001" // one network interface, eni-0demo00000000001a
	demoNodeB = "i-0a1b2c3d4e5f60002" // two network interfaces
	demoNodeC = "i-0a1b2c3d4e5f60003" // dual-stack, one network interface
)

func createRoute(ctx context.Context, c *ec2.Client, cidr, instance string) error {
	_, err := c.CreateRoute(ctx, &ec2.CreateRouteInput{RouteTableId: aws.String(demoRTB), DestinationCidrBlock: aws.String(cidr), InstanceId: aws.String(instance)})
	return err
}

// routeTo returns the demo table's route to destination as
// DescribeRouteTables shows it (nil if there is none).
func routeTo(t *testing.T, c *ec2.Client, destination string) *ec2types.Route {
	t.Helper()
	out, err := c.DescribeRouteTables(context.Background(), &ec2.DescribeRouteTablesInput{RouteTableIds: []string{demoRTB}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.RouteTables[0].Routes {
		if aws.ToString(r.DestinationCidrBlock)+aws.ToString(r.DestinationIpv6CidrBlock) == destination {
			return &r
		}
	}
	return nil
}

// wantError checks an API error's code and message.
func wantError(t *testing.T, err error, code, message string) {
	t.Helper()
	wantCode(t, err, code)
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorMessage() != message {
		t.Errorf("message = %q, want %q", ae.ErrorMessage(), message)
	}
}

func TestCreateRouteToInstance(t *testing.T) {
	_, url := demo(t)
	c := ec2Client(t, url)
	ctx := context.Background()
	if err := createRoute(ctx, c, "10.244.1.0/24", demoNodeA); err != nil {
		t.Fatal(err)
	}
	r := routeTo(t, c, "10.244.1.0/24")
	if r == nil {
		t.Fatal("the new route is not in the table")
	}
	// EC2 records an instance target by its network interface as well.
	if aws.ToString(r.InstanceId) != demoNodeA || aws.ToString(r.NetworkInterfaceId) != "eni-0demo00000000001a" ||
		aws.ToString(r.InstanceOwnerId) != DefaultAccount || r.Origin != ec2types.RouteOriginCreateRoute || r.State != ec2types.RouteStateActive {
		t.Errorf("route = instance %q eni %q owner %q origin %q state %q", aws.ToString(r.InstanceId), aws.ToString(r.NetworkInterfaceId),
			aws.ToString(r.InstanceOwnerId), r.Origin, r.State)
	}
	if local := routeTo(t, c, "10.0.0.0/16"); local == nil || local.Origin != ec2types.RouteOriginCreateRouteTable {
		t.Errorf("local route = %+v, want origin CreateRouteTable", local)
	}

	// The filters the route controllers look the table up with.
	for _, f := range [][]string{
		{"vpc-id", "vpc-0demo000000000001"}, {"tag-key", "kubernetes.io/cluster/demo"},
		{"tag:kubernetes.io/cluster/demo", "owned"}, {"route.instance-id", demoNodeA},
		{"route.destination-cidr-block", "10.244.1.0/24"}, {"route.network-interface-id", "eni-0demo00000000001a"},
		{"route.state", "active"},
	} {
		out, err := c.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: filters(f[0], f[1])})
		if err != nil || len(out.RouteTables) != 1 || aws.ToString(out.RouteTables[0].RouteTableId) != demoRTB {
			t.Errorf("filter %s=%s: %v, %d tables", f[0], f[1], err, len(out.RouteTables))
		}
	}
	out, err := c.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: filters("route.instance-id", demoNodeC)})
	if err != nil || len(out.RouteTables) != 0 {
		t.Errorf("route.instance-id of an instance without routes: %v, %d tables", err, len(out.RouteTables))
	}
}

func TestRouteTargets(t *testing.T) {
	_, url := demo(t)
	c := ec2Client(t, url)
	ctx := context.Background()

	// A network interface target names the instance it is attached to.
	_, err := c.CreateRoute(ctx, &ec2.CreateRouteInput{RouteTableId: aws.String(demoRTB), DestinationCidrBlock: aws.String("10.244.2.0/24"),
		NetworkInterfaceId: aws.String("eni-0demo00000000002b")})
	if err != nil {
		t.Fatal(err)
	}
	if r := routeTo(t, c, "10.244.2.0/24"); aws.ToString(r.InstanceId) != demoNodeB || aws.ToString(r.NetworkInterfaceId) != "eni-0demo00000000002b" {
		t.Errorf("interface route = instance %q eni %q", aws.ToString(r.InstanceId), aws.ToString(r.NetworkInterfaceId))
	}

	// IPv6 destinations are routes of their own, deleted by the same parameter.
	_, err = c.CreateRoute(ctx, &ec2.CreateRouteInput{RouteTableId: aws.String(demoRTB), DestinationIpv6CidrBlock: aws.String("fd00:10:244:3::/64"),
		InstanceId: aws.String(demoNodeC)})
	if err != nil {
		t.Fatal(err)
	}
	if r := routeTo(t, c, "fd00:10:244:3::/64"); r == nil || r.DestinationCidrBlock != nil || aws.ToString(r.InstanceId) != demoNodeC {
		t.Errorf("IPv6 route = %+v", r)
	}
	out, err := c.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: filters("route.destination-ipv6-cidr-block", "fd00:10:244:3::/64")})
	if err != nil || len(out.RouteTables) != 1 {
		t.Errorf("route.destination-ipv6-cidr-block filter: %v, %d tables", err, len(out.RouteTables))
	}
	if _, err := c.DeleteRoute(ctx, &ec2.DeleteRouteInput{RouteTableId: aws.String(demoRTB), DestinationIpv6CidrBlock: aws.String("fd00:10:244:3::/64")}); err != nil {
		t.Fatal(err)
	}
	if r := routeTo(t, c, "fd00:10:244:3::/64"); r != nil {
		t.Errorf("deleted IPv6 route still listed: %+v", r)
	}

	// ReplaceRoute moves a route to another target.
	if err := createRoute(ctx, c, "10.244.3.0/24", demoNodeA); err != nil {
		t.Fatal(err)
	}
	_, err = c.ReplaceRoute(ctx, &ec2.ReplaceRouteInput{RouteTableId: aws.String(demoRTB), DestinationCidrBlock: aws.String("10.244.3.0/24"), InstanceId: aws.String(demoNodeC)})
	if err != nil {
		t.Fatal(err)
	}
	if r := routeTo(t, c, "10.244.3.0/24"); aws.ToString(r.InstanceId) != demoNodeC || aws.ToString(r.NetworkInterfaceId) != "eni-0a1b2c3d4e5f600030" {
		t.Errorf("replaced route = instance %q eni %q, want %s and its interface", aws.ToString(r.InstanceId), aws.ToString(r.NetworkInterfaceId), demoNodeC)
	}
}

func TestRouteErrors(t *testing.T) {
	s, url := demo(t)
	c := ec2Client(t, url)
	ctx := context.Background()
	if err := createRoute(ctx, c, "10.244.1.0/24", demoNodeA); err != nil {
		t.Fatal(err)
	}
	before, _ := s.RouteTable(demoRTB)
	create := func(table, cidr, ipv6, instance string) error {
		in := &ec2.CreateRouteInput{RouteTableId: aws.String(table), InstanceId: aws.String(instance)}
		if cidr != "" {
			in.DestinationCidrBlock = aws.String(cidr)
		}
		if ipv6 != "" {
			in.DestinationIpv6CidrBlock = aws.String(ipv6)
		}
		_, err := c.CreateRoute(ctx, in)
		return err
	}
	for _, tc := range []struct {
		name, code, message string
		call                func() error
	}{
		{"duplicate", "RouteAlreadyExists", "The route identified by 10.244.1.0/24 already exists.",
			func() error { return create(demoRTB, "10.244.1.0/24", "", demoNodeC) }},
		{"the local route's destination", "RouteAlreadyExists", "The route identified by 10.0.0.0/16 already exists.",
			func() error { return create(demoRTB, "10.0.0.0/16", "", demoNodeC) }},
		{"unknown table", "InvalidRouteTableID.NotFound", "The routeTable ID 'rtb-0nope' does not exist",
			func() error { return create("rtb-0nope", "10.244.9.0/24", "", demoNodeA) }},
		{"unknown instance", "InvalidInstanceID.NotFound", "The instance ID 'i-0nope' does not exist",
			func() error { return create(demoRTB, "10.244.9.0/24", "", "i-0nope") }},
		{"instance with two interfaces", "InvalidInstanceID",
			"There are multiple interfaces attached to instance '" + demoNodeB + "'. Please specify an interface ID for the operation instead.",
			func() error { return create(demoRTB, "10.244.9.0/24", "", demoNodeB) }},
		{"prefix too long", "InvalidParameterValue", "Value (10.244.9.0/33) for parameter destinationCidrBlock is invalid. This is not a valid CIDR block.",
			func() error { return create(demoRTB, "10.244.9.0/33", "", demoNodeA) }},
		{"host bits set", "InvalidParameterValue", "Value (10.244.9.1/24) for parameter destinationCidrBlock is invalid. This is not a valid CIDR block.",
			func() error { return create(demoRTB, "10.244.9.1/24", "", demoNodeA) }},
		{"IPv6 as destinationCidrBlock", "InvalidParameterValue", "Value (::/0) for parameter destinationCidrBlock is invalid. This is not a valid CIDR block.",
			func() error { return create(demoRTB, "::/0", "", demoNodeA) }},
		{"IPv4 as destinationIpv6CidrBlock", "InvalidParameterValue", "Value (10.0.0.0/8) for parameter destinationIpv6CidrBlock is invalid. This is not a valid CIDR block.",
			func() error { return create(demoRTB, "", "10.0.0.0/8", demoNodeA) }},
		{"no destination", "MissingParameter", "The request must contain the parameter destinationCidrBlock or destinationIpv6CidrBlock",
			func() error { return create(demoRTB, "", "", demoNodeA) }},
		{"delete a missing route", "InvalidRoute.NotFound", "no route with destination-cidr-block 10.244.9.0/24 in route table " + demoRTB,
			func() error {
				_, err := c.DeleteRoute(ctx, &ec2.DeleteRouteInput{RouteTableId: aws.String(demoRTB), DestinationCidrBlock: aws.String("10.244.9.0/24")})
				return err
			}},
		{"delete the local route", "InvalidParameterValue", "cannot remove local route 10.0.0.0/16 in route table " + demoRTB,
			func() error {
				_, err := c.DeleteRoute(ctx, &ec2.DeleteRouteInput{RouteTableId: aws.String(demoRTB), DestinationCidrBlock: aws.String("10.0.0.0/16")})
				return err
			}},
		{"replace a missing route", "InvalidParameterValue", "There is no route defined for '10.244.9.0/24' in the route table. Use CreateRoute instead.",
			func() error {
				_, err := c.ReplaceRoute(ctx, &ec2.ReplaceRouteInput{RouteTableId: aws.String(demoRTB), DestinationCidrBlock: aws.String("10.244.9.0/24"), InstanceId: aws.String(demoNodeA)})
				return err
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, tc.call(), tc.code, tc.message)
			if after, _ := s.RouteTable(demoRTB); len(after.Routes) != len(before.Routes) {
				t.Errorf("a failed call changed the table: %d routes, was %d", len(after.Routes), len(before.Routes))
			}
		})
	}
}

// TestRouteBlackhole follows what the in-tree provider and the route
// controller see when a Node's instance goes: the route turns blackhole,
// and a new route to the same destination replaces it after a delete.
func TestRouteBlackhole(t *testing.T) {
	s, url := demo(t)
	c := ec2Client(t, url)
	ctx := context.Background()
	if err := createRoute(ctx, c, "10.244.1.0/24", demoNodeA); err != nil {
		t.Fatal(err)
	}
	if err := createRoute(ctx, c, "10.244.3.0/24", demoNodeC); err != nil {
		t.Fatal(err)
	}
	if err := s.SetInstanceState(demoNodeA, "terminated"); err != nil {
		t.Fatal(err)
	}
	r := routeTo(t, c, "10.244.1.0/24")
	if r.State != ec2types.RouteStateBlackhole || aws.ToString(r.InstanceId) != demoNodeA {
		t.Errorf("route to a terminated instance: state %q instance %q, want blackhole naming the instance", r.State, aws.ToString(r.InstanceId))
	}
	if other := routeTo(t, c, "10.244.3.0/24"); other.State != ec2types.RouteStateActive {
		t.Errorf("route to a running instance: state %q", other.State)
	}
	out, err := c.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: filters("route.state", "blackhole")})
	if err != nil || len(out.RouteTables) != 1 {
		t.Errorf("route.state=blackhole: %v, %d tables", err, len(out.RouteTables))
	}

	// Gone altogether: still blackhole, by its network interface only.
	if err := s.RemoveInstance(demoNodeA); err != nil {
		t.Fatal(err)
	}
	r = routeTo(t, c, "10.244.1.0/24")
	if r.State != ec2types.RouteStateBlackhole || r.InstanceId != nil || aws.ToString(r.NetworkInterfaceId) != "eni-0demo00000000001a" {
		t.Errorf("route to a removed instance: state %q instance %v eni %q", r.State, r.InstanceId, aws.ToString(r.NetworkInterfaceId))
	}
	if got, _ := s.RouteTable(demoRTB); got.Routes[len(got.Routes)-2].State != RouteStateBlackhole {
		t.Errorf("RouteTable shows %+v, want the blackhole state", got.Routes)
	}

	// The in-tree provider's CreateRoute: delete the blackhole, create anew.
	wantCode(t, createRoute(ctx, c, "10.244.1.0/24", demoNodeC), "RouteAlreadyExists")
	if _, err := c.DeleteRoute(ctx, &ec2.DeleteRouteInput{RouteTableId: aws.String(demoRTB), DestinationCidrBlock: aws.String("10.244.1.0/24")}); err != nil {
		t.Fatal(err)
	}
	if err := createRoute(ctx, c, "10.244.1.0/24", demoNodeC); err != nil {
		t.Fatal(err)
	}
	if r := routeTo(t, c, "10.244.1.0/24"); r.State != ec2types.RouteStateActive || aws.ToString(r.InstanceId) != demoNodeC {
		t.Errorf("recreated route: state %q instance %q", r.State, aws.ToString(r.InstanceId))
	}
}

func TestRouteLimit(t *testing.T) {
	f := DemoFixture()
	f.RouteLimit = 3 // the 0.0.0.0/0 route counts, the local one does not
	s, url := start(t, f)
	c := ec2Client(t, url)
	ctx := context.Background()
	for _, cidr := range []string{"10.244.1.0/24", "10.244.2.0/24"} {
		if err := createRoute(ctx, c, cidr, demoNodeA); err != nil {
			t.Fatalf("route %s under the limit: %v", cidr, err)
		}
	}
	wantError(t, createRoute(ctx, c, "10.244.3.0/24", demoNodeA), "RouteLimitExceeded", "The maximum number of routes has been reached.")
	// A replace does not add a route: allowed at the limit.
	if _, err := c.ReplaceRoute(ctx, &ec2.ReplaceRouteInput{RouteTableId: aws.String(demoRTB), DestinationCidrBlock: aws.String("10.244.2.0/24"), InstanceId: aws.String(demoNodeC)}); err != nil {
		t.Errorf("replace at the limit: %v", err)
	}
	if _, err := c.DeleteRoute(ctx, &ec2.DeleteRouteInput{RouteTableId: aws.String(demoRTB), DestinationCidrBlock: aws.String("10.244.2.0/24")}); err != nil {
		t.Fatal(err)
	}
	if err := createRoute(ctx, c, "10.244.3.0/24", demoNodeA); err != nil {
		t.Errorf("create after a delete made room: %v", err)
	}
	// SetRouteLimit(0) restores AWS's default of 50.
	s.SetRouteLimit(0)
	if err := createRoute(ctx, c, "10.244.4.0/24", demoNodeA); err != nil {
		t.Errorf("create under the default limit: %v", err)
	}
	rt, _ := s.RouteTable(demoRTB)
	for i := len(rt.Routes) - 1; i < DefaultRouteLimit; i++ {
		cidr := "10.245." + strconv.Itoa(i) + ".0/24"
		if err := createRoute(ctx, c, cidr, demoNodeA); err != nil {
			t.Fatalf("route %d of %d: %v", i+1, DefaultRouteLimit, err)
		}
	}
	wantCode(t, createRoute(ctx, c, "10.246.0.0/24", demoNodeA), "RouteLimitExceeded")
}

func TestModifyInstanceAttributeSourceDestCheck(t *testing.T) {
	_, url := demo(t)
	c := ec2Client(t, url)
	ctx := context.Background()
	check := func(id string) (instance bool, enis []bool) {
		t.Helper()
		out, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
		if err != nil {
			t.Fatal(err)
		}
		in := out.Reservations[0].Instances[0]
		for _, e := range in.NetworkInterfaces {
			enis = append(enis, aws.ToBool(e.SourceDestCheck))
		}
		return aws.ToBool(in.SourceDestCheck), enis
	}
	if on, _ := check(demoNodeA); !on {
		t.Fatal("sourceDestCheck is off before any change; EC2's default is on")
	}
	// The SDKs' form (SourceDestCheck.Value), as both providers send it.
	if _, err := c.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(demoNodeA),
		SourceDestCheck: &ec2types.AttributeBooleanValue{Value: aws.Bool(false)}}); err != nil {
		t.Fatal(err)
	}
	if on, enis := check(demoNodeA); on || len(enis) != 1 || enis[0] {
		t.Errorf("after turning it off: instance %v, interfaces %v", on, enis)
	}
	if on, _ := check(demoNodeC); !on {
		t.Error("another instance's check changed")
	}
	// The Attribute/Value form.
	if _, err := c.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(demoNodeA),
		Attribute: ec2types.InstanceAttributeNameSourceDestCheck, Value: aws.String("true")}); err != nil {
		t.Fatal(err)
	}
	if on, _ := check(demoNodeA); !on {
		t.Error("Attribute=sourceDestCheck Value=true did not turn it back on")
	}
	_, err := c.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String("i-0nope"),
		SourceDestCheck: &ec2types.AttributeBooleanValue{Value: aws.Bool(false)}})
	wantError(t, err, "InvalidInstanceID.NotFound", "The instance ID 'i-0nope' does not exist")
	_, err = c.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(demoNodeA),
		InstanceType: &ec2types.AttributeValue{Value: aws.String("m5.xlarge")}})
	wantCode(t, err, "InvalidParameterValue")
}

// TestRoutesUnderLeastPrivilege runs the route calls under the generated
// least-privilege policy: allowed on the cluster-tagged table and
// instances, denied on an untagged table (a RouteTableID the operator did
// not tag) and an untagged instance.
func TestRoutesUnderLeastPrivilege(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "iam", "ccm-policy-least-privilege.json"))
	if err != nil {
		t.Fatal(err)
	}
	policy := strings.ReplaceAll(string(raw), "CLUSTER_ID", "demo")
	s, url := demo(t)
	if err := s.AddRouteTable(RouteTable{ID: "rtb-0untagged00000001", VPCID: "vpc-0demo000000000001"}); err != nil {
		t.Fatal(err)
	}
	untagged := Instance{ID: "i-0untagged000000001", SubnetID: "subnet-0demo00000000000a", PrivateIP: "10.0.1.99"}
	if err := s.AddInstance(untagged); err != nil {
		t.Fatal(err)
	}
	if err := s.AddPrincipal(Principal{AccessKeyID: "AKIDEXAMPLE", Policies: []string{policy, "{\"Version\":\"2012-10-17\",\"Statement\":[" + decodeOK + "]}"}}); err != nil {
		t.Fatal(err)
	}
	c := ec2Client(t, url)
	ctx := context.Background()
	if err := createRoute(ctx, c, "10.244.1.0/24", demoNodeA); err != nil {
		t.Errorf("CreateRoute on the cluster's table: %v", err)
	}
	if _, err := c.ReplaceRoute(ctx, &ec2.ReplaceRouteInput{RouteTableId: aws.String(demoRTB), DestinationCidrBlock: aws.String("10.244.1.0/24"), InstanceId: aws.String(demoNodeC)}); err != nil {
		t.Errorf("ReplaceRoute on the cluster's table: %v", err)
	}
	if _, err := c.DeleteRoute(ctx, &ec2.DeleteRouteInput{RouteTableId: aws.String(demoRTB), DestinationCidrBlock: aws.String("10.244.1.0/24")}); err != nil {
		t.Errorf("DeleteRoute on the cluster's table: %v", err)
	}
	if _, err := c.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(demoNodeA),
		SourceDestCheck: &ec2types.AttributeBooleanValue{Value: aws.Bool(false)}}); err != nil {
		t.Errorf("ModifyInstanceAttribute on a cluster instance: %v", err)
	}

	_, err = c.CreateRoute(ctx, &ec2.CreateRouteInput{RouteTableId: aws.String("rtb-0untagged00000001"), DestinationCidrBlock: aws.String("10.244.1.0/24"), InstanceId: aws.String(demoNodeA)})
	if m := decoded(t, url, err); m.Context.Action != "ec2:CreateRoute" || m.Context.Resource != "arn:aws:ec2:us-east-1:123456789012:route-table/rtb-0untagged00000001" {
		t.Errorf("denied CreateRoute names %s on %s", m.Context.Action, m.Context.Resource)
	}
	_, err = c.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(untagged.ID),
		SourceDestCheck: &ec2types.AttributeBooleanValue{Value: aws.Bool(false)}})
	if m := decoded(t, url, err); m.Context.Action != "ec2:ModifyInstanceAttribute" || m.Context.Resource != "arn:aws:ec2:us-east-1:123456789012:instance/"+untagged.ID {
		t.Errorf("denied ModifyInstanceAttribute names %s on %s", m.Context.Action, m.Context.Resource)
	}
	if rt, _ := s.RouteTable("rtb-0untagged00000001"); len(rt.Routes) != 1 { // the local route
		t.Errorf("a denied CreateRoute changed the table: %+v", rt.Routes)
	}
}

func TestFixtureRoutesValidated(t *testing.T) {
	f := DemoFixture()
	f.RouteTables[0].Routes = append(f.RouteTables[0].Routes,
		Route{DestinationCIDR: "10.244.0.1/24", GatewayID: "igw-0demo000000000001"},
		Route{DestinationCIDR: "10.244.1.0/24", DestinationIPv6CIDR: "fd00::/64", GatewayID: "igw-0demo000000000001"},
		Route{DestinationCIDR: "0.0.0.0/0", GatewayID: "igw-0demo000000000001"},
		Route{DestinationCIDR: "10.244.2.0/24", GatewayID: "igw-0demo000000000001", State: "up"})
	f.RouteLimit = -1
	err := f.Validate()
	for _, want := range []string{"destinationCidr \"10.244.0.1/24\"", "exactly one of destinationCidr and destinationIpv6Cidr",
		"duplicate destination 0.0.0.0/0", "state \"up\"", "routeLimit -1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %s", err, want)
		}
	}
	b, _ := json.Marshal(Route{DestinationIPv6CIDR: "fd00::/64"})
	if !strings.Contains(string(b), "destinationIpv6Cidr") || strings.Contains(string(b), "destinationCidr\"") {
		t.Errorf("route JSON = %s", b)
	}
}
