package awscloud

import (
	corev1 "k8s.io/api/core/v1"
	"slices"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/instances"
)

func TestNodeAddresses(t *testing.T) {
	inst := &instances.Instance{
		PrivateIP: "10.0.1.10", PublicIP: "54.1.2.3",
		PrivateDNSName: "ip-10-0-1-10.ec2.internal", PublicDNSName: "ec2-54-1-2-3.compute-1.amazonaws.com",
		ENIs: []instances.ENI{
			{DeviceIndex: 0, Status: "in-use", PrimaryIP: "10.0.1.10", SecondaryIPs: []string{"10.0.1.77"}, IPv6: []string{"2600:1f18::a", "2600:1f18::b"}},
			{DeviceIndex: 1, Status: "in-use", PrimaryIP: "10.0.1.20", SecondaryIPs: []string{"10.0.1.78"}, IPv6: []string{"2600:1f18::c"}},
			{DeviceIndex: 2, Status: "detaching", PrimaryIP: "10.0.1.30"},
		},
	}
	dns := []corev1.NodeAddress{
		{Type: corev1.NodeInternalDNS, Address: "ip-10-0-1-10.ec2.internal"},
		{Type: corev1.NodeHostName, Address: "ip-10-0-1-10.ec2.internal"},
		{Type: corev1.NodeExternalDNS, Address: "ec2-54-1-2-3.compute-1.amazonaws.com"},
	}
	v4 := []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "10.0.1.10"},
		{Type: corev1.NodeInternalIP, Address: "10.0.1.20"},
		{Type: corev1.NodeExternalIP, Address: "54.1.2.3"},
	}
	v6 := []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "2600:1f18::a"},
		{Type: corev1.NodeInternalIP, Address: "2600:1f18::c"},
	}
	cases := []struct {
		name     string
		families []string
		want     []corev1.NodeAddress
	}{
		{"default is ipv4", nil, slices.Concat(v4, dns)},
		{"ipv4", []string{"ipv4"}, slices.Concat(v4, dns)},
		// Upstream's order (getInstanceNodeAddress): each family's block in
		// turn, the DNS names in the ipv4 block, none for ipv6.
		{"ipv6 only", []string{"ipv6"}, v6},
		{"dual stack, ipv4 first", []string{"ipv4", "ipv6"}, slices.Concat(v4, dns, v6)},
		{"dual stack, ipv6 first", []string{"ipv6", "ipv4"}, slices.Concat(v6, v4, dns)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := nodeAddresses(inst, tc.families)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("nodeAddresses = %v\nwant %v", got, tc.want)
			}
			for _, a := range got {
				if a.Address == "10.0.1.77" || a.Address == "10.0.1.78" {
					t.Fatalf("secondary (pod) IP %s reported as a node address", a.Address)
				}
			}
		})
	}
}
