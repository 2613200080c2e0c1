package awsemu

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

// topologyFixture: 45 running p5.48xlarge instances, one stopped p5, one
// terminated p5, one m5.large and one m5.large with network nodes of its
// own in a placement group.
func topologyFixture() *Fixture {
	f := &Fixture{
		VPCs:    []VPC{{ID: "vpc-0topo000000000001", CIDR: "10.0.0.0/16"}},
		Subnets: []Subnet{{ID: "subnet-0topo00000000001", VPCID: "vpc-0topo000000000001", AvailabilityZone: "us-east-1a", CIDR: "10.0.0.0/20"}},
	}
	add := func(id, typ, state string) {
		f.Instances = append(f.Instances, Instance{ID: id, Type: typ, State: state, SubnetID: "subnet-0topo00000000001",
			PrivateIP: fmt.Sprintf("10.0.1.%d", len(f.Instances)+10)})
	}
	for i := range 45 {
		add(fmt.Sprintf("i-0p5%014d", i), "p5.48xlarge", "")
	}
	add("i-0p5stopped0000001", "p5.48xlarge", "stopped")
	add("i-0p5terminated0001", "p5.48xlarge", "terminated")
	add("i-0m5plain000000001", "m5.large", "")
	add("i-0m5custom00000001", "m5.large", "")
	last := &f.Instances[len(f.Instances)-1]
	last.NetworkNodes, last.PlacementGroup = []string{"nn-a", "nn-b", "nn-c"}, "cluster-pg"
	return f
}

func TestDescribeInstanceTopology(t *testing.T) {
	srv, url := start(t, topologyFixture())
	client := ec2Client(t, url)
	ctx := context.Background()

	t.Run("ids page by 20 and answer only topology instances", func(t *testing.T) {
		ids := []string{"i-0p5stopped0000001", "i-0p5terminated0001", "i-0m5plain000000001", "i-0m5custom00000001", "i-0000000000000dead"}
		for i := range 45 {
			ids = append(ids, fmt.Sprintf("i-0p5%014d", i))
		}
		before := srv.Calls("ec2", "DescribeInstanceTopology")
		got := map[string][]string{}
		p := ec2.NewDescribeInstanceTopologyPaginator(client, &ec2.DescribeInstanceTopologyInput{InstanceIds: ids})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Instances) > 20 {
				t.Errorf("page of %d, want at most the default 20", len(page.Instances))
			}
			for _, in := range page.Instances {
				got[aws.ToString(in.InstanceId)] = in.NetworkNodes
				if aws.ToString(in.AvailabilityZone) != "us-east-1a" || aws.ToString(in.ZoneId) != "use1-az1" {
					t.Errorf("%s: zone %s/%s, want us-east-1a/use1-az1", aws.ToString(in.InstanceId), aws.ToString(in.AvailabilityZone), aws.ToString(in.ZoneId))
				}
			}
		}
		// 45 p5 + stopped p5 + custom = 47 items: 3 pages.
		if calls := srv.Calls("ec2", "DescribeInstanceTopology") - before; calls != 3 {
			t.Errorf("calls = %d, want 3 pages", calls)
		}
		if len(got) != 47 {
			t.Errorf("answered %d instances, want 47", len(got))
		}
		for _, absent := range []string{"i-0p5terminated0001", "i-0m5plain000000001", "i-0000000000000dead"} {
			if _, ok := got[absent]; ok {
				t.Errorf("%s is listed; a terminated, unsupported or unknown instance is not", absent)
			}
		}
		if nodes, ok := got["i-0p5stopped0000001"]; !ok || len(nodes) != 0 {
			t.Errorf("stopped p5: listed %v with nodes %v, want listed without network nodes", ok, nodes)
		}
		if n := got["i-0p5"+fmt.Sprintf("%014d", 3)]; len(n) != 3 || n[0] != got["i-0p5"+fmt.Sprintf("%014d", 4)][0] || n[2] == got["i-0p5"+fmt.Sprintf("%014d", 4)][2] {
			t.Errorf("p5 nodes %v: want three layers sharing the zone's spine and a node of their own", n)
		}
		if n := got["i-0m5custom00000001"]; !slices.Equal(n, []string{"nn-a", "nn-b", "nn-c"}) {
			t.Errorf("custom nodes = %v", n)
		}
	})

	t.Run("group and filters", func(t *testing.T) {
		out, err := client.DescribeInstanceTopology(ctx, &ec2.DescribeInstanceTopologyInput{GroupNames: []string{"cluster-pg"}})
		if err != nil || len(out.Instances) != 1 || aws.ToString(out.Instances[0].GroupName) != "cluster-pg" {
			t.Fatalf("by group: %+v, %v", out, err)
		}
		out, err = client.DescribeInstanceTopology(ctx, &ec2.DescribeInstanceTopologyInput{Filters: filters("instance-type", "m5*"), MaxResults: aws.Int32(100)})
		if err != nil || len(out.Instances) != 1 {
			t.Fatalf("by type: %+v, %v", out, err)
		}
	})

	bad := []struct {
		name string
		in   *ec2.DescribeInstanceTopologyInput
		code string
	}{
		{"101 ids", &ec2.DescribeInstanceTopologyInput{InstanceIds: make101()}, "InvalidParameterValue"},
		{"ids with MaxResults", &ec2.DescribeInstanceTopologyInput{InstanceIds: []string{"i-0m5plain000000001"}, MaxResults: aws.Int32(20)}, "InvalidParameterCombination"},
		{"MaxResults 0", &ec2.DescribeInstanceTopologyInput{MaxResults: aws.Int32(0)}, "InvalidParameterValue"},
		{"MaxResults 101", &ec2.DescribeInstanceTopologyInput{MaxResults: aws.Int32(101)}, "InvalidParameterValue"},
		{"malformed id", &ec2.DescribeInstanceTopologyInput{InstanceIds: []string{"x-1"}}, "InvalidInstanceID.Malformed"},
		{"unknown filter", &ec2.DescribeInstanceTopologyInput{Filters: filters("vpc-id", "vpc-1")}, "InvalidParameterValue"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := client.DescribeInstanceTopology(ctx, tc.in)
			if apiCode(err) != tc.code {
				t.Errorf("err = %v, want %s", err, tc.code)
			}
		})
	}
}

func make101() []string {
	out := make([]string, 101)
	for i := range out {
		out[i] = fmt.Sprintf("i-%017d", i)
	}
	return out
}
