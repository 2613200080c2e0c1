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

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
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

// counted is how many routes of the table the "Routes per route table"
// quota counts (QuotaCounted: the table holds only CIDR routes).
func (t *table) counted() int {
	n := 0
	for _, r := range t.routes {
		if !r.fixed {
			n++
		}
	}
	return n
}

// fixed reports whether r is the VPC-local route or a propagated one:
// CreateRoute cannot make it, and the controller never changes it.
func fixed(r ec2types.Route) bool {
	return r.Origin == ec2types.RouteOriginCreateRouteTable || r.Origin == ec2types.RouteOriginEnableVgwRoutePropagation
}

// destination is r's CIDR destination (IPv4 or IPv6), masked; false for a
// prefix-list route.
func destination(r ec2types.Route) (netip.Prefix, bool) {
	dest := aws.ToString(r.DestinationCidrBlock)
	if dest == "" {
		dest = aws.ToString(r.DestinationIpv6CidrBlock)
	}
	p, err := netip.ParsePrefix(dest)
	if err != nil {
		return netip.Prefix{}, false
	}
	return p.Masked(), true
}

// QuotaCounted reports whether r counts towards EC2's quota "Routes per
// route table" as the routes count it (to tell when a full table has room
// again): a route to a CIDR that is neither the VPC-local route nor
// propagated (propagated routes have a quota of their own). Preflight's
// route quota check counts with it too.
func QuotaCounted(r ec2types.Route) bool {
	_, ok := destination(r)
	return ok && !fixed(r)
}

// FindTable reads the route table the routes of env manage, exactly as the
// Manager does on every sync: RouteTableID, else the one table in VPCID
// that carries the cluster tag (either form), selected by EC2 with vpc-id
// and tag-key filters. When there is not exactly one such table the error
// is a *TableError, whose message names the fix; failed calls return their
// error. Preflight's aws-route-tables calls it too, so both find the same
// table and say the same.
func FindTable(ctx context.Context, describe awsapi.DescribeRouteTablesFunc, env Env) (ec2types.RouteTable, error) {
	var filters []ec2types.Filter
	if id := env.RouteTableID; id != "" {
		filters = []ec2types.Filter{{Name: aws.String("route-table-id"), Values: []string{id}}}
	} else {
		filters = []ec2types.Filter{
			{Name: aws.String("vpc-id"), Values: []string{env.VPCID}},
			// Either key; the legacy key's value must name the cluster,
			// which clustertag.Has checks below.
			{Name: aws.String("tag-key"), Values: []string{clustertag.Key(env.ClusterID), clustertag.LegacyKey}},
		}
	}
	var found []ec2types.RouteTable
	in := &ec2.DescribeRouteTablesInput{Filters: filters}
	for {
		out, err := describe(ctx, in)
		if err != nil {
			return ec2types.RouteTable{}, fmt.Errorf("describe route tables: %w", err)
		}
		for _, rt := range out.RouteTables {
			if env.RouteTableID != "" || clustertag.Has(clustertag.Map(rt.Tags), env.ClusterID) {
				found = append(found, rt)
			}
		}
		if aws.ToString(out.NextToken) == "" {
			break
		}
		in.NextToken = out.NextToken
	}
	if err := checkTables(env, found); err != nil {
		return ec2types.RouteTable{}, err
	}
	return found[0], nil
}

// describeTable reads the route table (FindTable).
func (m *Manager) describeTable(ctx context.Context) (*table, error) {
	rt, err := FindTable(ctx, m.ec2.DescribeRouteTables, m.env)
	if err != nil {
		return nil, err
	}
	return parseTable(rt), nil
}

// TableProblem is why there is no route table to manage.
type TableProblem int

// The TableProblem values.
const (
	// NoTaggedTable: no table of the VPC carries the cluster tag.
	NoTaggedTable TableProblem = iota + 1
	// SeveralTaggedTables: more than one does.
	SeveralTaggedTables
	// ConfiguredTableMissing: RouteTableID names no table of the region
	// and account.
	ConfiguredTableMissing
	// ConfiguredTableElsewhere: RouteTableID names a table of another VPC.
	ConfiguredTableElsewhere
)

