package awsemu

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

const (
	demoA          = "i-0a1b2c3d4e5f60001"
	demoB          = "i-0a1b2c3d4e5f60002"
	demoC          = "i-0a1b2c3d4e5f60003"
	demoStopped    = "i-0a1b2c3d4e5f60004"
	demoTerminated = "i-0a1b2c3d4e5f60005"
	demoVPC        = "vpc-0demo000000000001"
)

func TestDescribeInstancesFilters(t *testing.T) {
	_, url := demo(t)
	client := ec2Client(t, url)
	tests := []struct {
		name    string
		ids     []string
		filters []ec2types.Filter
		want    []string
	}{
		{"all, terminated included", nil, nil, []string{demoA, demoB, demoC, demoStopped, demoTerminated}},
		{"state running", nil, filters("instance-state-name", "running"), []string{demoA, demoB, demoC}},
		{"values ORed", nil, filters("instance-state-name", "stopped|terminated"), []string{demoStopped, demoTerminated}},
		{"filters ANDed", nil, filters("tag:kubernetes.io/cluster/demo", "owned", "availability-zone", "us-east-1a"), []string{demoA, demoStopped}},
		{"tag wildcard", nil, filters("tag:Name", "demo-node-?"), []string{demoA, demoB, demoC}},
		{"tag star", nil, filters("tag:Name", "*stop*"), []string{demoStopped}},
		{"tag-key", nil, filters("tag-key", "kubernetes.io/cluster/demo"), []string{demoA, demoB, demoC, demoStopped, demoTerminated}},
		{"tag absent", nil, filters("tag:kubernetes.io/cluster/other", "owned"), nil},
		{"private-dns-name", nil, filters("private-dns-name", "ip-10-0-2-20.ec2.internal"), []string{demoB}},
		{"vpc-id", nil, filters("vpc-id", demoVPC), []string{demoA, demoB, demoC, demoStopped}},
		{"secondary ENI address", nil, filters("network-interface.addresses.private-ip-address", "10.0.2.31"), []string{demoB}},
		{"instance-id filter ignores unknown IDs", nil, filters("instance-id", demoA+"|i-0000000000000dead"), []string{demoA}},
		{"ids", []string{demoC, demoA}, nil, []string{demoA, demoC}},
		{"ids and filter", []string{demoA, demoStopped}, filters("instance-state-name", "running"), []string{demoA}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := client.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: tc.ids, Filters: tc.filters})
			if err != nil {
				t.Fatal(err)
			}
			if got := instanceIDs(out); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDescribeInstancesFields(t *testing.T) {
	_, url := demo(t)
	out, err := ec2Client(t, url).DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{demoA, demoB, demoC}})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]ec2types.Instance{}
	for _, r := range out.Reservations {
		if aws.ToString(r.OwnerId) != "123456789012" || aws.ToString(r.ReservationId) == "" {
			t.Errorf("reservation owner/id = %q/%q", aws.ToString(r.OwnerId), aws.ToString(r.ReservationId))
		}
		for _, in := range r.Instances {
			byID[aws.ToString(in.InstanceId)] = in
		}
	}
	a, b, c := byID[demoA], byID[demoB], byID[demoC]

	check := func(name, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	check("type", string(b.InstanceType), "m5.xlarge")
	check("state", string(b.State.Name), "running")
	if aws.ToInt32(b.State.Code) != 16 {
		t.Errorf("state code = %d, want 16", aws.ToInt32(b.State.Code))
	}
	check("zone", aws.ToString(b.Placement.AvailabilityZone), "us-east-1b")
	check("zone id", aws.ToString(b.Placement.AvailabilityZoneId), "use1-az2")
	check("private dns", aws.ToString(b.PrivateDnsName), "ip-10-0-2-20.ec2.internal")
	check("private ip", aws.ToString(b.PrivateIpAddress), "10.0.2.20")
	check("public ip", aws.ToString(b.PublicIpAddress), "54.210.0.20")
	check("public dns", aws.ToString(b.PublicDnsName), "ec2-54-210-0-20.compute-1.amazonaws.com")
	check("vpc", aws.ToString(b.VpcId), demoVPC)
	check("subnet", aws.ToString(b.SubnetId), "subnet-0demo00000000000b")
	check("tag Name", tagMap(b.Tags)["Name"], "demo-node-b")
	check("launch time", aws.ToTime(b.LaunchTime).Format(time.RFC3339), "2026-01-15T10:01:00Z")
	check("http tokens", string(b.MetadataOptions.HttpTokens), "required")
	check("iam profile", aws.ToString(a.IamInstanceProfile.Arn), "arn:aws:iam::123456789012:instance-profile/demo-node")
	if got := aws.ToInt32(c.MetadataOptions.HttpPutResponseHopLimit); got != 1 {
		t.Errorf("hop limit = %d, want 1", got)
	}
	check("security group", aws.ToString(b.SecurityGroups[0].GroupName), "demo-nodes")

	if len(b.NetworkInterfaces) != 2 {
		t.Fatalf("B has %d ENIs, want 2", len(b.NetworkInterfaces))
	}
	for i, want := range []struct {
		id      string
		device  int32
		ips     []string
		publicS string
	}{
		{"eni-0demo00000000002a", 0, []string{"10.0.2.20", "10.0.2.21"}, "54.210.0.20"},
		{"eni-0demo00000000002b", 1, []string{"10.0.2.30", "10.0.2.31"}, ""},
	} {
		eni := b.NetworkInterfaces[i]
		check("eni id", aws.ToString(eni.NetworkInterfaceId), want.id)
		check("eni status", string(eni.Status), "in-use")
		if aws.ToInt32(eni.Attachment.DeviceIndex) != want.device {
			t.Errorf("%s device index = %d, want %d", want.id, aws.ToInt32(eni.Attachment.DeviceIndex), want.device)
		}
		var ips []string
		for j, p := range eni.PrivateIpAddresses {
			ips = append(ips, aws.ToString(p.PrivateIpAddress))
			if aws.ToBool(p.Primary) != (j == 0) {
				t.Errorf("%s ip %d primary = %v", want.id, j, aws.ToBool(p.Primary))
			}
			check("ip dns", aws.ToString(p.PrivateDnsName), privateDNSName(aws.ToString(p.PrivateIpAddress), "us-east-1"))
		}
		if !slices.Equal(ips, want.ips) {
			t.Errorf("%s ips = %v, want %v", want.id, ips, want.ips)
		}
		var public string
		if as := eni.PrivateIpAddresses[0].Association; as != nil {
			public = aws.ToString(as.PublicIp)
		}
		check("eni public ip", public, want.publicS)
	}
	if v6 := c.NetworkInterfaces[0].Ipv6Addresses; len(v6) != 1 || aws.ToString(v6[0].Ipv6Address) != "2600:1f18:1234:5603::30" {
		t.Errorf("C ipv6 = %+v", v6)
	}
	if a.PublicIpAddress == nil || c.PublicIpAddress != nil {
		t.Errorf("public IPs: A %v, C %v; want A set, C absent", a.PublicIpAddress, c.PublicIpAddress)
	}
}

