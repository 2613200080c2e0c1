package awsemu

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Route calls: CreateRoute, ReplaceRoute, DeleteRoute, and the
// ModifyInstanceAttribute SourceDestCheck switch a route's target needs.
// Error codes and messages are EC2's as observed in its answers.

// DefaultRouteLimit is AWS's default quota of routes per route table
// ("Routes per route table", non-propagated; adjustable up to 1,000);
// Fixture.RouteLimit overrides it. The VPC-local route is not counted.
const DefaultRouteLimit = 50

// Route states, as DescribeRouteTables reports them.
const (
	RouteStateActive    = "active"
	RouteStateBlackhole = "blackhole"
)

// routeTarget is a route's parsed destination and target.
type routeTarget struct {
	cidr, ipv6        string // exactly one is set
	gateway, instance string
	eni               string
}

func (t routeTarget) destination() string { return t.cidr + t.ipv6 }

// parseRouteRequest reads RouteTableId, the destination and the target of
// CreateRoute or ReplaceRoute. Callers hold s.mu.
func (s *ec2State) parseRouteRequest(form url.Values, needTarget bool) (*RouteTable, routeTarget, *apiError) {
	var t routeTarget
	rt, apiErr := s.routeTableParam(form)
	if apiErr != nil {
		return nil, t, apiErr
	}
	t.cidr, t.ipv6 = form.Get("DestinationCidrBlock"), form.Get("DestinationIpv6CidrBlock")
	switch {
	case t.cidr == "" && t.ipv6 == "":
		return nil, t, errMissingParameter("destinationCidrBlock or destinationIpv6CidrBlock")
	case t.cidr != "" && t.ipv6 != "":
		return nil, t, newAPIError(http.StatusBadRequest, "InvalidParameterCombination",
			"Only one of destinationCidrBlock and destinationIpv6CidrBlock may be specified")
	case t.cidr != "" && !canonicalPrefix(t.cidr, false):
		return nil, t, errInvalidParameterValue("Value (%s) for parameter destinationCidrBlock is invalid. This is not a valid CIDR block.", t.cidr)
	case t.ipv6 != "" && !canonicalPrefix(t.ipv6, true):
		return nil, t, errInvalidParameterValue("Value (%s) for parameter destinationIpv6CidrBlock is invalid. This is not a valid CIDR block.", t.ipv6)
	}
	if !needTarget {
		return rt, t, nil
	}
	for _, p := range []string{"NatGatewayId", "TransitGatewayId", "VpcPeeringConnectionId", "EgressOnlyInternetGatewayId",
		"LocalGatewayId", "CarrierGatewayId", "VpcEndpointId", "CoreNetworkArn", "DestinationPrefixListId"} {
		if form.Get(p) != "" {
			return nil, t, errInvalidParameterValue("%s is not emulated by awsemu: route to a gateway, an instance or a network interface", p)
		}
	}
	t.gateway, t.instance, t.eni = form.Get("GatewayId"), form.Get("InstanceId"), form.Get("NetworkInterfaceId")
	n := 0
	for _, v := range []string{t.gateway, t.instance, t.eni} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return nil, t, newAPIError(http.StatusBadRequest, "InvalidParameterCombination",
			"The request must contain exactly one of gatewayId, instanceId or networkInterfaceId")
	}
	if apiErr := s.resolveRouteTarget(rt, &t); apiErr != nil {
		return nil, t, apiErr
	}
	return rt, t, nil
}

// canonicalPrefix reports whether v is a CIDR block of the family asked
// for with no host bits set.
func canonicalPrefix(v string, ipv6 bool) bool {
	p, err := netip.ParsePrefix(v)
	return err == nil && p.Addr().Is6() == ipv6 && !p.Addr().Is4In6() && p.Masked() == p
}

// routeTableParam resolves RouteTableId. Callers hold s.mu.
func (s *ec2State) routeTableParam(form url.Values) (*RouteTable, *apiError) {
	id := form.Get("RouteTableId")
	switch {
	case id == "":
		return nil, errMissingParameter("routeTableId")
	case !strings.HasPrefix(id, "rtb-"):
		return nil, newAPIError(http.StatusBadRequest, "InvalidRouteTableId.Malformed", "Invalid id: \"%s\" (expecting \"rtb-...\")", id)
	}
	rt, ok := s.routeTables.get(id)
	if !ok {
		return nil, newAPIError(http.StatusBadRequest, "InvalidRouteTableID.NotFound", "The routeTable ID '%s' does not exist", id)
	}
	return rt, nil
}

