package awsemu

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Defaults for fixtures and added instances, and deep copies.

// applyDefaults fills empty fixture fields.
func (f *Fixture) applyDefaults() {
	if f.Region == "" {
		f.Region = DefaultRegion
	}
	if f.Account == "" {
		f.Account = DefaultAccount
	}
	if f.CallerArn == "" {
		f.CallerArn = strings.Replace(DefaultCallerArn, DefaultAccount, f.Account, 1)
	}
	if f.CallerUserID == "" {
		f.CallerUserID = "AROAEMULATOREXAMPLEID:" + f.CallerArn[strings.LastIndex(f.CallerArn, "/")+1:]
	}
	if len(f.Zones) == 0 {
		f.Zones = defaultZones(f.Region)
	}
	if len(f.TopologyInstanceTypes) == 0 {
		f.TopologyInstanceTypes = slices.Clone(DefaultTopologyInstanceTypes)
	}
	subnets := map[string]*Subnet{}
	for i := range f.Subnets {
		subnets[f.Subnets[i].ID] = &f.Subnets[i]
		if f.Subnets[i].AvailableIPs == 0 {
			f.Subnets[i].AvailableIPs = 250
		}
	}
	vpcCIDR := map[string]string{}
	for _, v := range f.VPCs {
		vpcCIDR[v.ID] = v.CIDR
	}
	for i := range f.RouteTables {
		f.RouteTables[i].addLocalRoute(vpcCIDR[f.RouteTables[i].VPCID])
	}
	now := time.Now().UTC().Truncate(time.Second)
	for i := range f.Instances {
		f.Instances[i].applyDefaults(f.Region, subnets[f.Instances[i].SubnetID], now)
	}
}

func (rt *RouteTable) addLocalRoute(cidr string) {
	if cidr == "" || slices.ContainsFunc(rt.Routes, func(r Route) bool { return r.GatewayID == "local" }) {
		return
	}
	rt.Routes = slices.Insert(rt.Routes, 0, Route{DestinationCIDR: cidr, GatewayID: "local"})
}

// defaultZones returns <region>a..c with IDs like use1-az1.
func defaultZones(region string) []Zone {
	if region == "us-east-1" {
		return []Zone{{"us-east-1a", "use1-az1"}, {"us-east-1b", "use1-az2"}, {"us-east-1c", "use1-az4"}}
	}
	parts := strings.Split(region, "-")
	short := parts[0]
	for _, p := range parts[1:] {
		if p != "" && (p[0] < '0' || p[0] > '9') {
			p = p[:1]
		}
		short += p
	}
	var zs []Zone
	for i, l := range []string{"a", "b", "c"} {
		zs = append(zs, Zone{Name: region + l, ID: fmt.Sprintf("%s-az%d", short, i+1)})
	}
	return zs
}

// applyDefaults fills empty instance fields; sn is the instance's subnet or nil.
func (in *Instance) applyDefaults(region string, sn *Subnet, now time.Time) {
	suffix := strings.TrimPrefix(in.ID, "i-")
	def := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	def(&in.State, "running")
	def(&in.Type, "m5.large")
	def(&in.ImageID, "ami-0123456789abcdef0")
	def(&in.ReservationID, "r-"+suffix)
	def(&in.HTTPTokens, "required")
	if in.HopLimit == 0 {
		in.HopLimit = 2
	}
	if in.LaunchTime.IsZero() {
		in.LaunchTime = now
	}
	if sn != nil {
		def(&in.VPCID, sn.VPCID)
		def(&in.AvailabilityZone, sn.AvailabilityZone)
	}
	if len(in.ENIs) == 0 && in.PrivateIP != "" {
		in.ENIs = []ENI{{DeviceIndex: 0, PrivateIPs: []string{in.PrivateIP}}}
	}
	for j := range in.ENIs {
		e := &in.ENIs[j]
		def(&e.ID, fmt.Sprintf("eni-%s%d", suffix, e.DeviceIndex))
		def(&e.SubnetID, in.SubnetID)
		def(&e.Status, "in-use")
		def(&e.MAC, macFor(e.ID))
		if e.DeviceIndex == 0 && in.PrivateIP == "" && len(e.PrivateIPs) > 0 {
			in.PrivateIP = e.PrivateIPs[0]
		}
	}
	if in.HostnameType == "" {
		in.HostnameType = HostnameIPName
		if sn != nil && sn.IPv6Native || in.PrivateIP == "" && hasIPv6(in) {
			in.HostnameType = HostnameResourceName
		}
	}
	switch {
	case in.HostnameType == HostnameResourceName:
		def(&in.PrivateDNSName, resourceDNSName(in.ID, region))
	case in.PrivateIP != "":
		def(&in.PrivateDNSName, privateDNSName(in.PrivateIP, region))
	}
	if in.PublicIP != "" {
		def(&in.PublicDNSName, publicDNSName(in.PublicIP, region))
	}
}

