package awsemu

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// EC2 response documents (ec2query): lists are <fooSet><item>.

type xmlTag struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

func xmlTags(tags map[string]string) []xmlTag {
	out := make([]xmlTag, 0, len(tags))
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		out = append(out, xmlTag{Key: k, Value: tags[k]})
	}
	return out
}

type xmlGroup struct {
	GroupID   string `xml:"groupId"`
	GroupName string `xml:"groupName,omitempty"`
}

type xmlReservation struct {
	ReservationID string        `xml:"reservationId"`
	OwnerID       string        `xml:"ownerId"`
	Instances     []xmlInstance `xml:"instancesSet>item"`
}

type xmlInstanceState struct {
	Code int32  `xml:"code"`
	Name string `xml:"name"`
}

type xmlPlacement struct {
	AvailabilityZone   string `xml:"availabilityZone"`
	AvailabilityZoneID string `xml:"availabilityZoneId,omitempty"`
	Tenancy            string `xml:"tenancy"`
}

type xmlIAMProfile struct {
	Arn string `xml:"arn"`
	ID  string `xml:"id"`
}

type xmlMetadataOptions struct {
	State                   string `xml:"state"`
	HTTPTokens              string `xml:"httpTokens"`
	HTTPPutResponseHopLimit int32  `xml:"httpPutResponseHopLimit"`
	HTTPEndpoint            string `xml:"httpEndpoint"`
}

type xmlInstance struct {
	InstanceID         string              `xml:"instanceId"`
	ImageID            string              `xml:"imageId"`
	State              xmlInstanceState    `xml:"instanceState"`
	PrivateDNSName     string              `xml:"privateDnsName"`
	DNSName            string              `xml:"dnsName"`
	Reason             string              `xml:"reason"`
	AMILaunchIndex     int                 `xml:"amiLaunchIndex"`
	InstanceType       string              `xml:"instanceType"`
	LaunchTime         string              `xml:"launchTime"`
	Placement          xmlPlacement        `xml:"placement"`
	SubnetID           string              `xml:"subnetId,omitempty"`
	VPCID              string              `xml:"vpcId,omitempty"`
	PrivateIP          string              `xml:"privateIpAddress,omitempty"`
	PublicIP           string              `xml:"ipAddress,omitempty"`
	SourceDestCheck    bool                `xml:"sourceDestCheck"`
	Groups             []xmlGroup          `xml:"groupSet>item"`
	Architecture       string              `xml:"architecture"`
	RootDeviceType     string              `xml:"rootDeviceType"`
	RootDeviceName     string              `xml:"rootDeviceName"`
	VirtualizationType string              `xml:"virtualizationType"`
	IAMInstanceProfile *xmlIAMProfile      `xml:"iamInstanceProfile,omitempty"`
	Tags               []xmlTag            `xml:"tagSet>item"`
	NetworkInterfaces  []xmlInstanceENI    `xml:"networkInterfaceSet>item"`
	MetadataOptions    *xmlMetadataOptions `xml:"metadataOptions"`
	// PrivateDNSNameOptions: see ec2_hostname.go.
	PrivateDNSNameOptions *xmlPrivateDNSNameOptions `xml:"privateDnsNameOptions"`
}

type xmlAssociation struct {
	PublicIP      string `xml:"publicIp"`
	PublicDNSName string `xml:"publicDnsName"`
	IPOwnerID     string `xml:"ipOwnerId"`
}

type xmlPrivateIP struct {
	PrivateIP      string          `xml:"privateIpAddress"`
	PrivateDNSName string          `xml:"privateDnsName"`
	Primary        bool            `xml:"primary"`
	Association    *xmlAssociation `xml:"association,omitempty"`
}

type xmlIPv6 struct {
	Address string `xml:"ipv6Address"`
}

type xmlENIAttachment struct {
	AttachmentID        string `xml:"attachmentId"`
	DeviceIndex         int32  `xml:"deviceIndex"`
	NetworkCardIndex    int32  `xml:"networkCardIndex"`
	Status              string `xml:"status"`
	AttachTime          string `xml:"attachTime"`
	DeleteOnTermination bool   `xml:"deleteOnTermination"`
}