func TestDescribeInstancesErrors(t *testing.T) {
	_, url := demo(t)
	client := ec2Client(t, url)
	tests := []struct {
		name string
		in   ec2.DescribeInstancesInput
		code string
	}{
		{"unknown id", ec2.DescribeInstancesInput{InstanceIds: []string{demoA, "i-0000000000000dead"}}, "InvalidInstanceID.NotFound"},
		{"malformed id", ec2.DescribeInstancesInput{InstanceIds: []string{"node-1"}}, "InvalidInstanceID.Malformed"},
		{"MaxResults with ids", ec2.DescribeInstancesInput{InstanceIds: []string{demoA}, MaxResults: aws.Int32(5)}, "InvalidParameterCombination"},
		{"MaxResults too small", ec2.DescribeInstancesInput{MaxResults: aws.Int32(4)}, "InvalidParameterValue"},
		{"bad NextToken", ec2.DescribeInstancesInput{NextToken: aws.String("garbage")}, "InvalidParameterValue"},
		{"unknown filter", ec2.DescribeInstancesInput{Filters: filters("no-such-filter", "x")}, "InvalidParameterValue"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := client.DescribeInstances(context.Background(), &tc.in)
			wantCode(t, err, tc.code)
		})
	}
}

func TestDescribeInstancesPaginator(t *testing.T) {
	s, url := start(t, nil)
	const n = 2500
	for i := range n {
		if err := s.AddInstance(Instance{
			ID: fmt.Sprintf("i-%017x", i+1), AvailabilityZone: "us-east-1a",
			PrivateIP: fmt.Sprintf("10.1.%d.%d", i/250, i%250+1),
			Tags:      map[string]string{"kubernetes.io/cluster/load": "owned"},
		}); err != nil {
			t.Fatal(err)
		}
	}
	p := ec2.NewDescribeInstancesPaginator(ec2Client(t, url), &ec2.DescribeInstancesInput{
		MaxResults: aws.Int32(1000),
		Filters:    filters("tag:kubernetes.io/cluster/load", "owned", "instance-state-name", "running"),
	})
	var sizes []int
	seen := map[string]bool{}
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ids := instanceIDs(out)
		sizes = append(sizes, len(ids))
		for _, id := range ids {
			seen[id] = true
		}
	}
	if !slices.Equal(sizes, []int{1000, 1000, 500}) || len(seen) != n {
		t.Errorf("page sizes %v, %d distinct instances; want [1000 1000 500], %d", sizes, len(seen), n)
	}
	if got := s.Calls("ec2", "DescribeInstances"); got != 3 {
		t.Errorf("DescribeInstances calls = %d, want 3", got)
	}
}

