package awsemu

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Defaults used when a Fixture leaves a field empty.
const (
	DefaultRegion    = "us-east-1"
	DefaultAccount   = "123456789012"
	DefaultCallerArn = "arn:aws:iam::123456789012:role/control-plane"
)

// Fixture is the initial state of a Server. Every field is optional; LoadFixture
// reads one from YAML (keys are the json tags).
type Fixture struct {
	// Region is the emulated region (default us-east-1).
	Region string `json:"region,omitempty"`
	// Account is the AWS account ID used as owner of all resources.
	Account string `json:"account,omitempty"`
	// CallerArn is what STS GetCallerIdentity returns as Arn.
	CallerArn string `json:"callerArn,omitempty"`
	// CallerUserID is what STS GetCallerIdentity returns as UserId.
	CallerUserID string `json:"callerUserId,omitempty"`
	// IMDSInstanceID is the instance IMDS answers as (default: the first instance).
	IMDSInstanceID string `json:"imdsInstanceId,omitempty"`
	// Zones of the region; default <region>a, b and c.
	Zones          []Zone          `json:"zones,omitempty"`
	VPCs           []VPC           `json:"vpcs,omitempty"`
	Subnets        []Subnet        `json:"subnets,omitempty"`
	SecurityGroups []SecurityGroup `json:"securityGroups,omitempty"`
	RouteTables    []RouteTable    `json:"routeTables,omitempty"`
	Instances      []Instance      `json:"instances,omitempty"`
	// IAM holds roles, instance profiles and policies (see iam.go).
	IAM IAMFixture `json:"iam,omitzero"`
	// LoadBalancers are Classic, Network and Application load balancers
	// with their listeners and target groups (see elb_state.go).
	LoadBalancers []LoadBalancer `json:"loadBalancers,omitempty"`
	// SecurityGroupRuleLimit is the number of ingress rules (one per
	// source CIDR or group; IPv4 and IPv6 rules are counted separately, a
	// group reference counts for both) a security group may hold before
	// AuthorizeSecurityGroupIngress fails with
	// RulesPerSecurityGroupLimitExceeded (0 = the AWS default of 60).
	SecurityGroupRuleLimit int `json:"securityGroupRuleLimit,omitempty"`
	// TopologyInstanceTypes are the instance types DescribeInstanceTopology
	// reports network nodes for (default DefaultTopologyInstanceTypes, the
	// types EC2 documents); see ec2_topology.go.
	TopologyInstanceTypes []string `json:"topologyInstanceTypes,omitempty"`
	// RouteLimit is the number of routes (the VPC-local one not counted) a
	// route table may hold before CreateRoute fails with
	// RouteLimitExceeded (0 = the AWS default of 50).
	RouteLimit int `json:"routeLimit,omitempty"`
}

// Zone is an availability zone.
type Zone struct {
	Name string `json:"name"`
	ID   string `json:"id"`
}

// VPC is a virtual private cloud.
type VPC struct {
	ID        string            `json:"id"`
	CIDR      string            `json:"cidr,omitempty"`
	IsDefault bool              `json:"isDefault,omitempty"`
	Tags      map[string]string `json:"tags,omitempty"`
}

// Subnet is a subnet of a VPC in one zone.
type Subnet struct {
	ID                  string            `json:"id"`
	VPCID               string            `json:"vpcId"`
	AvailabilityZone    string            `json:"availabilityZone"`
	CIDR                string            `json:"cidr,omitempty"`
	MapPublicIPOnLaunch bool              `json:"mapPublicIpOnLaunch,omitempty"`
	AvailableIPs        int32             `json:"availableIpAddressCount,omitempty"`
	Tags                map[string]string `json:"tags,omitempty"`
	// IPv6CIDR is the subnet's IPv6 block; IPv6Native makes it IPv6-only:
	// its instances have no private IPv4 address and resource-based
	// hostnames.
	IPv6CIDR   string `json:"ipv6Cidr,omitempty"`
	IPv6Native bool   `json:"ipv6Native,omitempty"`
}