type xmlInstanceENI struct {
	NetworkInterfaceID string           `xml:"networkInterfaceId"`
	SubnetID           string           `xml:"subnetId,omitempty"`
	VPCID              string           `xml:"vpcId,omitempty"`
	Description        string           `xml:"description"`
	OwnerID            string           `xml:"ownerId"`
	Status             string           `xml:"status"`
	MACAddress         string           `xml:"macAddress"`
	PrivateIP          string           `xml:"privateIpAddress,omitempty"`
	PrivateDNSName     string           `xml:"privateDnsName,omitempty"`
	SourceDestCheck    bool             `xml:"sourceDestCheck"`
	InterfaceType      string           `xml:"interfaceType"`
	Groups             []xmlGroup       `xml:"groupSet>item"`
	Attachment         xmlENIAttachment `xml:"attachment"`
	Association        *xmlAssociation  `xml:"association,omitempty"`
	PrivateIPs         []xmlPrivateIP   `xml:"privateIpAddressesSet>item"`
	IPv6Addresses      []xmlIPv6        `xml:"ipv6AddressesSet>item"`
}

func ec2Time(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// xmlInstanceOf renders an instance. Callers hold s.mu.
func (s *ec2State) xmlInstanceOf(in *Instance) xmlInstance {
	x := xmlInstance{
		InstanceID:         in.ID,
		ImageID:            in.ImageID,
		State:              xmlInstanceState{Code: instanceStateCodes[in.State], Name: in.State},
		PrivateDNSName:     in.PrivateDNSName,
		DNSName:            in.PublicDNSName,
		InstanceType:       in.Type,
		LaunchTime:         ec2Time(in.LaunchTime),
		Placement:          xmlPlacement{AvailabilityZone: in.AvailabilityZone, AvailabilityZoneID: s.zoneID(in.AvailabilityZone), Tenancy: "default"},
		SubnetID:           in.SubnetID,
		VPCID:              in.VPCID,
		PrivateIP:          in.PrivateIP,
		PublicIP:           in.PublicIP,
		SourceDestCheck:    in.sourceDestCheck(),
		Groups:             s.xmlGroups(in.SecurityGroupIDs),
		Architecture:       "x86_64",
		RootDeviceType:     "ebs",
		RootDeviceName:     "/dev/xvda",
		VirtualizationType: "hvm",
		Tags:               xmlTags(in.Tags),
		MetadataOptions: &xmlMetadataOptions{State: "applied", HTTPTokens: in.HTTPTokens,
			HTTPPutResponseHopLimit: in.HopLimit, HTTPEndpoint: "enabled"},
		PrivateDNSNameOptions: privateDNSNameOptions(in),
	}
	if in.IAMInstanceProfileArn != "" {
		x.IAMInstanceProfile = &xmlIAMProfile{Arn: in.IAMInstanceProfileArn, ID: "AIPAEMULATOR" + in.ID[2:]}
	}
	// In the fixture's order, not sorted by device index: EC2 does not
	// keep its list in device order either (kubernetes/cloud-provider-aws
	// issue 911 shows device 1 listed before device 0), so a fixture can
	// reproduce that.
	for _, e := range in.ENIs {
		x.NetworkInterfaces = append(x.NetworkInterfaces, s.xmlInstanceENIOf(in, &e))
	}
	return x
}

func (s *ec2State) xmlInstanceENIOf(in *Instance, e *ENI) xmlInstanceENI {
	vpc := in.VPCID
	if sn, ok := s.subnets.get(e.SubnetID); ok {
		vpc = sn.VPCID
	}
	x := xmlInstanceENI{
		NetworkInterfaceID: e.ID,
		SubnetID:           e.SubnetID,
		VPCID:              vpc,
		OwnerID:            s.account,
		Status:             e.Status,
		MACAddress:         e.MAC,
		SourceDestCheck:    in.eniSourceDestCheck(e),
		InterfaceType:      "interface",
		Groups:             s.xmlGroups(in.SecurityGroupIDs),
		Attachment: xmlENIAttachment{
			AttachmentID:        "eni-attach-" + e.ID[len("eni-"):],
			DeviceIndex:         e.DeviceIndex,
			Status:              "attached",
			AttachTime:          ec2Time(in.LaunchTime),
			DeleteOnTermination: e.DeviceIndex == 0,
		},
	}
	var assoc *xmlAssociation
	if e.DeviceIndex == 0 && in.PublicIP != "" {
		assoc = &xmlAssociation{PublicIP: in.PublicIP, PublicDNSName: in.PublicDNSName, IPOwnerID: "amazon"}
		x.Association = assoc
	}
	for i, ip := range e.PrivateIPs {
		p := xmlPrivateIP{PrivateIP: ip, PrivateDNSName: privateDNSName(ip, s.region), Primary: i == 0}
		if i == 0 {
			x.PrivateIP, x.PrivateDNSName = ip, p.PrivateDNSName
			if e.DeviceIndex == 0 && in.PrivateDNSName != "" {
				x.PrivateDNSName, p.PrivateDNSName = in.PrivateDNSName, in.PrivateDNSName
			}
			p.Association = assoc
		}
		x.PrivateIPs = append(x.PrivateIPs, p)
	}
	for _, ip := range e.IPv6 {
		x.IPv6Addresses = append(x.IPv6Addresses, xmlIPv6{Address: ip})
	}
	if len(e.PrivateIPs) == 0 && e.DeviceIndex == 0 {
		x.PrivateDNSName = in.PrivateDNSName // IPv6-only: the resource name
	}
	return x
}

// xmlGroups resolves security group IDs to ID+name pairs. Callers hold s.mu.
func (s *ec2State) xmlGroups(ids []string) []xmlGroup {
	var out []xmlGroup
	for _, id := range ids {
		g := xmlGroup{GroupID: id}
		if sg, ok := s.securityGroups.get(id); ok {
			g.GroupName = sg.Name
		}
		out = append(out, g)
	}
	return out
}

type xmlZone struct {
	ZoneName           string `xml:"zoneName"`
	ZoneID             string `xml:"zoneId"`
	ZoneState          string `xml:"zoneState"`
	RegionName         string `xml:"regionName"`
	ZoneType           string `xml:"zoneType"`
	OptInStatus        string `xml:"optInStatus"`
	GroupName          string `xml:"groupName"`
	NetworkBorderGroup string `xml:"networkBorderGroup"`
}

type xmlSubnet struct {
	SubnetID                string   `xml:"subnetId"`
	SubnetArn               string   `xml:"subnetArn"`
	State                   string   `xml:"state"`
	OwnerID                 string   `xml:"ownerId"`
	VPCID                   string   `xml:"vpcId"`
	CIDRBlock               string   `xml:"cidrBlock,omitempty"`
	AvailableIPAddressCount int32    `xml:"availableIpAddressCount"`
	AvailabilityZone        string   `xml:"availabilityZone"`
	AvailabilityZoneID      string   `xml:"availabilityZoneId,omitempty"`
	DefaultForAz            bool     `xml:"defaultForAz"`
	MapPublicIPOnLaunch     bool     `xml:"mapPublicIpOnLaunch"`
	Tags                    []xmlTag `xml:"tagSet>item"`
	// IPv6 (ec2_hostname.go's subnets): the block and whether the subnet
	// is IPv6-only.
	IPv6CIDRBlocks []xmlSubnetIPv6CIDR `xml:"ipv6CidrBlockAssociationSet>item"`
	IPv6Native     bool                `xml:"ipv6Native"`
}

type xmlIPRange struct {
	CIDR        string `xml:"cidrIp"`
	Description string `xml:"description,omitempty"`
}

type xmlIPv6Range struct {
	CIDR        string `xml:"cidrIpv6"`
	Description string `xml:"description,omitempty"`
}

type xmlUserIDGroupPair struct {
	GroupID     string `xml:"groupId"`
	UserID      string `xml:"userId"`
	Description string `xml:"description,omitempty"`
}

type xmlIPPermission struct {
	IPProtocol string               `xml:"ipProtocol"`
	FromPort   *int32               `xml:"fromPort,omitempty"`
	ToPort     *int32               `xml:"toPort,omitempty"`
	Groups     []xmlUserIDGroupPair `xml:"groups>item"`
	IPRanges   []xmlIPRange         `xml:"ipRanges>item"`
	IPv6Ranges []xmlIPv6Range       `xml:"ipv6Ranges>item"`
}

func (s *ec2State) xmlPermissions(ps []Permission) []xmlIPPermission {
	var out []xmlIPPermission
	for _, p := range ps {
		x := xmlIPPermission{IPProtocol: p.Protocol, FromPort: p.FromPort, ToPort: p.ToPort}
		for _, g := range p.GroupIDs {
			x.Groups = append(x.Groups, xmlUserIDGroupPair{GroupID: g, UserID: s.account, Description: p.Descriptions[g]})
		}
		for _, c := range p.CIDRs {
			x.IPRanges = append(x.IPRanges, xmlIPRange{CIDR: c, Description: p.Descriptions[c]})
		}
		for _, c := range p.IPv6CIDRs {
			x.IPv6Ranges = append(x.IPv6Ranges, xmlIPv6Range{CIDR: c, Description: p.Descriptions[c]})
		}
		out = append(out, x)
	}
	return out
}

type xmlSecurityGroup struct {
	OwnerID          string            `xml:"ownerId"`
	GroupID          string            `xml:"groupId"`
	GroupName        string            `xml:"groupName"`
	GroupDescription string            `xml:"groupDescription"`
	VPCID            string            `xml:"vpcId,omitempty"`
	SecurityGroupArn string            `xml:"securityGroupArn"`
	Ingress          []xmlIPPermission `xml:"ipPermissions>item"`
	Egress           []xmlIPPermission `xml:"ipPermissionsEgress>item"`
	Tags             []xmlTag          `xml:"tagSet>item"`
}

type xmlRoute struct {
	DestinationCIDRBlock string `xml:"destinationCidrBlock,omitempty"`
	DestinationIPv6Block string `xml:"destinationIpv6CidrBlock,omitempty"`
	GatewayID            string `xml:"gatewayId,omitempty"`
	InstanceID           string `xml:"instanceId,omitempty"`
	InstanceOwnerID      string `xml:"instanceOwnerId,omitempty"`
	NetworkInterfaceID   string `xml:"networkInterfaceId,omitempty"`
	State                string `xml:"state"`
	Origin               string `xml:"origin"`
}

type xmlAssociationState struct {
	State string `xml:"state"`
}

type xmlRouteTableAssociation struct {
	ID               string              `xml:"routeTableAssociationId"`
	RouteTableID     string              `xml:"routeTableId"`
	SubnetID         string              `xml:"subnetId,omitempty"`
	Main             bool                `xml:"main"`
	AssociationState xmlAssociationState `xml:"associationState"`
}

type xmlRouteTable struct {
	RouteTableID string                     `xml:"routeTableId"`
	VPCID        string                     `xml:"vpcId"`
	OwnerID      string                     `xml:"ownerId"`
	Routes       []xmlRoute                 `xml:"routeSet>item"`
	Associations []xmlRouteTableAssociation `xml:"associationSet>item"`
	Tags         []xmlTag                   `xml:"tagSet>item"`
}

func (s *ec2State) xmlRouteTableOf(rt *RouteTable) xmlRouteTable {
	x := xmlRouteTable{RouteTableID: rt.ID, VPCID: rt.VPCID, OwnerID: s.account, Tags: xmlTags(rt.Tags)}
	for _, stored := range rt.Routes {
		r := s.routeView(stored)
		xr := xmlRoute{DestinationCIDRBlock: r.DestinationCIDR, DestinationIPv6Block: r.DestinationIPv6CIDR, GatewayID: r.GatewayID,
			InstanceID: r.InstanceID, NetworkInterfaceID: r.NetworkInterfaceID, State: r.State, Origin: routeOrigin(r)}
		if r.InstanceID != "" {
			xr.InstanceOwnerID = s.account
		}
		x.Routes = append(x.Routes, xr)
	}
	assoc := func(i int, subnet string, main bool) xmlRouteTableAssociation {
		return xmlRouteTableAssociation{ID: fmt.Sprintf("rtbassoc-%s%02d", rt.ID[len("rtb-"):], i), RouteTableID: rt.ID,
			SubnetID: subnet, Main: main, AssociationState: xmlAssociationState{State: "associated"}}
	}
	if rt.Main {
		x.Associations = append(x.Associations, assoc(0, "", true))
	}
	for i, sn := range rt.SubnetIDs {
		x.Associations = append(x.Associations, assoc(i+1, sn, false))
	}
	return x
}

type xmlVPC struct {
	VPCID           string   `xml:"vpcId"`
	OwnerID         string   `xml:"ownerId"`
	State           string   `xml:"state"`
	CIDRBlock       string   `xml:"cidrBlock,omitempty"`
	DHCPOptionsID   string   `xml:"dhcpOptionsId"`
	InstanceTenancy string   `xml:"instanceTenancy"`
	IsDefault       bool     `xml:"isDefault"`
	Tags            []xmlTag `xml:"tagSet>item"`
}
