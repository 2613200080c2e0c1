package awsemu

import "strings"

// EC2 hostname types (PrivateDnsNameOptions.HostnameType). IPv6-only
// subnets allow resource-name only: the instance has no IPv4 address to
// name it by.
const (
	HostnameIPName       = "ip-name"
	HostnameResourceName = "resource-name"
)

// xmlPrivateDNSNameOptions is an instance's privateDnsNameOptions.
type xmlPrivateDNSNameOptions struct {
	HostnameType                    string `xml:"hostnameType"`
	EnableResourceNameDNSARecord    bool   `xml:"enableResourceNameDnsARecord"`
	EnableResourceNameDNSAAAARecord bool   `xml:"enableResourceNameDnsAAAARecord"`
}

// privateDNSNameOptions: a resource name resolves to the addresses the
// instance has (A for its IPv4, AAAA for its IPv6), as the launch wizard
// sets them up for IPv6-only and dual-stack subnets.
func privateDNSNameOptions(in *Instance) *xmlPrivateDNSNameOptions {
	o := &xmlPrivateDNSNameOptions{HostnameType: in.HostnameType}
	if in.HostnameType == HostnameResourceName {
		o.EnableResourceNameDNSARecord = in.PrivateIP != ""
		o.EnableResourceNameDNSAAAARecord = hasIPv6(in)
	}
	return o
}

func hasIPv6(in *Instance) bool {
	for _, e := range in.ENIs {
		if len(e.IPv6) > 0 {
			return true
		}
	}
	return false
}

// resourceDNSName is an instance's resource-based hostname: the instance
// ID in the domain of its IP-based names (ec2.internal in us-east-1).
func resourceDNSName(id, region string) string {
	_, domain, _ := strings.Cut(privateDNSName("0.0.0.0", region), ".")
	return id + "." + domain
}

type xmlSubnetIPv6CIDR struct {
	AssociationID string `xml:"associationId"`
	IPv6CIDRBlock string `xml:"ipv6CidrBlock"`
	State         struct {
		State string `xml:"state"`
	} `xml:"ipv6CidrBlockState"`
}

// xmlSubnetIPv6CIDRs is a subnet's ipv6CidrBlockAssociationSet.
func xmlSubnetIPv6CIDRs(sn *Subnet) []xmlSubnetIPv6CIDR {
	if sn.IPv6CIDR == "" {
		return nil
	}
	x := xmlSubnetIPv6CIDR{AssociationID: "subnet-cidr-assoc-" + strings.TrimPrefix(sn.ID, "subnet-"), IPv6CIDRBlock: sn.IPv6CIDR}
	x.State.State = "associated"
	return []xmlSubnetIPv6CIDR{x}
}