// resolveRouteTarget checks the target and, as EC2 does, records an
// instance target by its primary network interface too. Callers hold s.mu.
func (s *ec2State) resolveRouteTarget(rt *RouteTable, t *routeTarget) *apiError {
	var vpc string
	switch {
	case t.gateway != "":
		// Gateways are not modelled: any internet or virtual private
		// gateway ID is taken to be attached to the table's VPC.
		if !strings.HasPrefix(t.gateway, "igw-") && !strings.HasPrefix(t.gateway, "vgw-") {
			return newAPIError(http.StatusBadRequest, "InvalidGatewayID.NotFound", "The gateway ID '%s' does not exist", t.gateway)
		}
		return nil
	case t.instance != "":
		rec, ok := s.visibleInstance(t.instance, time.Now())
		if !ok {
			return newAPIError(http.StatusBadRequest, "InvalidInstanceID.NotFound", "The instance ID '%s' does not exist", t.instance)
		}
		if len(rec.ENIs) > 1 {
			return newAPIError(http.StatusBadRequest, "InvalidInstanceID",
				"There are multiple interfaces attached to instance '%s'. Please specify an interface ID for the operation instead.", t.instance)
		}
		if len(rec.ENIs) == 1 {
			t.eni = rec.ENIs[0].ID
		}
		vpc = rec.VPCID
	default:
		owner, ok := s.eniOwner[t.eni]
		if !ok {
			return newAPIError(http.StatusBadRequest, "InvalidNetworkInterfaceID.NotFound", "The networkInterface ID '%s' does not exist", t.eni)
		}
		t.instance = owner
		if rec, ok := s.instances.get(owner); ok {
			vpc = rec.VPCID
		}
	}
	if vpc != "" && vpc != rt.VPCID {
		target := cmpOr(t.eni, t.instance)
		return errInvalidParameterValue("route table %s and network interface %s belong to different networks", rt.ID, target)
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// routeIndex finds the route to destination in rt (-1 if none).
func routeIndex(rt *RouteTable, destination string) int {
	return slices.IndexFunc(rt.Routes, func(r Route) bool { return r.destination() == destination })
}

func (r Route) destination() string { return r.DestinationCIDR + r.DestinationIPv6CIDR }

func (t routeTarget) route() Route {
	return Route{DestinationCIDR: t.cidr, DestinationIPv6CIDR: t.ipv6, GatewayID: t.gateway, InstanceID: t.instance, NetworkInterfaceID: t.eni}
}

// limitOfRoutes is the quota of routes per table.
func (s *ec2State) limitOfRoutes() int {
	if s.routeLimit > 0 {
		return s.routeLimit
	}
	return DefaultRouteLimit
}

// countedRoutes counts the routes the quota applies to (not the local one).
func countedRoutes(rt *RouteTable) int {
	n := 0
	for _, r := range rt.Routes {
		if r.GatewayID != "local" {
			n++
		}
	}
	return n
}

func (s *ec2State) createRoute(form url.Values) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt, t, apiErr := s.parseRouteRequest(form, true)
	if apiErr != nil {
		return nil, apiErr
	}
	if routeIndex(rt, t.destination()) >= 0 {
		return nil, newAPIError(http.StatusBadRequest, "RouteAlreadyExists", "The route identified by %s already exists.", t.destination())
	}
	if countedRoutes(rt) >= s.limitOfRoutes() {
		return nil, newAPIError(http.StatusBadRequest, "RouteLimitExceeded", "The maximum number of routes has been reached.")
	}
	rt.Routes = append(rt.Routes, t.route())
	return returnResult{Return: true}, nil
}

// replaceRoute changes the target of an existing route; it is not held to
// the quota (the number of routes does not change).
func (s *ec2State) replaceRoute(form url.Values) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt, t, apiErr := s.parseRouteRequest(form, true)
	if apiErr != nil {
		return nil, apiErr
	}
	i := routeIndex(rt, t.destination())
	switch {
	case i < 0:
		return nil, errInvalidParameterValue("There is no route defined for '%s' in the route table. Use CreateRoute instead.", t.destination())
	case rt.Routes[i].GatewayID == "local":
		return nil, errInvalidParameterValue("cannot replace local route %s in route table %s: awsemu does not model local route targets", t.destination(), rt.ID)
	}
	rt.Routes[i] = t.route()
	return returnResult{Return: true}, nil
}

