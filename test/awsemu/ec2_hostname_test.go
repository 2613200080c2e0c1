package awsemu

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

func ipv6Fixture() *Fixture {
	return &Fixture{
		Region: "us-west-2",
		VPCs:   []VPC{{ID: "vpc-0six000000000001", CIDR: "10.0.0.0/16"}},
		Subnets: []Subnet{
			{ID: "subnet-0six0000000000001", VPCID: "vpc-0six000000000001", AvailabilityZone: "us-west-2a", IPv6CIDR: "2600:1f14:1:100::/64", IPv6Native: true},
			{ID: "subnet-0six0000000000002", VPCID: "vpc-0six000000000001", AvailabilityZone: "us-west-2b", CIDR: "10.0.1.0/24", IPv6CIDR: "2600:1f14:1:200::/64"},
		},
		Instances: []Instance{
			{ID: "i-0600000000000000a", SubnetID: "subnet-0six0000000000001", ENIs: []ENI{{DeviceIndex: 0, IPv6: []string{"2600:1f14:1:100::10"}}}},
			{ID: "i-0600000000000000b", SubnetID: "subnet-0six0000000000002", PrivateIP: "10.0.1.10", HostnameType: HostnameResourceName,
				ENIs: []ENI{{DeviceIndex: 0, PrivateIPs: []string{"10.0.1.10"}, IPv6: []string{"2600:1f14:1:200::10"}}}},
			{ID: "i-0600000000000000c", SubnetID: "subnet-0six0000000000002", PrivateIP: "10.0.1.11"},
		},
	}
}

// TestIPv6OnlyInstanceAsEC2DescribesIt: an instance in an IPv6-only subnet
// has no private IPv4 address anywhere, a resource-based private DNS name
// (on the instance and its primary interface) and privateDnsNameOptions
// resource-name with an AAAA record; a dual-stack one may choose
// resource-name too; an IPv4 one keeps ip-name. DescribeSubnets shows the
// IPv6 block and ipv6Native.
func TestIPv6OnlyInstanceAsEC2DescribesIt(t *testing.T) {
	_, url := start(t, ipv6Fixture())
	client := ec2Client(t, url)
	ctx := context.Background()
	out, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ec2types.Instance{}
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			got[aws.ToString(in.InstanceId)] = in
		}
	}
	v6 := got["i-0600000000000000a"]
	if v6.PrivateIpAddress != nil {
		t.Errorf("IPv6-only instance has privateIpAddress %q", aws.ToString(v6.PrivateIpAddress))
	}
	if name := aws.ToString(v6.PrivateDnsName); name != "i-0600000000000000a.us-west-2.compute.internal" {
		t.Errorf("privateDnsName = %q, want the resource name", name)
	}
	o := v6.PrivateDnsNameOptions
	if o == nil || o.HostnameType != ec2types.HostnameTypeResourceName || aws.ToBool(o.EnableResourceNameDnsARecord) || !aws.ToBool(o.EnableResourceNameDnsAAAARecord) {
		t.Errorf("privateDnsNameOptions = %+v, want resource-name with AAAA only", o)
	}
	if len(v6.NetworkInterfaces) != 1 {
		t.Fatalf("interfaces = %d", len(v6.NetworkInterfaces))
	}
	eni := v6.NetworkInterfaces[0]
	if eni.PrivateIpAddress != nil || len(eni.PrivateIpAddresses) != 0 || len(eni.Ipv6Addresses) != 1 ||
		aws.ToString(eni.Ipv6Addresses[0].Ipv6Address) != "2600:1f14:1:100::10" || aws.ToString(eni.PrivateDnsName) != aws.ToString(v6.PrivateDnsName) {
		t.Errorf("interface = %+v, want only the IPv6 address and the resource name", eni)
	}
	dual := got["i-0600000000000000b"]
	if aws.ToString(dual.PrivateDnsName) != "i-0600000000000000b.us-west-2.compute.internal" || aws.ToString(dual.PrivateIpAddress) != "10.0.1.10" ||
		!aws.ToBool(dual.PrivateDnsNameOptions.EnableResourceNameDnsARecord) {
		t.Errorf("dual-stack resource-name instance: name %q ip %q options %+v", aws.ToString(dual.PrivateDnsName), aws.ToString(dual.PrivateIpAddress), dual.PrivateDnsNameOptions)
	}
	if v4 := got["i-0600000000000000c"]; aws.ToString(v4.PrivateDnsName) != "ip-10-0-1-11.us-west-2.compute.internal" || v4.PrivateDnsNameOptions.HostnameType != ec2types.HostnameTypeIpName {
		t.Errorf("IPv4 instance: name %q options %+v", aws.ToString(v4.PrivateDnsName), v4.PrivateDnsNameOptions)
	}
	subnets, err := client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-0six0000000000001"}})
	if err != nil {
		t.Fatal(err)
	}
	sn := subnets.Subnets[0]
	if !aws.ToBool(sn.Ipv6Native) || len(sn.Ipv6CidrBlockAssociationSet) != 1 || aws.ToString(sn.Ipv6CidrBlockAssociationSet[0].Ipv6CidrBlock) != "2600:1f14:1:100::/64" || sn.CidrBlock != nil {
		t.Errorf("IPv6-only subnet = %+v", sn)
	}
}

func TestIPv6OnlySubnetRejectsIPv4(t *testing.T) {
	f := ipv6Fixture()
	f.Instances = append(f.Instances,
		Instance{ID: "i-0600000000000000d", SubnetID: "subnet-0six0000000000001", PrivateIP: "10.0.0.5"},
		Instance{ID: "i-0600000000000000e", SubnetID: "subnet-0six0000000000001", HostnameType: HostnameIPName, ENIs: []ENI{{DeviceIndex: 0, IPv6: []string{"2600:1f14:1:100::11"}}}},
		Instance{ID: "i-0600000000000000f", SubnetID: "subnet-0six0000000000002", HostnameType: "name"})
	err := f.Validate()
	for _, want := range []string{"i-0600000000000000d", "i-0600000000000000e", `hostnameType "name"`, "IPv6-only"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %s", err, want)
		}
	}
}
