package routes

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/instances"
)

// fakeView answers ByIDs from a map and counts the calls.
type fakeView struct {
	Instances
	byID  map[string]*instances.Instance
	calls int
}

func (f *fakeView) ByIDs(_ context.Context, ids []string) (map[string]*instances.Instance, error) {
	f.calls++
	out := map[string]*instances.Instance{}
	for _, id := range ids {
		if in, ok := f.byID[id]; ok {
			out[id] = in
		}
	}
	return out, nil
}

// TestInterfaceRouteWithoutInstance: a route that names only a network
// interface (EC2 names the instance of attached ones, so this is rare; the
// emulator always does) is the controller's when the interface is a
// cluster instance's, found through the instance view, which is asked only
// then.
func TestInterfaceRouteWithoutInstance(t *testing.T) {
	tableWith := func(rs ...ec2types.Route) func(context.Context, *ec2.DescribeRouteTablesInput, ...func(*ec2.Options)) (*ec2.DescribeRouteTablesOutput, error) {
		return func(context.Context, *ec2.DescribeRouteTablesInput, ...func(*ec2.Options)) (*ec2.DescribeRouteTablesOutput, error) {
			return &ec2.DescribeRouteTablesOutput{RouteTables: []ec2types.RouteTable{{
				RouteTableId: aws.String("rtb-1"), VpcId: aws.String("vpc-1"), Routes: rs,
				Tags: []ec2types.Tag{{Key: aws.String("kubernetes.io/cluster/c"), Value: aws.String("owned")}},
			}}}, nil
		}
	}
	view := &fakeView{byID: map[string]*instances.Instance{"i-1": {ID: "i-1", ENIs: []instances.ENI{{ID: "eni-1"}, {ID: "eni-2", DeviceIndex: 1}}}}}
	nodes := newFakeNodes()
	nodes.add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, "i-1")
	cfg := Config{Env: Env{VPCID: "vpc-1", ClusterID: "c"}, ClusterCIDRs: emuCIDRs, Instances: view, Nodes: nodes}

	cfg.EC2.DescribeRouteTables = tableWith(
		ec2types.Route{DestinationCidrBlock: aws.String("10.244.1.0/24"), NetworkInterfaceId: aws.String("eni-2"), Origin: ec2types.RouteOriginCreateRoute},
		ec2types.Route{DestinationCidrBlock: aws.String("10.244.2.0/24"), NetworkInterfaceId: aws.String("eni-9"), Origin: ec2types.RouteOriginCreateRoute},
	)
	rs, err := New(cfg).List(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	wantSlice(t, "listed", listed(rs), []string{"10.244.1.0/24->n1"})
	wantEq(t, "view calls", view.calls, 1)

	cfg.EC2.DescribeRouteTables = tableWith(
		ec2types.Route{DestinationCidrBlock: aws.String("10.244.1.0/24"), InstanceId: aws.String("i-1"), NetworkInterfaceId: aws.String("eni-1"), Origin: ec2types.RouteOriginCreateRoute},
	)
	if _, err := New(cfg).List(t.Context(), "k"); err != nil {
		t.Fatal(err)
	}
	wantEq(t, "view calls when EC2 names the instance", view.calls, 1)
}
