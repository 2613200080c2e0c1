package awsemu

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Describe calls for VPC networking resources.

type describeSubnetsResult struct {
	Subnets   []xmlSubnet `xml:"subnetSet>item"`
	NextToken string      `xml:"nextToken,omitempty"`
}

func (s *ec2State) describeSubnets(form url.Values) (any, *apiError) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	l := lister[Subnet]{
		idParam: "SubnetId", prefix: "subnet-", noun: "subnet ID",
		notFound: "InvalidSubnetID.NotFound", malformed: "InvalidSubnetID.Malformed",
		filters: append([]string{"vpc-id", "subnet-id", "availability-zone", "availability-zone-id",
			"cidr-block", "cidr", "state", "default-for-az", "map-public-ip-on-launch", "owner-id"}, tagFilters...),
		min: 5, max: 1000,
		all: s.subnets.list, get: s.subnets.get,
		values: func(x *Subnet, name string) []string {
			switch name {
			case "vpc-id":
				return []string{x.VPCID}
			case "subnet-id":
				return []string{x.ID}
			case "availability-zone":
				return []string{x.AvailabilityZone}
			case "availability-zone-id":
				return []string{s.zoneID(x.AvailabilityZone)}
			case "cidr-block", "cidr":
				return []string{x.CIDR}
			case "state":
				return []string{"available"}
			case "default-for-az":
				return []string{"false"}
			case "map-public-ip-on-launch":
				return []string{strconv.FormatBool(x.MapPublicIPOnLaunch)}
			case "owner-id":
				return []string{s.account}
			}
			return tagValues(x.Tags, name)
		},
	}
	page, next, apiErr := l.run(form)
	if apiErr != nil {
		return nil, apiErr
	}
	res := describeSubnetsResult{NextToken: next}
	for _, x := range page {
		res.Subnets = append(res.Subnets, xmlSubnet{
			SubnetID:                x.ID,
			SubnetArn:               "arn:aws:ec2:" + s.region + ":" + s.account + ":subnet/" + x.ID,
			State:                   "available",
			OwnerID:                 s.account,
			VPCID:                   x.VPCID,
			CIDRBlock:               x.CIDR,
			AvailableIPAddressCount: x.AvailableIPs,
			AvailabilityZone:        x.AvailabilityZone,
			AvailabilityZoneID:      s.zoneID(x.AvailabilityZone),
			MapPublicIPOnLaunch:     x.MapPublicIPOnLaunch,
			Tags:                    xmlTags(x.Tags),
			IPv6CIDRBlocks:          xmlSubnetIPv6CIDRs(x),
			IPv6Native:              x.IPv6Native,
		})
	}
	return res, nil
}

type describeSecurityGroupsResult struct {
	Groups    []xmlSecurityGroup `xml:"securityGroupInfo>item"`
	NextToken string             `xml:"nextToken,omitempty"`
}

func (s *ec2State) describeSecurityGroups(form url.Values) (any, *apiError) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	l := lister[SecurityGroup]{
		idParam: "GroupId", prefix: "sg-", noun: "security group",
		notFound: "InvalidGroup.NotFound", malformed: "InvalidGroupId.Malformed",
		filters: append([]string{"vpc-id", "group-id", "group-name", "description", "owner-id",
			"ip-permission.group-id", "ip-permission.cidr", "egress.ip-permission.group-id", "egress.ip-permission.cidr"}, tagFilters...),
		min: 5, max: 1000, noIDsPage: true,
		all: s.securityGroups.list, get: s.securityGroups.get,
		values: func(x *SecurityGroup, name string) []string {
			switch name {
			case "vpc-id":
				return []string{x.VPCID}
			case "group-id":
				return []string{x.ID}
			case "group-name":
				return []string{x.Name}
			case "description":
				return []string{x.Description}
			case "owner-id":
				return []string{s.account}
			case "ip-permission.group-id", "ip-permission.cidr":
				return ruleSources(x.Ingress, name)
			case "egress.ip-permission.group-id", "egress.ip-permission.cidr":
				return ruleSources(x.Egress, name)
			}
			return tagValues(x.Tags, name)
		},
	}
	page, next, apiErr := l.run(form)
	if apiErr != nil {
		return nil, apiErr
	}
	res := describeSecurityGroupsResult{NextToken: next}
	for _, x := range page {
		res.Groups = append(res.Groups, xmlSecurityGroup{
			OwnerID:          s.account,
			GroupID:          x.ID,
			GroupName:        x.Name,
			GroupDescription: x.Description,
			VPCID:            x.VPCID,
			SecurityGroupArn: "arn:" + awsPartition(s.region) + ":ec2:" + s.region + ":" + s.account + ":security-group/" + x.ID,
			Ingress:          s.xmlPermissions(x.Ingress),
			Egress:           s.xmlPermissions(x.Egress),
			Tags:             xmlTags(x.Tags),
		})
	}
	return res, nil
}

