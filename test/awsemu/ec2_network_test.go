package awsemu

import (
	"context"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

func TestDescribeAvailabilityZones(t *testing.T) {
	_, url := demo(t)
	client := ec2Client(t, url)
	tests := []struct {
		name string
		in   ec2.DescribeAvailabilityZonesInput
		want []string // name=id
	}{
		{"all", ec2.DescribeAvailabilityZonesInput{}, []string{"us-east-1a=use1-az1", "us-east-1b=use1-az2", "us-east-1c=use1-az4"}},
		{"by name", ec2.DescribeAvailabilityZonesInput{ZoneNames: []string{"us-east-1c"}}, []string{"us-east-1c=use1-az4"}},
		{"by id", ec2.DescribeAvailabilityZonesInput{ZoneIds: []string{"use1-az2"}}, []string{"us-east-1b=use1-az2"}},
		{"filter", ec2.DescribeAvailabilityZonesInput{Filters: filters("zone-name", "us-east-1a")}, []string{"us-east-1a=use1-az1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := client.DescribeAvailabilityZones(context.Background(), &tc.in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, z := range out.AvailabilityZones {
				got = append(got, aws.ToString(z.ZoneName)+"="+aws.ToString(z.ZoneId))
				if aws.ToString(z.RegionName) != "us-east-1" || z.State != ec2types.AvailabilityZoneStateAvailable ||
					aws.ToString(z.ZoneType) != "availability-zone" {
					t.Errorf("zone %+v", z)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("unknown zone", func(t *testing.T) {
		_, err := client.DescribeAvailabilityZones(context.Background(), &ec2.DescribeAvailabilityZonesInput{ZoneNames: []string{"us-east-1z"}})
		wantCode(t, err, "InvalidParameterValue")
	})
}

func TestDescribeNetwork(t *testing.T) {
	_, url := demo(t)
	client := ec2Client(t, url)
	ctx := context.Background()
	subnetIDs := func(in *ec2.DescribeSubnetsInput) ([]string, error) {
		out, err := client.DescribeSubnets(ctx, in)
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, s := range out.Subnets {
			ids = append(ids, aws.ToString(s.SubnetId))
		}
		return ids, nil
	}
	subnetTests := []struct {
		name string
		in   ec2.DescribeSubnetsInput
		want []string
	}{
		{"vpc", ec2.DescribeSubnetsInput{Filters: filters("vpc-id", demoVPC)}, []string{"subnet-0demo00000000000a", "subnet-0demo00000000000b", "subnet-0demo00000000000c"}},
		{"elb role tag", ec2.DescribeSubnetsInput{Filters: filters("tag:kubernetes.io/role/elb", "1", "tag-key", "kubernetes.io/cluster/demo")}, []string{"subnet-0demo00000000000a", "subnet-0demo00000000000b"}},
		{"zone", ec2.DescribeSubnetsInput{Filters: filters("availability-zone", "us-east-1c")}, []string{"subnet-0demo00000000000c"}},
		{"ids", ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-0demo00000000000b"}}, []string{"subnet-0demo00000000000b"}},
	}
	for _, tc := range subnetTests {
		t.Run("subnets/"+tc.name, func(t *testing.T) {
			got, err := subnetIDs(&tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("subnets/fields", func(t *testing.T) {
		out, err := client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-0demo00000000000a"}})
		if err != nil {
			t.Fatal(err)
		}
		sn := out.Subnets[0]
		if aws.ToString(sn.CidrBlock) != "10.0.1.0/24" || aws.ToString(sn.AvailabilityZoneId) != "use1-az1" ||
			!aws.ToBool(sn.MapPublicIpOnLaunch) || aws.ToString(sn.VpcId) != demoVPC {
			t.Errorf("subnet %+v", sn)
		}
	})
	t.Run("subnets/unknown", func(t *testing.T) {
		_, err := subnetIDs(&ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-missing"}})
		wantCode(t, err, "InvalidSubnetID.NotFound")
	})

	t.Run("security groups", func(t *testing.T) {
		out, err := client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: filters("group-name", "demo-nodes", "vpc-id", demoVPC)})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.SecurityGroups) != 1 {
			t.Fatalf("got %d groups", len(out.SecurityGroups))
		}
		sg := out.SecurityGroups[0]
		if aws.ToString(sg.GroupId) != "sg-0demo000000000001" || len(sg.IpPermissions) != 2 || len(sg.IpPermissionsEgress) != 1 {
			t.Fatalf("group %+v", sg)
		}
		ssh := sg.IpPermissions[1]
		if aws.ToInt32(ssh.FromPort) != 22 || aws.ToString(ssh.IpRanges[0].CidrIp) != "10.0.0.0/16" {
			t.Errorf("ssh rule %+v", ssh)
		}
		if self := sg.IpPermissions[0]; aws.ToString(self.IpProtocol) != "-1" || aws.ToString(self.UserIdGroupPairs[0].GroupId) != "sg-0demo000000000001" {
			t.Errorf("self rule %+v", self)
		}
		_, err = client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-missing"}})
		wantCode(t, err, "InvalidGroup.NotFound")
	})

	t.Run("route tables", func(t *testing.T) {
		out, err := client.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: filters("association.subnet-id", "subnet-0demo00000000000b")})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.RouteTables) != 1 {
			t.Fatalf("got %d route tables", len(out.RouteTables))
		}
		rt := out.RouteTables[0]
		var routes []string
		for _, r := range rt.Routes {
			routes = append(routes, aws.ToString(r.DestinationCidrBlock)+">"+aws.ToString(r.GatewayId))
		}
		if want := []string{"10.0.0.0/16>local", "0.0.0.0/0>igw-0demo000000000001"}; !slices.Equal(routes, want) {
			t.Errorf("routes %v, want %v", routes, want)
		}
		var main bool
		var subnets []string
		for _, a := range rt.Associations {
			main = main || aws.ToBool(a.Main)
			if a.SubnetId != nil {
				subnets = append(subnets, *a.SubnetId)
			}
		}
		if !main || len(subnets) != 3 {
			t.Errorf("associations: main %v, subnets %v", main, subnets)
		}
		_, err = client.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{RouteTableIds: []string{"rtb-missing"}})
		wantCode(t, err, "InvalidRouteTableID.NotFound")
	})

	t.Run("vpcs", func(t *testing.T) {
		out, err := client.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{demoVPC}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Vpcs) != 1 || aws.ToString(out.Vpcs[0].CidrBlock) != "10.0.0.0/16" || tagMap(out.Vpcs[0].Tags)["Name"] != "demo" {
			t.Errorf("vpcs %+v", out.Vpcs)
		}
		_, err = client.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{"vpc-missing"}})
		wantCode(t, err, "InvalidVpcID.NotFound")
	})
}

func TestTags(t *testing.T) {
	s, url := demo(t)
	client := ec2Client(t, url)
	ctx := context.Background()
	tag := func(k, v string) ec2types.Tag { return ec2types.Tag{Key: aws.String(k), Value: aws.String(v)} }
	instanceTags := func() map[string]string {
		out, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{demoA}})
		if err != nil {
			t.Fatal(err)
		}
		return tagMap(out.Reservations[0].Instances[0].Tags)
	}

	resources := []string{demoA, "subnet-0demo00000000000a", "sg-0demo000000000001", "rtb-0demo000000000001", demoVPC}
	if _, err := client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: resources, Tags: []ec2types.Tag{tag("team", "blue"), tag("env", "dev")}}); err != nil {
		t.Fatal(err)
	}
	if got := instanceTags(); got["team"] != "blue" || got["env"] != "dev" || got["Name"] != "demo-node-a" {
		t.Errorf("instance tags after CreateTags: %v", got)
	}
	out, err := client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: filters("tag:team", "blue")})
	if err != nil || len(out.Subnets) != 1 {
		t.Errorf("subnets tagged team=blue: %v, %v", out, err)
	}

	steps := []struct {
		name string
		tags []ec2types.Tag
		want map[string]string // expected team/env values ("" = absent)
	}{
		{"value mismatch keeps tag", []ec2types.Tag{tag("team", "red")}, map[string]string{"team": "blue", "env": "dev"}},
		{"value match deletes", []ec2types.Tag{tag("team", "blue")}, map[string]string{"team": "", "env": "dev"}},
		{"no value deletes", []ec2types.Tag{{Key: aws.String("env")}}, map[string]string{"team": "", "env": ""}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if _, err := client.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: []string{demoA}, Tags: st.tags}); err != nil {
				t.Fatal(err)
			}
			got := instanceTags()
			for k, v := range st.want {
				if got[k] != v {
					t.Errorf("tag %s = %q, want %q (all: %v)", k, got[k], v, got)
				}
			}
		})
	}

	errTests := []struct {
		name      string
		resources []string
		code      string
	}{
		{"unknown instance", []string{"i-0000000000000dead"}, "InvalidInstanceID.NotFound"},
		{"unknown subnet", []string{"subnet-missing"}, "InvalidSubnetID.NotFound"},
		{"unknown group", []string{"sg-missing"}, "InvalidGroup.NotFound"},
		{"unknown kind", []string{"foo-123"}, "InvalidID"},
		{"atomic", []string{demoB, "i-0000000000000dead"}, "InvalidInstanceID.NotFound"},
	}
	for _, tc := range errTests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: tc.resources, Tags: []ec2types.Tag{tag("x", "y")}})
			wantCode(t, err, tc.code)
		})
	}
	if in, _ := s.Instance(demoB); in.Tags["x"] != "" {
		t.Errorf("failed CreateTags changed %s: %v", demoB, in.Tags)
	}
	_, err = client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{demoA}, Tags: []ec2types.Tag{tag("aws:reserved", "x")}})
	wantCode(t, err, "InvalidParameterValue")
}