func (s *ec2State) deleteRoute(form url.Values) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt, t, apiErr := s.parseRouteRequest(form, false)
	if apiErr != nil {
		return nil, apiErr
	}
	param := "destination-cidr-block"
	if t.ipv6 != "" {
		param = "destination-ipv6-cidr-block"
	}
	i := routeIndex(rt, t.destination())
	switch {
	case i < 0:
		return nil, newAPIError(http.StatusBadRequest, "InvalidRoute.NotFound", "no route with %s %s in route table %s", param, t.destination(), rt.ID)
	case rt.Routes[i].GatewayID == "local":
		return nil, errInvalidParameterValue("cannot remove local route %s in route table %s", t.destination(), rt.ID)
	}
	rt.Routes = slices.Delete(rt.Routes, i, i+1)
	return returnResult{Return: true}, nil
}

// routeView is a stored route as DescribeRouteTables shows it now: the
// instance behind a network interface target, and blackhole once the
// target instance is shutting down, terminated or gone, or its network
// interface is. A terminated instance is still named (EC2 keeps showing
// it while it describes the instance); a removed one is not. Callers hold
// s.mu.
func (s *ec2State) routeView(r Route) Route {
	if r.GatewayID != "" {
		if r.State == "" {
			r.State = RouteStateActive
		}
		return r
	}
	gone := false
	if r.NetworkInterfaceID != "" {
		if owner, ok := s.eniOwner[r.NetworkInterfaceID]; ok {
			r.InstanceID = owner
		} else {
			gone = true
		}
	}
	if r.InstanceID != "" {
		rec, ok := s.instances.get(r.InstanceID)
		switch {
		case !ok:
			gone, r.InstanceID = true, ""
		case rec.State == "shutting-down" || rec.State == "terminated":
			gone = true
		}
	}
	switch {
	case gone:
		r.State = RouteStateBlackhole
	case r.State == "":
		r.State = RouteStateActive
	}
	return r
}