func TestVisibilityDelay(t *testing.T) {
	s, url := demo(t)
	client := ec2Client(t, url)
	s.SetVisibilityDelay(300 * time.Millisecond)
	const id = "i-0000000000000abcd"
	if err := s.AddInstance(Instance{ID: id, SubnetID: "subnet-0demo00000000000c", PrivateIP: "10.0.3.99"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Instance(id); !ok {
		t.Fatal("Instance() must see the instance at once")
	}
	ctx := context.Background()
	_, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	wantCode(t, err, "InvalidInstanceID.NotFound")
	out, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: filters("private-dns-name", "ip-10-0-3-99.ec2.internal")})
	if err != nil || len(instanceIDs(out)) != 0 {
		t.Fatalf("filter during delay: %v, %v; want no instances", instanceIDs(out), err)
	}
	_, err = client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{id}, Tags: []ec2types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}})
	wantCode(t, err, "InvalidInstanceID.NotFound")

	time.Sleep(350 * time.Millisecond)
	out, err = client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil || !slices.Equal(instanceIDs(out), []string{id}) {
		t.Fatalf("after delay: %v, %v", instanceIDs(out), err)
	}
	if got := aws.ToString(out.Reservations[0].Instances[0].SubnetId); got != "subnet-0demo00000000000c" {
		t.Errorf("subnet = %q", got)
	}
}

func TestInstanceStateChanges(t *testing.T) {
	s, url := demo(t)
	client := ec2Client(t, url)
	if err := s.SetInstanceState(demoA, "terminated"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetInstanceState(demoA, "exploded"); err == nil {
		t.Error("SetInstanceState accepted an invalid state")
	}
	out, err := client.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{demoA}})
	if err != nil {
		t.Fatal(err)
	}
	if st := out.Reservations[0].Instances[0].State; st.Name != ec2types.InstanceStateNameTerminated || aws.ToInt32(st.Code) != 48 {
		t.Errorf("state = %s/%d, want terminated/48", st.Name, aws.ToInt32(st.Code))
	}
	if err := s.RemoveInstance(demoA); err != nil {
		t.Fatal(err)
	}
	_, err = client.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{demoA}})
	wantCode(t, err, "InvalidInstanceID.NotFound")
}

func TestAddInstanceValidation(t *testing.T) {
	s, _ := demo(t)
	tests := []struct {
		name string
		in   Instance
	}{
		{"bad prefix", Instance{ID: "x-1", AvailabilityZone: "us-east-1a"}},
		{"duplicate", Instance{ID: demoA, AvailabilityZone: "us-east-1a"}},
		{"dangling subnet", Instance{ID: "i-1", SubnetID: "subnet-missing"}},
		{"unknown zone", Instance{ID: "i-2", AvailabilityZone: "mars-1a"}},
		{"bad state", Instance{ID: "i-3", AvailabilityZone: "us-east-1a", State: "exploded"}},
		{"ENI in use", Instance{ID: "i-4", AvailabilityZone: "us-east-1a", ENIs: []ENI{{ID: "eni-0demo00000000001a", PrivateIPs: []string{"10.0.1.99"}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.AddInstance(tc.in); err == nil {
				t.Errorf("AddInstance(%+v) succeeded", tc.in)
			}
		})
	}
	if err := s.AddInstance(Instance{AvailabilityZone: "us-east-1b"}); err != nil {
		t.Errorf("AddInstance without ID: %v", err)
	}
}

// BenchmarkDescribeInstances measures one SDK round trip (SigV4, middleware,
// XML) against the emulator: one instance by ID out of 1000.
func BenchmarkDescribeInstances(b *testing.B) {
	s, url := start(b, nil)
	s.SetResponseDelay(0)
	for i := range 1000 {
		if err := s.AddInstance(Instance{ID: fmt.Sprintf("i-%017x", i+1), AvailabilityZone: "us-east-1a",
			PrivateIP: fmt.Sprintf("10.2.%d.%d", i/250, i%250+1)}); err != nil {
			b.Fatal(err)
		}
	}
	client := ec2Client(b, url)
	in := &ec2.DescribeInstancesInput{InstanceIds: []string{fmt.Sprintf("i-%017x", 500)}}
	for b.Loop() {
		if _, err := client.DescribeInstances(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}