// macFor derives a stable locally administered MAC address from an ENI ID.
func macFor(id string) string {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h = (h ^ uint64(id[i])) * 1099511628211
	}
	return fmt.Sprintf("02:%02x:%02x:%02x:%02x:%02x", byte(h>>32), byte(h>>24), byte(h>>16), byte(h>>8), byte(h))
}

func privateDNSName(ip, region string) string {
	host := "ip-" + strings.ReplaceAll(ip, ".", "-")
	if region == "us-east-1" {
		return host + ".ec2.internal"
	}
	return host + "." + region + ".compute.internal"
}

func publicDNSName(ip, region string) string {
	host := "ec2-" + strings.ReplaceAll(ip, ".", "-")
	if region == "us-east-1" {
		return host + ".compute-1.amazonaws.com"
	}
	return host + "." + region + ".compute.amazonaws.com"
}

// clone returns a deep copy of the fixture.
func (f *Fixture) clone() *Fixture {
	c := *f
	c.Zones = slices.Clone(f.Zones)
	c.VPCs = cloneAll(f.VPCs)
	c.Subnets = cloneAll(f.Subnets)
	c.SecurityGroups = cloneAll(f.SecurityGroups)
	c.RouteTables = cloneAll(f.RouteTables)
	c.Instances = cloneAll(f.Instances)
	return &c
}

// cloneAll deep-copies resources with their clone method.
func cloneAll[T interface{ clone() T }](xs []T) []T {
	out := slices.Clone(xs)
	for i := range out {
		out[i] = out[i].clone()
	}
	return out
}

func (v VPC) clone() VPC        { v.Tags = maps.Clone(v.Tags); return v }
func (sn Subnet) clone() Subnet { sn.Tags = maps.Clone(sn.Tags); return sn }

func (sg SecurityGroup) clone() SecurityGroup {
	sg.Tags = maps.Clone(sg.Tags)
	sg.Ingress, sg.Egress = clonePermissions(sg.Ingress), clonePermissions(sg.Egress)
	return sg
}

func clonePermissions(ps []Permission) []Permission {
	ps = slices.Clone(ps)
	for i := range ps {
		ps[i].CIDRs = slices.Clone(ps[i].CIDRs)
		ps[i].IPv6CIDRs = slices.Clone(ps[i].IPv6CIDRs)
		ps[i].GroupIDs = slices.Clone(ps[i].GroupIDs)
		ps[i].Descriptions = maps.Clone(ps[i].Descriptions)
		ps[i].FromPort, ps[i].ToPort = clonePtr(ps[i].FromPort), clonePtr(ps[i].ToPort)
	}
	return ps
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func (rt RouteTable) clone() RouteTable {
	rt.Tags = maps.Clone(rt.Tags)
	rt.SubnetIDs = slices.Clone(rt.SubnetIDs)
	rt.Routes = slices.Clone(rt.Routes)
	return rt
}

func (in Instance) clone() Instance {
	in.Tags = maps.Clone(in.Tags)
	in.SecurityGroupIDs = slices.Clone(in.SecurityGroupIDs)
	in.NetworkNodes = slices.Clone(in.NetworkNodes)
	in.ENIs = slices.Clone(in.ENIs)
	for i := range in.ENIs {
		in.ENIs[i].PrivateIPs = slices.Clone(in.ENIs[i].PrivateIPs)
		in.ENIs[i].IPv6 = slices.Clone(in.ENIs[i].IPv6)
		in.ENIs[i].Tags = maps.Clone(in.ENIs[i].Tags)
		if c := in.ENIs[i].SourceDestCheck; c != nil {
			v := *c
			in.ENIs[i].SourceDestCheck = &v
		}
	}
	if in.SourceDestCheck != nil {
		v := *in.SourceDestCheck
		in.SourceDestCheck = &v
	}
	return in
}
