package awscloud

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/internal/instances"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

// nodeAddresses lists a node's addresses, families in NodeIPFamilies order.
//
// IPv4: the primary private IP of each in-use interface in device order (the
// instance's own primary IP first), then the public IP. Secondary private
// IPs are left out on purpose: the VPC CNI assigns them to pods, and listing
// them made pod IPs look like node IPs upstream. IPv6: the first address of
// each in-use interface. Then the private DNS name as InternalDNS and
// Hostname, and the public DNS name as ExternalDNS.
func nodeAddresses(inst *instances.Instance, families []string) []corev1.NodeAddress {
	if len(families) == 0 {
		families = []string{cloudconfig.IPFamilyIPv4}
	}
	var out []corev1.NodeAddress
	seen := map[corev1.NodeAddress]bool{}
	add := func(t corev1.NodeAddressType, a string) {
		addr := corev1.NodeAddress{Type: t, Address: a}
		if a != "" && !seen[addr] {
			seen[addr] = true
			out = append(out, addr)
		}
	}
	inUse := func(e instances.ENI) bool { return e.Status == "" || e.Status == "in-use" }
	for _, family := range families {
		switch family {
		case cloudconfig.IPFamilyIPv4:
			add(corev1.NodeInternalIP, inst.PrivateIP)
			for _, eni := range inst.ENIs {
				if inUse(eni) {
					add(corev1.NodeInternalIP, eni.PrimaryIP)
				}
			}
			add(corev1.NodeExternalIP, inst.PublicIP)
		case cloudconfig.IPFamilyIPv6:
			for _, eni := range inst.ENIs {
				if inUse(eni) && len(eni.IPv6) > 0 {
					add(corev1.NodeInternalIP, eni.IPv6[0])
				}
			}
		}
	}
	add(corev1.NodeInternalDNS, inst.PrivateDNSName)
	add(corev1.NodeHostName, inst.PrivateDNSName)
	add(corev1.NodeExternalDNS, inst.PublicDNSName)
	return out
}
