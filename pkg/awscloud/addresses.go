package awscloud

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/internal/instances"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

// nodeAddresses lists a node's addresses in upstream's order: one block
// per family of NodeIPFamilies, in that order.
//
//   - ipv4: the primary private IP of each in-use interface in device order
//     (the instance's own primary IP first), the public IP, then the
//     private DNS name as InternalDNS and Hostname and the public DNS name
//     as ExternalDNS. Secondary private IPs are left out on purpose: the VPC
//     CNI assigns them to pods, and listing them made pod IPs look like node
//     IPs upstream.
//   - ipv6: the first IPv6 address of each in-use interface, as InternalIP.
//     No DNS names: upstream lists them only with ipv4, and a resource name
//     resolves over IPv6 only when the subnet publishes AAAA records.
//
// So ipv4,ipv6 puts the IPv6 InternalIPs after the DNS names, ipv6,ipv4
// puts them first, and ipv6 alone gives only IPv6 InternalIPs (the cloud
// node controller keeps the kubelet's Hostname). The first InternalIP is
// the one the kubelet and the API server take as the node IP.
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
			add(corev1.NodeInternalDNS, inst.PrivateDNSName)
			add(corev1.NodeHostName, inst.PrivateDNSName)
			add(corev1.NodeExternalDNS, inst.PublicDNSName)
		case cloudconfig.IPFamilyIPv6:
			for _, eni := range inst.ENIs {
				if inUse(eni) && len(eni.IPv6) > 0 {
					add(corev1.NodeInternalIP, eni.IPv6[0])
				}
			}
		}
	}
	return out
}
