package instances

import (
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// TestFromEC2InterfaceOrder: interfaces are kept in device order whatever
// EC2's listing order, each remembering its listing position; one without
// an attachment (never seen on an instance) sorts after the attached ones,
// as upstream sorts them (a missing device index is not device 0); private
// addresses stay in EC2's order, empty ones dropped.
func TestFromEC2InterfaceOrder(t *testing.T) {
	eni := func(id string, device *int32, ips ...string) ec2types.InstanceNetworkInterface {
		e := ec2types.InstanceNetworkInterface{NetworkInterfaceId: aws.String(id), Status: ec2types.NetworkInterfaceStatusInUse}
		if device != nil {
			e.Attachment = &ec2types.InstanceNetworkInterfaceAttachment{DeviceIndex: device}
		}
		for _, ip := range ips {
			e.PrivateIpAddresses = append(e.PrivateIpAddresses, ec2types.InstancePrivateIpAddress{PrivateIpAddress: aws.String(ip)})
		}
		return e
	}
	in := fromEC2(ec2types.Instance{InstanceId: aws.String("i-1"), NetworkInterfaces: []ec2types.InstanceNetworkInterface{
		eni("eni-unattached", nil, "10.0.0.9"),
		eni("eni-2", aws.Int32(2), "10.0.0.2"),
		eni("eni-0", aws.Int32(0), "10.0.0.1", "", "10.0.0.5", "10.0.0.3"),
		eni("eni-1", aws.Int32(1), "10.0.0.4"),
	}})
	var ids []string
	var listed []int
	for _, e := range in.ENIs {
		ids, listed = append(ids, e.ID), append(listed, e.Listed)
	}
	if want := []string{"eni-0", "eni-1", "eni-2", "eni-unattached"}; !slices.Equal(ids, want) {
		t.Errorf("interfaces %v, want %v", ids, want)
	}
	if want := []int{2, 3, 1, 0}; !slices.Equal(listed, want) {
		t.Errorf("listing positions %v, want %v", listed, want)
	}
	if got, want := in.ENIs[0].PrivateIPs, []string{"10.0.0.1", "10.0.0.5", "10.0.0.3"}; !slices.Equal(got, want) {
		t.Errorf("eni-0 private IPs %v, want %v (EC2's order)", got, want)
	}
}