// SecurityGroup is a VPC security group.
type SecurityGroup struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	VPCID       string            `json:"vpcId,omitempty"`
	Ingress     []Permission      `json:"ingress,omitempty"`
	Egress      []Permission      `json:"egress,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
}

// Permission is one security group rule ("-1" protocol = all traffic).
type Permission struct {
	Protocol  string   `json:"protocol"`
	FromPort  *int32   `json:"fromPort,omitempty"`
	ToPort    *int32   `json:"toPort,omitempty"`
	CIDRs     []string `json:"cidrs,omitempty"`
	IPv6CIDRs []string `json:"ipv6Cidrs,omitempty"`
	GroupIDs  []string `json:"groupIds,omitempty"`
	// Descriptions holds rule descriptions by source (a CIDR or group ID).
	Descriptions map[string]string `json:"descriptions,omitempty"`
}

// RouteTable is a VPC route table; SubnetIDs are its explicit associations.
type RouteTable struct {
	ID        string            `json:"id"`
	VPCID     string            `json:"vpcId"`
	Main      bool              `json:"main,omitempty"`
	SubnetIDs []string          `json:"subnetIds,omitempty"`
	Routes    []Route           `json:"routes,omitempty"`
	Tags      map[string]string `json:"tags,omitempty"`
}

// Route is one route; the VPC-local route is added automatically. It has
// one destination (IPv4 or IPv6) and one target. A route created with an
// instance target holds the instance's network interface too, as EC2's
// does. State is active or blackhole; empty means active until the target
// instance or interface goes (ec2_routes.go).
type Route struct {
	DestinationCIDR     string `json:"destinationCidr,omitempty"`
	DestinationIPv6CIDR string `json:"destinationIpv6Cidr,omitempty"`
	GatewayID           string `json:"gatewayId,omitempty"`
	InstanceID          string `json:"instanceId,omitempty"`
	NetworkInterfaceID  string `json:"networkInterfaceId,omitempty"`
	State               string `json:"state,omitempty"`
}

// Instance is an EC2 instance. Empty fields get defaults: State running,
// VPC and zone from the subnet, a primary ENI from PrivateIP (or PrivateIP
// from the primary ENI), private DNS name from the private IP, public DNS
// name from the public IP, HTTPTokens required, HopLimit 2.
type Instance struct {
	ID                    string            `json:"id"`
	ReservationID         string            `json:"reservationId,omitempty"`
	ImageID               string            `json:"imageId,omitempty"`
	Type                  string            `json:"type,omitempty"`
	State                 string            `json:"state,omitempty"`
	AvailabilityZone      string            `json:"availabilityZone,omitempty"`
	VPCID                 string            `json:"vpcId,omitempty"`
	SubnetID              string            `json:"subnetId,omitempty"`
	PrivateDNSName        string            `json:"privateDnsName,omitempty"`
	PrivateIP             string            `json:"privateIp,omitempty"`
	PublicIP              string            `json:"publicIp,omitempty"`
	PublicDNSName         string            `json:"publicDnsName,omitempty"`
	SecurityGroupIDs      []string          `json:"securityGroupIds,omitempty"`
	Tags                  map[string]string `json:"tags,omitempty"`
	ENIs                  []ENI             `json:"enis,omitempty"`
	LaunchTime            time.Time         `json:"launchTime,omitzero"`
	HTTPTokens            string            `json:"httpTokens,omitempty"`
	HopLimit              int32             `json:"hopLimit,omitempty"`
	IAMInstanceProfileArn string            `json:"iamInstanceProfileArn,omitempty"`
	// SourceDestCheck defaults to true when nil.
	SourceDestCheck *bool `json:"sourceDestCheck,omitempty"`
	// HostnameType is ip-name (ip-10-0-0-1.ec2.internal) or resource-name
	// (i-0123456789abcdef0.ec2.internal); default resource-name for an
	// instance without private IPv4 (IPv6-only subnets allow no other),
	// else ip-name.
	HostnameType string `json:"hostnameType,omitempty"`
	// PlacementGroup is the name of the instance's placement group.
	PlacementGroup string `json:"placementGroup,omitempty"`
	// NetworkNodes are what DescribeInstanceTopology reports while the
	// instance runs, whatever its type; empty: derived ones for the
	// fixture's TopologyInstanceTypes, none for other types.
	NetworkNodes []string `json:"networkNodes,omitempty"`
}

// ENI is a network interface attached to an instance. PrivateIPs[0] is the
// primary private IP; the others are secondary IPs (VPC CNI pod IPs).
type ENI struct {
	ID          string   `json:"id,omitempty"`
	DeviceIndex int32    `json:"deviceIndex"`
	SubnetID    string   `json:"subnetId,omitempty"`
	PrivateIPs  []string `json:"privateIps,omitempty"`
	IPv6        []string `json:"ipv6,omitempty"`
	MAC         string   `json:"mac,omitempty"`
	Status      string   `json:"status,omitempty"`
	// SourceDestCheck is the interface's own check; nil: the instance's
	// SourceDestCheck (EC2 keeps the check per interface, and an
	// instance's attribute is its primary interface's).
	SourceDestCheck *bool `json:"sourceDestCheck,omitempty"`
	// Tags are the interface's own tags (IAM's aws:ResourceTag for
	// ModifyNetworkInterfaceAttribute): launch templates tag interfaces
	// only with a network-interface TagSpecification.
	Tags map[string]string `json:"tags,omitempty"`
}

// instanceStateCodes maps EC2 instance state names to their codes.
var instanceStateCodes = map[string]int32{
	"pending": 0, "running": 16, "shutting-down": 32,
	"terminated": 48, "stopping": 64, "stopped": 80,
}

// LoadFixture reads a YAML (or JSON) fixture. Unknown fields are errors and
// references between resources are validated.
func LoadFixture(path string) (*Fixture, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := parseFixture(data)
	if err != nil {
		return nil, fmt.Errorf("fixture %s: %w", path, err)
	}
	return f, nil
}

// parseFixture decodes and validates a YAML (or JSON) fixture.
func parseFixture(data []byte) (*Fixture, error) {
	var f Fixture
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &f, nil
}

// Validate fills defaults in place and checks IDs and references (subnet ->
// VPC and zone, instance -> subnet, VPC and security groups, ...). All
// problems are reported at once.
func (f *Fixture) Validate() error {
	f.applyDefaults()
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	zones := map[string]bool{}
	for i, z := range f.Zones {
		if z.Name == "" || z.ID == "" {
			bad("zones[%d]: name and id are required", i)
		}
		if zones[z.Name] {
			bad("zones[%d]: duplicate zone %q", i, z.Name)
		}
		zones[z.Name] = true
	}
	vpcs := map[string]*VPC{}
	for i := range f.VPCs {
		v := &f.VPCs[i]
		checkID(bad, fmt.Sprintf("vpcs[%d]", i), "vpc-", v.ID, vpcs[v.ID] != nil)
		vpcs[v.ID] = v
	}
	subnets := map[string]*Subnet{}
	for i := range f.Subnets {
		sn := &f.Subnets[i]
		where := fmt.Sprintf("subnets[%d] (%s)", i, sn.ID)
		checkID(bad, where, "subnet-", sn.ID, subnets[sn.ID] != nil)
		subnets[sn.ID] = sn
		if vpcs[sn.VPCID] == nil {
			bad("%s: vpcId %q does not exist", where, sn.VPCID)
		}
		if !zones[sn.AvailabilityZone] {
			bad("%s: availabilityZone %q is not a zone of %s", where, sn.AvailabilityZone, f.Region)
		}
	}
	sgs := map[string]bool{}
	for i, sg := range f.SecurityGroups {
		where := fmt.Sprintf("securityGroups[%d] (%s)", i, sg.ID)
		checkID(bad, where, "sg-", sg.ID, sgs[sg.ID])
		sgs[sg.ID] = true
		if sg.Name == "" {
			bad("%s: name is required", where)
		}
		if sg.VPCID != "" && vpcs[sg.VPCID] == nil {
			bad("%s: vpcId %q does not exist", where, sg.VPCID)
		}
	}
	rtbs, associated := map[string]bool{}, map[string]string{}
	for i, rt := range f.RouteTables {
		where := fmt.Sprintf("routeTables[%d] (%s)", i, rt.ID)
		checkID(bad, where, "rtb-", rt.ID, rtbs[rt.ID])
		rtbs[rt.ID] = true
		if vpcs[rt.VPCID] == nil {
			bad("%s: vpcId %q does not exist", where, rt.VPCID)
		}
		for _, id := range rt.SubnetIDs {
			switch sn := subnets[id]; {
			case sn == nil:
				bad("%s: subnetIds: subnet %q does not exist", where, id)
			case sn.VPCID != rt.VPCID:
				bad("%s: subnet %q is in %s, not %s", where, id, sn.VPCID, rt.VPCID)
			case associated[id] != "":
				bad("%s: subnet %q is already associated with %s", where, id, associated[id])
			}
			associated[id] = rt.ID
		}
		for _, err := range validateRoutes(&f.RouteTables[i]) {
			bad("%s: %v", where, err)
		}
	}
	instances, enis := map[string]bool{}, map[string]bool{}
	for i := range f.Instances {
		in := &f.Instances[i]
		where := fmt.Sprintf("instances[%d] (%s)", i, in.ID)
		checkID(bad, where, "i-", in.ID, instances[in.ID])
		instances[in.ID] = true
		for _, err := range validateInstance(in, subnets, vpcs, zones, sgs) {
			bad("%s: %v", where, err)
		}
		for _, e := range in.ENIs {
			if enis[e.ID] {
				bad("%s: duplicate network interface %q", where, e.ID)
			}
			enis[e.ID] = true
		}
	}
	if f.RouteLimit < 0 {
		bad("routeLimit %d: must be 0 (the AWS default, %d) or more", f.RouteLimit, DefaultRouteLimit)
	}
	if f.IMDSInstanceID != "" && !instances[f.IMDSInstanceID] {
		bad("imdsInstanceId %q is not an instance of the fixture", f.IMDSInstanceID)
	}
	_, iamErrs := f.buildIAM()
	_, elbErrs := f.buildELB()
	return errors.Join(slices.Concat(errs, iamErrs, elbErrs)...)
}

func checkID(bad func(string, ...any), where, prefix, id string, dup bool) {
	switch {
	case !strings.HasPrefix(id, prefix) || len(id) == len(prefix):
		bad("%s: id %q must start with %q", where, id, prefix)
	case dup:
		bad("%s: duplicate id %q", where, id)
	}
}

// validateInstance checks one defaulted instance against the other resources.
func validateInstance(in *Instance, subnets map[string]*Subnet, vpcs map[string]*VPC, zones map[string]bool, sgs map[string]bool) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if _, ok := instanceStateCodes[in.State]; !ok {
		bad("state %q is not one of pending, running, shutting-down, terminated, stopping, stopped", in.State)
	}
	if in.HostnameType != HostnameIPName && in.HostnameType != HostnameResourceName {
		bad("hostnameType %q is not %s or %s", in.HostnameType, HostnameIPName, HostnameResourceName)
	}
	if sn, ok := subnets[in.SubnetID]; ok && sn.IPv6Native && (in.PrivateIP != "" || in.HostnameType != HostnameResourceName) {
		bad("subnet %s is IPv6-only: the instance can have no private IPv4 address (privateIp %q) and only resource-name hostnames (hostnameType %q)", sn.ID, in.PrivateIP, in.HostnameType)
	}
	if in.SubnetID != "" {
		if sn := subnets[in.SubnetID]; sn == nil {
			bad("subnetId %q does not exist", in.SubnetID)
		} else {
			if in.VPCID != sn.VPCID {
				bad("vpcId %q does not match subnet %s's VPC %s", in.VPCID, sn.ID, sn.VPCID)
			}
			if in.AvailabilityZone != sn.AvailabilityZone {
				bad("availabilityZone %q does not match subnet %s's zone %s", in.AvailabilityZone, sn.ID, sn.AvailabilityZone)
			}
		}
	}
	if in.VPCID != "" && vpcs[in.VPCID] == nil {
		bad("vpcId %q does not exist", in.VPCID)
	}
	if in.AvailabilityZone == "" {
		bad("availabilityZone (or subnetId) is required")
	} else if !zones[in.AvailabilityZone] {
		bad("availabilityZone %q does not exist", in.AvailabilityZone)
	}
	for _, id := range in.SecurityGroupIDs {
		if !sgs[id] {
			bad("securityGroupIds: %q does not exist", id)
		}
	}
	for _, ip := range []string{in.PrivateIP, in.PublicIP} {
		if _, err := netip.ParseAddr(ip); ip != "" && err != nil {
			bad("invalid IP address %q", ip)
		}
	}
	devices := map[int32]bool{}
	for j, e := range in.ENIs {
		if !strings.HasPrefix(e.ID, "eni-") {
			bad("enis[%d]: id %q must start with \"eni-\"", j, e.ID)
		}
		if devices[e.DeviceIndex] {
			bad("enis[%d]: duplicate deviceIndex %d", j, e.DeviceIndex)
		}
		devices[e.DeviceIndex] = true
		if e.SubnetID != "" && subnets[e.SubnetID] == nil {
			bad("enis[%d]: subnetId %q does not exist", j, e.SubnetID)
		}
		for _, ip := range slices.Concat(e.PrivateIPs, e.IPv6) {
			if _, err := netip.ParseAddr(ip); err != nil {
				bad("enis[%d]: invalid IP address %q", j, ip)
			}
		}
	}
	if len(in.ENIs) > 0 && !devices[0] {
		bad("enis: no primary network interface (deviceIndex 0)")
	}
	return errs
}
