package routes

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// TestQuotaCounted: the routes EC2's "Routes per route table" quota counts,
// as the full-table memory and preflight's route quota check count them.
func TestQuotaCounted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		route ec2types.Route
		want  bool
	}{
		{"VPC-local route", ec2types.Route{DestinationCidrBlock: aws.String("10.0.0.0/16"), GatewayId: aws.String("local"),
			Origin: ec2types.RouteOriginCreateRouteTable}, false},
		{"IPv6 VPC-local route", ec2types.Route{DestinationIpv6CidrBlock: aws.String("2600:1f18:1234:5600::/56"), GatewayId: aws.String("local"),
			Origin: ec2types.RouteOriginCreateRouteTable}, false},
		{"propagated route", ec2types.Route{DestinationCidrBlock: aws.String("172.16.0.0/12"), GatewayId: aws.String("vgw-0123"),
			Origin: ec2types.RouteOriginEnableVgwRoutePropagation}, false},
		{"prefix-list route", ec2types.Route{DestinationPrefixListId: aws.String("pl-0123"), GatewayId: aws.String("vpce-0123"),
			Origin: ec2types.RouteOriginCreateRoute}, false},
		{"default route", ec2types.Route{DestinationCidrBlock: aws.String("0.0.0.0/0"), GatewayId: aws.String("igw-0123"),
			Origin: ec2types.RouteOriginCreateRoute}, true},
		{"static route to a virtual private gateway", ec2types.Route{DestinationCidrBlock: aws.String("192.168.0.0/16"), GatewayId: aws.String("vgw-0123"),
			Origin: ec2types.RouteOriginCreateRoute}, true},
		{"a Node's IPv6 route", ec2types.Route{DestinationIpv6CidrBlock: aws.String("fd00:10:244:1::/64"), InstanceId: aws.String("i-0123"),
			Origin: ec2types.RouteOriginCreateRoute}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := QuotaCounted(tc.route); got != tc.want {
				t.Errorf("QuotaCounted = %t, want %t", got, tc.want)
			}
			// The full-table memory counts the same routes.
			tbl := parseTable(ec2types.RouteTable{RouteTableId: aws.String("rtb-1"), Routes: []ec2types.Route{tc.route}})
			if got := tbl.counted() == 1; got != tc.want {
				t.Errorf("counted() = %d, want it to count the route: %t", tbl.counted(), tc.want)
			}
		})
	}
}
