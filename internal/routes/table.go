package routes

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
)

// Env is where the routes live.
type Env struct {
	VPCID     string
	ClusterID string
	// RouteTableID is RouteTableID of the cloud config; empty: the one
	// cluster-tagged table of VPCID.
	RouteTableID string
}

// route is one route of the table, as the routes need it.
type route struct {
	dest netip.Prefix
	// instanceID and eniID are the target when it is an instance (EC2
	// names the instance behind an interface target too).
	instanceID, eniID string
	// other names any other target (gateway, NAT gateway, peering, ...).
	other string
	// blackhole: the target is gone (terminated instance, deleted
	// interface or gateway).
	blackhole bool
	// fixed routes are the VPC-local route and propagated routes, which
	// CreateRoute cannot make and the controller never changes.
	fixed bool
}

// mayBeOurs reports whether the route can be the controller's at all: one
// made by CreateRoute whose target is an instance or a network interface,
// or none left (a blackholed route whose instance EC2 no longer names).
func (r route) mayBeOurs() bool {
	return !r.fixed && r.other == "" && (r.blackhole || r.instanceID != "" || r.eniID != "")
}

// table is one reading of the route table, kept up to date with the
// controller's own changes until the next reading.
type table struct {
	id     string
	routes map[netip.Prefix]route
}

// counted is how many routes the "Routes per route table" quota counts:
// the non-propagated ones besides the VPC-local route.
func (t *table) counted() int {
	n := 0
	for _, r := range t.routes {
		if !r.fixed {
			n++
		}
	}
	return n
}

// describeTable reads the route table: RouteTableID, or the one table in
// the VPC that carries the cluster tag (either form), selected by EC2 with
// vpc-id and tag-key filters. Several or none are errors naming the fix.
func (m *Manager) describeTable(ctx context.Context) (*table, error) {
	var filters []ec2types.Filter
	if id := m.env.RouteTableID; id != "" {
		filters = []ec2types.Filter{{Name: aws.String("route-table-id"), Values: []string{id}}}
	} else {
		filters = []ec2types.Filter{
			{Name: aws.String("vpc-id"), Values: []string{m.env.VPCID}},
			// Either key; the legacy key's value must name the cluster,
			// which clustertag.Has checks below.
			{Name: aws.String("tag-key"), Values: []string{clustertag.Key(m.env.ClusterID), clustertag.LegacyKey}},
		}
	}
	var found []ec2types.RouteTable
	in := &ec2.DescribeRouteTablesInput{Filters: filters}
	for {
		out, err := m.ec2.DescribeRouteTables(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("describe route tables: %w", err)
		}
		for _, rt := range out.RouteTables {
			if m.env.RouteTableID != "" || clustertag.Has(clustertag.Map(rt.Tags), m.env.ClusterID) {
				found = append(found, rt)
			}
		}
		if aws.ToString(out.NextToken) == "" {
			break
		}
		in.NextToken = out.NextToken
	}
	if err := m.checkTables(found); err != nil {
		return nil, err
	}
	return parseTable(found[0]), nil
}

// checkTables says what is wrong when found is not exactly one table of
// the cluster's VPC.
func (m *Manager) checkTables(found []ec2types.RouteTable) error {
	if id := m.env.RouteTableID; id != "" {
		switch {
		case len(found) == 0:
			return fmt.Errorf("route table %s (RouteTableID in the cloud config) does not exist in this region and account\n"+
				"fix: set RouteTableID in [Global] of the cloud config to the route table of the cluster's subnets, "+
				"or remove it and tag that table with %s=owned", id, clustertag.Key(m.env.ClusterID))
		case aws.ToString(found[0].VpcId) != m.env.VPCID:
			return fmt.Errorf("route table %s (RouteTableID in the cloud config) is in VPC %s, not in the cluster's VPC %s\n"+
				"fix: set RouteTableID in [Global] of the cloud config to a route table of VPC %s",
				id, aws.ToString(found[0].VpcId), m.env.VPCID, m.env.VPCID)
		}
		return nil
	}
	switch len(found) {
	case 0:
		return fmt.Errorf("no route table in VPC %s carries the cluster tag %s (or %s=%s)\n"+
			"fix: tag the route table of the cluster's subnets with %s=owned (or shared), "+
			"or set RouteTableID in [Global] of the cloud config",
			m.env.VPCID, clustertag.Key(m.env.ClusterID), clustertag.LegacyKey, m.env.ClusterID, clustertag.Key(m.env.ClusterID))
	case 1:
		return nil
	}
	var ids []string
	for _, rt := range found {
		ids = append(ids, aws.ToString(rt.RouteTableId))
	}
	slices.Sort(ids)
	return fmt.Errorf("route tables %s in VPC %s all carry the cluster tag of cluster %s; the CCM manages routes in exactly one\n"+
		"fix: remove the cluster tag from all but one of them, or set RouteTableID in [Global] of the cloud config",
		strings.Join(ids, ", "), m.env.VPCID, m.env.ClusterID)
}

// parseTable keeps the routes with a CIDR destination (prefix-list routes
// are never the controller's).
func parseTable(rt ec2types.RouteTable) *table {
	t := &table{id: aws.ToString(rt.RouteTableId), routes: make(map[netip.Prefix]route, len(rt.Routes))}
	for _, r := range rt.Routes {
		dest := aws.ToString(r.DestinationCidrBlock)
		if dest == "" {
			dest = aws.ToString(r.DestinationIpv6CidrBlock)
		}
		p, err := netip.ParsePrefix(dest)
		if err != nil {
			continue
		}
		t.routes[p.Masked()] = route{
			dest:       p.Masked(),
			instanceID: aws.ToString(r.InstanceId),
			eniID:      aws.ToString(r.NetworkInterfaceId),
			other: firstOf(r.GatewayId, r.NatGatewayId, r.TransitGatewayId, r.VpcPeeringConnectionId, r.EgressOnlyInternetGatewayId,
				r.LocalGatewayId, r.CarrierGatewayId, r.CoreNetworkArn, r.OdbNetworkArn),
			blackhole: r.State == ec2types.RouteStateBlackhole,
			fixed:     r.Origin == ec2types.RouteOriginCreateRouteTable || r.Origin == ec2types.RouteOriginEnableVgwRoutePropagation,
		}
	}
	return t
}

func firstOf(vs ...*string) string {
	for _, v := range vs {
		if s := aws.ToString(v); s != "" {
			return s
		}
	}
	return ""
}
