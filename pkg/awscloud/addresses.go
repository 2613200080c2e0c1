package awscloud

import (
	"cmp"
	"fmt"
	"net"
	"slices"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	netutils "k8s.io/utils/net"

	"github.com/awsccmctl/awsccmctl/internal/instances"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

// nodeAddresses lists a node's addresses exactly as upstream v1.37.0 does
// (getInstanceNodeAddress in pkg/providers/v1/aws.go): one block per family
// of NodeIPFamilies, in that order. Any difference rewrites every Node's
// status when a cluster moves between the two CCMs (or from the in-tree
// provider, whose ipv4 block is the same), and a kubelet whose --node-ip is
// missing from the list never gets its Node initialized.
//
//   - ipv4: every private IPv4 address of each in-use interface, in device
//     order and, within an interface, in EC2's order (the primary, then the
//     secondary ones, which the VPC CNI holds for pods); then the public IP
//     as ExternalIP, the private DNS name as InternalDNS and Hostname, the
//     public DNS name as ExternalDNS.
//   - ipv6: the first IPv6 address of each in-use interface, as InternalIP,
//     and no DNS names. Upstream sorts the interfaces in place in its ipv4
//     block, so an ipv6 block after it follows device order and one before
//     it (ipv6 alone, or ipv6 then ipv4) follows EC2's listing order.
//
// Only interfaces whose status is in-use count, as upstream. Addresses are
// written in canonical form; one that does not parse is an error, as
// upstream, rather than a Node address nothing can reach.
func nodeAddresses(inst *instances.Instance, families []string) ([]corev1.NodeAddress, error) {
	if len(families) == 0 {
		families = []string{cloudconfig.IPFamilyIPv4}
	}
	var out []corev1.NodeAddress
	inUse := func(e instances.ENI) bool { return e.Status == string(ec2types.NetworkInterfaceStatusInUse) }
	sorted := false
	for _, family := range families {
		switch family {
		case cloudconfig.IPFamilyIPv4:
			sorted = true
			for _, eni := range inst.ENIs {
				if !inUse(eni) {
					continue
				}
				for _, a := range eni.PrivateIPs {
					ip := netutils.ParseIPSloppy(a)
					if ip == nil {
						return nil, fmt.Errorf("EC2 instance %s has an invalid private address %q on %s", inst.ID, a, eni.ID)
					}
					out = append(out, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip.String()})
				}
			}
			if a := inst.PublicIP; a != "" {
				ip := netutils.ParseIPSloppy(a)
				if ip == nil {
					return nil, fmt.Errorf("EC2 instance %s has an invalid public address %q", inst.ID, a)
				}
				out = append(out, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: ip.String()})
			}
			if n := inst.PrivateDNSName; n != "" {
				out = append(out,
					corev1.NodeAddress{Type: corev1.NodeInternalDNS, Address: n},
					corev1.NodeAddress{Type: corev1.NodeHostName, Address: n})
			}
			if n := inst.PublicDNSName; n != "" {
				out = append(out, corev1.NodeAddress{Type: corev1.NodeExternalDNS, Address: n})
			}
		case cloudconfig.IPFamilyIPv6:
			enis := inst.ENIs
			if !sorted {
				enis = slices.SortedStableFunc(slices.Values(enis), func(a, b instances.ENI) int { return cmp.Compare(a.Listed, b.Listed) })
			}
			for _, eni := range enis {
				if !inUse(eni) || len(eni.IPv6) == 0 {
					continue
				}
				ip := net.ParseIP(eni.IPv6[0])
				if ip == nil {
					return nil, fmt.Errorf("EC2 instance %s has an invalid IPv6 address %q on %s", inst.ID, eni.IPv6[0], eni.ID)
				}
				out = append(out, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip.String()})
			}
		}
	}
	return out, nil
}

// inNodeOrder returns addrs in the order the Node lists them when the Node
// lists exactly these addresses, else addrs. A kubelet on the in-tree
// provider lists Hostname before InternalDNS, upstream's CCM and this one
// the other way round; k8s.io/cloud-provider's status pass rewrites a Node
// whose list it judges changed (every Node with two InternalIPs, whatever
// their order), so without this every such Node's status would change
// value once the CCM runs, and again at each in-tree kubelet's sync. The
// same addresses in another order mean nothing to a client that reads the
// first of a type, and that first stays.
func inNodeOrder(addrs, onNode []corev1.NodeAddress) []corev1.NodeAddress {
	if len(addrs) != len(onNode) {
		return addrs
	}
	count := map[corev1.NodeAddress]int{}
	for _, a := range addrs {
		count[a]++
	}
	for _, a := range onNode {
		if count[a] == 0 {
			return addrs
		}
		count[a]--
	}
	return slices.Clone(onNode)
}
