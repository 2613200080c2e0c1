package awsemu

import (
	"context"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

// TestDescribeInstancesListsInterfacesInFixtureOrder: EC2 does not list an
// instance's network interfaces in device order (kubernetes/cloud-provider-aws
// issue 911: device 1 before device 0), and consumers must sort them
// themselves. The emulator lists them in the fixture's order, so a fixture
// can reproduce that, each with its attachment's device index, its status,
// every private IPv4 address (the primary first, flagged, then the
// secondary ones) and its IPv6 addresses.
func TestDescribeInstancesListsInterfacesInFixtureOrder(t *testing.T) {
	srv, url := demo(t)
	const id = "i-0e0000000000000e1"
	err := srv.AddInstance(Instance{ID: id, SubnetID: "subnet-0demo00000000000a", PublicIP: "54.1.2.3",
		ENIs: []ENI{
			{ID: "eni-0e00000000000002", DeviceIndex: 2, PrivateIPs: []string{"10.0.1.40", "10.0.1.41"}, IPv6: []string{"2600:1f18::40"}},
			{ID: "eni-0e00000000000000", DeviceIndex: 0, PrivateIPs: []string{"10.0.1.20", "10.0.1.21", "10.0.1.22"}, IPv6: []string{"2600:1f18::20", "2600:1f18::21"}},
			{ID: "eni-0e00000000000003", DeviceIndex: 3, Status: "detaching", PrivateIPs: []string{"10.0.1.50"}},
			{ID: "eni-0e00000000000001", DeviceIndex: 1, PrivateIPs: []string{"10.0.1.30"}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := ec2Client(t, url).DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	in := out.Reservations[0].Instances[0]
	if got := aws.ToString(in.PrivateIpAddress); got != "10.0.1.20" {
		t.Errorf("instance private IP = %q, want device 0's primary 10.0.1.20", got)
	}
	want := []struct {
		id     string
		device int32
		status string
		ips    []string
		v6     []string
	}{
		{"eni-0e00000000000002", 2, "in-use", []string{"10.0.1.40", "10.0.1.41"}, []string{"2600:1f18::40"}},
		{"eni-0e00000000000000", 0, "in-use", []string{"10.0.1.20", "10.0.1.21", "10.0.1.22"}, []string{"2600:1f18::20", "2600:1f18::21"}},
		{"eni-0e00000000000003", 3, "detaching", []string{"10.0.1.50"}, nil},
		{"eni-0e00000000000001", 1, "in-use", []string{"10.0.1.30"}, nil},
	}
	if len(in.NetworkInterfaces) != len(want) {
		t.Fatalf("%d interfaces listed, want %d", len(in.NetworkInterfaces), len(want))
	}
	for i, w := range want {
		e := in.NetworkInterfaces[i]
		if got := aws.ToString(e.NetworkInterfaceId); got != w.id {
			t.Errorf("interface %d = %s, want %s (the fixture's order)", i, got, w.id)
		}
		if e.Attachment == nil || aws.ToInt32(e.Attachment.DeviceIndex) != w.device {
			t.Errorf("%s attachment %+v, want device index %d", w.id, e.Attachment, w.device)
		}
		if string(e.Status) != w.status {
			t.Errorf("%s status = %q, want %q", w.id, e.Status, w.status)
		}
		var ips []string
		for j, p := range e.PrivateIpAddresses {
			ips = append(ips, aws.ToString(p.PrivateIpAddress))
			if aws.ToBool(p.Primary) != (j == 0) {
				t.Errorf("%s address %d primary = %t", w.id, j, aws.ToBool(p.Primary))
			}
		}
		if !slices.Equal(ips, w.ips) || aws.ToString(e.PrivateIpAddress) != w.ips[0] {
			t.Errorf("%s private IPs %v (primary %q), want %v", w.id, ips, aws.ToString(e.PrivateIpAddress), w.ips)
		}
		var v6 []string
		for _, a := range e.Ipv6Addresses {
			v6 = append(v6, aws.ToString(a.Ipv6Address))
		}
		if !slices.Equal(v6, w.v6) {
			t.Errorf("%s IPv6 %v, want %v", w.id, v6, w.v6)
		}
	}
}