// ruleSources answers the ip-permission.group-id and ip-permission.cidr
// filters (and their egress. forms) from a group's rules.
func ruleSources(ps []Permission, filter string) []string {
	var out []string
	for _, p := range ps {
		if strings.HasSuffix(filter, ".group-id") {
			out = append(out, p.GroupIDs...)
		} else {
			out = append(out, p.CIDRs...)
		}
	}
	return out
}

type describeRouteTablesResult struct {
	RouteTables []xmlRouteTable `xml:"routeTableSet>item"`
	NextToken   string          `xml:"nextToken,omitempty"`
}

func (s *ec2State) describeRouteTables(form url.Values) (any, *apiError) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	l := lister[RouteTable]{
		idParam: "RouteTableId", prefix: "rtb-", noun: "routeTable ID",
		notFound: "InvalidRouteTableID.NotFound", malformed: "InvalidRouteTableId.Malformed",
		filters: slices.Concat([]string{"vpc-id", "route-table-id", "association.subnet-id", "association.main",
			"association.route-table-id", "owner-id"}, routeFilters, tagFilters),
		min: 5, max: 100,
		all: s.routeTables.list, get: s.routeTables.get,
		values: func(x *RouteTable, name string) []string {
			if strings.HasPrefix(name, "route.") {
				return s.routeValues(x, name)
			}
			switch name {
			case "vpc-id":
				return []string{x.VPCID}
			case "route-table-id", "association.route-table-id":
				return []string{x.ID}
			case "association.subnet-id":
				return x.SubnetIDs
			case "association.main":
				return []string{strconv.FormatBool(x.Main)}
			case "owner-id":
				return []string{s.account}
			}
			return tagValues(x.Tags, name)
		},
	}
	page, next, apiErr := l.run(form)
	if apiErr != nil {
		return nil, apiErr
	}
	res := describeRouteTablesResult{NextToken: next}
	for _, x := range page {
		res.RouteTables = append(res.RouteTables, s.xmlRouteTableOf(x))
	}
	return res, nil
}

type describeVpcsResult struct {
	VPCs      []xmlVPC `xml:"vpcSet>item"`
	NextToken string   `xml:"nextToken,omitempty"`
}

func (s *ec2State) describeVpcs(form url.Values) (any, *apiError) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	l := lister[VPC]{
		idParam: "VpcId", prefix: "vpc-", noun: "vpc ID",
		notFound: "InvalidVpcID.NotFound", malformed: "InvalidVpcId.Malformed",
		filters: append([]string{"vpc-id", "cidr", "cidr-block-association.cidr-block", "is-default", "state", "owner-id"}, tagFilters...),
		min:     5, max: 1000,
		all: s.vpcs.list, get: s.vpcs.get,
		values: func(x *VPC, name string) []string {
			switch name {
			case "vpc-id":
				return []string{x.ID}
			case "cidr", "cidr-block-association.cidr-block":
				return []string{x.CIDR}
			case "is-default":
				return []string{strconv.FormatBool(x.IsDefault)}
			case "state":
				return []string{"available"}
			case "owner-id":
				return []string{s.account}
			}
			return tagValues(x.Tags, name)
		},
	}
	page, next, apiErr := l.run(form)
	if apiErr != nil {
		return nil, apiErr
	}
	res := describeVpcsResult{NextToken: next}
	for _, x := range page {
		res.VPCs = append(res.VPCs, xmlVPC{VPCID: x.ID, OwnerID: s.account, State: "available", CIDRBlock: x.CIDR,
			DHCPOptionsID: "dopt-0emulator0000000", InstanceTenancy: "default", IsDefault: x.IsDefault, Tags: xmlTags(x.Tags)})
	}
	return res, nil
}