// TableError is FindTable's error when there is no one route table to
// manage. Each sync fails with it until it is fixed.
type TableError struct {
	Problem TableProblem
	Env     Env
	// Tables are the tables found: the tagged ones (SeveralTaggedTables),
	// or the one RouteTableID names (ConfiguredTableElsewhere).
	Tables []ec2types.RouteTable
}

// IDs returns the IDs of Tables, sorted.
func (e *TableError) IDs() []string {
	var ids []string
	for _, rt := range e.Tables {
		ids = append(ids, aws.ToString(rt.RouteTableId))
	}
	slices.Sort(ids)
	return ids
}

// Error says what is wrong and, after "\nfix: ", how to fix it.
func (e *TableError) Error() string {
	env := e.Env
	switch e.Problem {
	case ConfiguredTableMissing:
		return fmt.Sprintf("route table %s (RouteTableID in the cloud config) does not exist in this region and account\n"+
			"fix: set RouteTableID in [Global] of the cloud config to the route table of the cluster's subnets, "+
			"or remove it and tag that table with %s=owned", env.RouteTableID, clustertag.Key(env.ClusterID))
	case ConfiguredTableElsewhere:
		vpc := ""
		if len(e.Tables) > 0 {
			vpc = aws.ToString(e.Tables[0].VpcId)
		}
		return fmt.Sprintf("route table %s (RouteTableID in the cloud config) is in VPC %s, not in the cluster's VPC %s\n"+
			"fix: set RouteTableID in [Global] of the cloud config to a route table of VPC %s",
			env.RouteTableID, vpc, env.VPCID, env.VPCID)
	case NoTaggedTable:
		return fmt.Sprintf("no route table in VPC %s carries the cluster tag %s (or %s=%s)\n"+
			"fix: tag the route table of the cluster's subnets with %s=owned (or shared), "+
			"or set RouteTableID in [Global] of the cloud config",
			env.VPCID, clustertag.Key(env.ClusterID), clustertag.LegacyKey, env.ClusterID, clustertag.Key(env.ClusterID))
	default:
		return fmt.Sprintf("route tables %s in VPC %s all carry the cluster tag of cluster %s; the CCM manages routes in exactly one\n"+
			"fix: remove the cluster tag from all but one of them, or set RouteTableID in [Global] of the cloud config",
			strings.Join(e.IDs(), ", "), env.VPCID, env.ClusterID)
	}
}

// checkTables returns a *TableError when found is not exactly one table of
// the cluster's VPC.
func checkTables(env Env, found []ec2types.RouteTable) error {
	if id := env.RouteTableID; id != "" {
		switch {
		case len(found) == 0:
			return &TableError{Problem: ConfiguredTableMissing, Env: env}
		case aws.ToString(found[0].VpcId) != env.VPCID:
			return &TableError{Problem: ConfiguredTableElsewhere, Env: env, Tables: found[:1]}
		}
		return nil
	}
	switch len(found) {
	case 0:
		return &TableError{Problem: NoTaggedTable, Env: env}
	case 1:
		return nil
	}
	return &TableError{Problem: SeveralTaggedTables, Env: env, Tables: found}
}

// parseTable keeps the routes with a CIDR destination (prefix-list routes
// are never the controller's).
func parseTable(rt ec2types.RouteTable) *table {
	t := &table{id: aws.ToString(rt.RouteTableId), routes: make(map[netip.Prefix]route, len(rt.Routes))}
	for _, r := range rt.Routes {
		p, ok := destination(r)
		if !ok {
			continue
		}
		t.routes[p] = route{
			dest:       p,
			instanceID: aws.ToString(r.InstanceId),
			eniID:      aws.ToString(r.NetworkInterfaceId),
			other: firstOf(r.GatewayId, r.NatGatewayId, r.TransitGatewayId, r.VpcPeeringConnectionId, r.EgressOnlyInternetGatewayId,
				r.LocalGatewayId, r.CarrierGatewayId, r.CoreNetworkArn, r.OdbNetworkArn),
			blackhole: r.State == ec2types.RouteStateBlackhole,
			fixed:     fixed(r),
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