// routeValues answers the route.* filters of DescribeRouteTables from the
// routes as shown. Callers hold s.mu.
func (s *ec2State) routeValues(rt *RouteTable, filter string) []string {
	var out []string
	for _, stored := range rt.Routes {
		r := s.routeView(stored)
		var v string
		switch filter {
		case "route.destination-cidr-block":
			v = r.DestinationCIDR
		case "route.destination-ipv6-cidr-block":
			v = r.DestinationIPv6CIDR
		case "route.instance-id":
			v = r.InstanceID
		case "route.gateway-id":
			v = r.GatewayID
		case "route.network-interface-id":
			v = r.NetworkInterfaceID
		case "route.state":
			v = r.State
		case "route.origin":
			v = routeOrigin(r)
		}
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// routeFilters are the route.* filters DescribeRouteTables answers.
var routeFilters = []string{"route.destination-cidr-block", "route.destination-ipv6-cidr-block", "route.instance-id",
	"route.gateway-id", "route.network-interface-id", "route.state", "route.origin"}

func routeOrigin(r Route) string {
	if r.GatewayID == "local" {
		return "CreateRouteTable"
	}
	return "CreateRoute"
}

// modifyInstanceAttribute sets SourceDestCheck, in either request form:
// SourceDestCheck.Value (what the SDKs send) or Attribute=sourceDestCheck
// with Value, on an instance with at most one network interface. The
// emulator models no other attribute.
func (s *ec2State) modifyInstanceAttribute(form url.Values) (any, *apiError) {
	id := form.Get("InstanceId")
	if id == "" {
		return nil, errMissingParameter("instanceId")
	}
	var raw string
	switch {
	case form.Has("SourceDestCheck.Value"):
		raw = form.Get("SourceDestCheck.Value")
	case strings.EqualFold(form.Get("Attribute"), "sourceDestCheck"):
		raw = form.Get("Value")
	default:
		return nil, errInvalidParameterValue("awsemu models only the sourceDestCheck attribute of ModifyInstanceAttribute")
	}
	v, err := strconv.ParseBool(raw)
	if err != nil {
		return nil, errInvalidParameterValue("Value (%s) for parameter sourceDestCheck is invalid. Expected: 'true' or 'false'.", raw)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.visibleInstance(id, time.Now())
	if !ok {
		return nil, newAPIError(http.StatusBadRequest, "InvalidInstanceID.NotFound", "The instance ID '%s' does not exist", id)
	}
	// The check is each interface's; the instance's attribute is its
	// primary interface's, and EC2 refuses to guess which one is meant
	// when there are several (ec2_network_attr.go).
	if len(rec.ENIs) > 1 {
		return nil, errMultipleInterfaces(id)
	}
	rec.SourceDestCheck = &v
	for i := range rec.ENIs {
		rec.ENIs[i].SourceDestCheck = nil // the instance's, now v
	}
	return returnResult{Return: true}, nil
}

// validateRoutes checks a fixture table's routes: one well-formed
// destination each, no destination twice, at most one target.
func validateRoutes(rt *RouteTable) []error {
	var errs []error
	seen := map[string]bool{}
	for i, r := range rt.Routes {
		where := fmt.Sprintf("routes[%d]", i)
		switch {
		case (r.DestinationCIDR == "") == (r.DestinationIPv6CIDR == ""):
			errs = append(errs, fmt.Errorf("%s: set exactly one of destinationCidr and destinationIpv6Cidr", where))
		case r.DestinationCIDR != "" && !canonicalPrefix(r.DestinationCIDR, false):
			errs = append(errs, fmt.Errorf("%s: destinationCidr %q is not an IPv4 CIDR block without host bits", where, r.DestinationCIDR))
		case r.DestinationIPv6CIDR != "" && !canonicalPrefix(r.DestinationIPv6CIDR, true):
			errs = append(errs, fmt.Errorf("%s: destinationIpv6Cidr %q is not an IPv6 CIDR block without host bits", where, r.DestinationIPv6CIDR))
		case seen[r.destination()]:
			errs = append(errs, fmt.Errorf("%s: duplicate destination %s", where, r.destination()))
		}
		seen[r.destination()] = true
		if r.State != "" && r.State != RouteStateActive && r.State != RouteStateBlackhole {
			errs = append(errs, fmt.Errorf("%s: state %q is not active or blackhole", where, r.State))
		}
	}
	return errs
}

// The Go API to routes, for tests.

// RouteTable returns a copy of a route table with its routes as
// DescribeRouteTables shows them now (state, and the instance behind a
// network interface target).
func (s *Server) RouteTable(id string) (RouteTable, bool) {
	e := s.ec2
	e.mu.RLock()
	defer e.mu.RUnlock()
	rt, ok := e.routeTables.get(id)
	if !ok {
		return RouteTable{}, false
	}
	c := rt.clone()
	for i := range c.Routes {
		c.Routes[i] = e.routeView(c.Routes[i])
	}
	return c, true
}

// AddRouteTable adds a route table to a VPC of the server (its local route
// is added as for fixtures), as a user creating one outside the CCM would.
func (s *Server) AddRouteTable(rt RouteTable) error {
	e := s.ec2
	e.mu.Lock()
	defer e.mu.Unlock()
	rt = rt.clone()
	if !strings.HasPrefix(rt.ID, "rtb-") {
		return fmt.Errorf("awsemu: route table id %q must start with \"rtb-\"", rt.ID)
	}
	if _, dup := e.routeTables.get(rt.ID); dup {
		return fmt.Errorf("awsemu: route table %s already exists", rt.ID)
	}
	vpc, ok := e.vpcs.get(rt.VPCID)
	if !ok {
		return fmt.Errorf("awsemu: route table %s: vpcId %q does not exist", rt.ID, rt.VPCID)
	}
	for _, id := range rt.SubnetIDs {
		if sn, ok := e.subnets.get(id); !ok || sn.VPCID != rt.VPCID {
			return fmt.Errorf("awsemu: route table %s: subnet %q is not a subnet of %s", rt.ID, id, rt.VPCID)
		}
	}
	rt.addLocalRoute(vpc.CIDR)
	if err := errors.Join(validateRoutes(&rt)...); err != nil {
		return fmt.Errorf("awsemu: route table %s: %w", rt.ID, err)
	}
	e.routeTables.put(rt.ID, &rt)
	return nil
}

// SetRouteLimit sets the quota of routes per route table (0 = the AWS
// default, DefaultRouteLimit), as a Service Quotas increase would.
func (s *Server) SetRouteLimit(n int) {
	s.ec2.mu.Lock()
	defer s.ec2.mu.Unlock()
	s.ec2.routeLimit = n
}
