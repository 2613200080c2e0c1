package awsemu

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ec2State is the EC2 model: VPCs, subnets, security groups, route tables
// and instances. Its handlers are the EC2 actions; ELB and IMDS read it
// through ec2_state.go.
type ec2State struct {
	*common
	// lbs says which load balancers use a security group
	// (DeleteSecurityGroup's DependencyViolation).
	lbs *elbState
	// sgRuleLimit is the quota of ingress rules per security group.
	sgRuleLimit int
	// routeLimit is the quota of routes per route table (ec2_routes.go);
	// guarded by mu, SetRouteLimit changes it.
	routeLimit int
	// topologyTypes are the instance types with instance topology
	// (ec2_topology.go).
	topologyTypes []string

	mu              sync.RWMutex // guards the state below
	vpcs            table[VPC]
	subnets         table[Subnet]
	securityGroups  table[SecurityGroup]
	routeTables     table[RouteTable]
	instances       table[instanceRec]
	eniOwner        map[string]string // ENI ID -> instance ID
	visibilityDelay time.Duration
}

// newEC2State builds the EC2 model of a validated, defaulted fixture.
func newEC2State(c *common, f *Fixture) *ec2State {
	s := &ec2State{common: c, sgRuleLimit: f.SecurityGroupRuleLimit, routeLimit: f.RouteLimit, eniOwner: map[string]string{}}
	s.topologyTypes = f.TopologyInstanceTypes
	for i := range f.VPCs {
		s.vpcs.put(f.VPCs[i].ID, &f.VPCs[i])
	}
	for i := range f.Subnets {
		s.subnets.put(f.Subnets[i].ID, &f.Subnets[i])
	}
	for i := range f.SecurityGroups {
		s.securityGroups.put(f.SecurityGroups[i].ID, &f.SecurityGroups[i])
	}
	for i := range f.RouteTables {
		s.routeTables.put(f.RouteTables[i].ID, &f.RouteTables[i])
	}
	for _, in := range f.Instances {
		s.storeInstance(in, time.Time{})
	}
	return s
}

// ec2Service serves the EC2 query API (Version 2016-11-15).
func ec2Service(s *ec2State) *service {
	return &service{
		name: "ec2", signingName: "ec2", apiVersion: "2016-11-15",
		protocol: protoEC2Query, xmlns: "http://ec2.amazonaws.com/doc/2016-11-15/",
		actions: actionTable{
			"DescribeInstances":         s.describeInstances,
			"DescribeAvailabilityZones": s.describeAvailabilityZones,
			"DescribeSubnets":           s.describeSubnets,
			"DescribeSecurityGroups":    s.describeSecurityGroups,
			"DescribeRouteTables":       s.describeRouteTables,
			"DescribeVpcs":              s.describeVpcs,
			"DescribeInstanceTopology":  s.describeInstanceTopology,
			"CreateTags":                s.createTags,
			"DeleteTags":                s.deleteTags,
			// Security groups (ec2_sg.go).
			"CreateSecurityGroup":           s.createSecurityGroup,
			"DeleteSecurityGroup":           s.deleteSecurityGroup,
			"AuthorizeSecurityGroupIngress": s.authorizeSecurityGroupIngress,
			"RevokeSecurityGroupIngress":    s.revokeSecurityGroupIngress,
			// Routes (ec2_routes.go).
			"CreateRoute":             s.createRoute,
			"ReplaceRoute":            s.replaceRoute,
			"DeleteRoute":             s.deleteRoute,
			"ModifyInstanceAttribute": s.modifyInstanceAttribute,
			// Network interfaces (ec2_network_attr.go, ec2_network_describe.go).
			"ModifyNetworkInterfaceAttribute": s.modifyNetworkInterfaceAttribute,
			"DescribeNetworkInterfaces":       s.describeNetworkInterfaces,
		},
	}
}

// lister implements the common shape of EC2 Describe* calls: an ID list
// parameter (all must exist), filters and MaxResults/NextToken paging.
type lister[T any] struct {
	idParam   string // e.g. "InstanceId" for InstanceId.N
	prefix    string // e.g. "i-"
	notFound  string // error code for unknown IDs
	malformed string // error code for IDs without the prefix
	noun      string // "instance ID" in "The instance ID 'x' does not exist"
	filters   []string
	min, max  int  // MaxResults bounds
	noIDsPage bool // reject MaxResults together with IDs
	all       func() []*T
	get       func(id string) (*T, bool)
	values    func(x *T, filter string) []string
}

func (l lister[T]) run(form url.Values) (page []*T, next string, apiErr *apiError) {
	ids := indexedValues(form, l.idParam)
	filters, apiErr := parseFilters(form, l.filters...)
	if apiErr != nil {
		return nil, "", apiErr
	}
	limit, offset, apiErr := pageParams(form, l.min, l.max)
	if apiErr != nil {
		return nil, "", apiErr
	}
	if l.noIDsPage && limit > 0 && len(ids) > 0 {
		return nil, "", newAPIError(http.StatusBadRequest, "InvalidParameterCombination",
			"The parameter %sSet cannot be used with the parameter maxResults", strings.ToLower(l.idParam[:1])+l.idParam[1:])
	}
	var items []*T
	if len(ids) > 0 {
		var missing []string
		for _, id := range ids {
			if !strings.HasPrefix(id, l.prefix) {
				return nil, "", newAPIError(http.StatusBadRequest, l.malformed, "Invalid id: %q", id)
			}
			if x, ok := l.get(id); !ok {
				missing = append(missing, id)
			} else if !slices.Contains(items, x) {
				items = append(items, x)
			}
		}
		if len(missing) == 1 {
			return nil, "", newAPIError(http.StatusBadRequest, l.notFound, "The %s '%s' does not exist", l.noun, missing[0])
		} else if len(missing) > 1 {
			return nil, "", newAPIError(http.StatusBadRequest, l.notFound, "The %ss '%s' do not exist", l.noun, strings.Join(missing, ", "))
		}
	} else {
		items = l.all()
	}
	if len(filters) > 0 {
		items = slices.DeleteFunc(items, func(x *T) bool {
			return !matchFilters(filters, func(name string) []string { return l.values(x, name) })
		})
	}
	page, next = paginate(items, limit, offset)
	return page, next, nil
}

type describeInstancesResult struct {
	Reservations []xmlReservation `xml:"reservationSet>item"`
	NextToken    string           `xml:"nextToken,omitempty"`
}

func (s *ec2State) describeInstances(form url.Values) (any, *apiError) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	now := time.Now()
	l := lister[instanceRec]{
		idParam: "InstanceId", prefix: "i-", noun: "instance ID",
		notFound: "InvalidInstanceID.NotFound", malformed: "InvalidInstanceID.Malformed",
		filters: append([]string{"instance-id", "private-dns-name", "dns-name", "instance-state-name",
			"instance-state-code", "vpc-id", "subnet-id", "availability-zone", "instance-type", "image-id",
			"private-ip-address", "ip-address", "reservation-id", "iam-instance-profile.arn",
			"instance.group-id", "network-interface.network-interface-id",
			"network-interface.addresses.private-ip-address", "network-interface.mac-address"}, tagFilters...),
		min: 5, max: 1000, noIDsPage: true,
		all: func() []*instanceRec {
			all := s.instances.list()
			return slices.DeleteFunc(all, func(r *instanceRec) bool { return now.Before(r.visibleAt) })
		},
		get:    func(id string) (*instanceRec, bool) { return s.visibleInstance(id, now) },
		values: func(r *instanceRec, name string) []string { return instanceValues(&r.Instance, name) },
	}
	page, next, apiErr := l.run(form)
	if apiErr != nil {
		return nil, apiErr
	}
	res := describeInstancesResult{NextToken: next}
	for _, rec := range page {
		n := len(res.Reservations)
		if n == 0 || res.Reservations[n-1].ReservationID != rec.ReservationID {
			res.Reservations = append(res.Reservations, xmlReservation{ReservationID: rec.ReservationID, OwnerID: s.account})
			n++
		}
		res.Reservations[n-1].Instances = append(res.Reservations[n-1].Instances, s.xmlInstanceOf(&rec.Instance))
	}
	return res, nil
}

// instanceValues answers DescribeInstances filters.
func instanceValues(in *Instance, name string) []string {
	one := func(v string) []string { return []string{v} }
	eniValues := func(f func(e *ENI) []string) []string {
		var out []string
		for i := range in.ENIs {
			out = append(out, f(&in.ENIs[i])...)
		}
		return out
	}
	switch name {
	case "instance-id":
		return one(in.ID)
	case "private-dns-name":
		return one(in.PrivateDNSName)
	case "dns-name":
		return one(in.PublicDNSName)
	case "instance-state-name":
		return one(in.State)
	case "instance-state-code":
		return one(strconv.Itoa(int(instanceStateCodes[in.State])))
	case "vpc-id":
		return one(in.VPCID)
	case "subnet-id":
		return one(in.SubnetID)
	case "availability-zone":
		return one(in.AvailabilityZone)
	case "instance-type":
		return one(in.Type)
	case "image-id":
		return one(in.ImageID)
	case "private-ip-address":
		return one(in.PrivateIP)
	case "ip-address":
		return one(in.PublicIP)
	case "reservation-id":
		return one(in.ReservationID)
	case "iam-instance-profile.arn":
		return one(in.IAMInstanceProfileArn)
	case "instance.group-id":
		return in.SecurityGroupIDs
	case "network-interface.network-interface-id":
		return eniValues(func(e *ENI) []string { return []string{e.ID} })
	case "network-interface.mac-address":
		return eniValues(func(e *ENI) []string { return []string{e.MAC} })
	case "network-interface.addresses.private-ip-address":
		return eniValues(func(e *ENI) []string { return e.PrivateIPs })
	}
	return tagValues(in.Tags, name)
}

type describeAvailabilityZonesResult struct {
	Zones []xmlZone `xml:"availabilityZoneInfo>item"`
}

func (s *ec2State) describeAvailabilityZones(form url.Values) (any, *apiError) {
	filters, apiErr := parseFilters(form, "zone-name", "zone-id", "region-name", "state", "zone-type", "group-name")
	if apiErr != nil {
		return nil, apiErr
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	names, ids := indexedValues(form, "ZoneName"), indexedValues(form, "ZoneId")
	for _, n := range names {
		if !slices.ContainsFunc(s.zones, func(z Zone) bool { return z.Name == n }) {
			return nil, errInvalidParameterValue("Invalid availability zone: [%s]", n)
		}
	}
	for _, id := range ids {
		if !slices.ContainsFunc(s.zones, func(z Zone) bool { return z.ID == id }) {
			return nil, errInvalidParameterValue("Invalid availability zone ID: [%s]", id)
		}
	}
	var res describeAvailabilityZonesResult
	for _, z := range s.zones {
		if (len(names) > 0 || len(ids) > 0) && !slices.Contains(names, z.Name) && !slices.Contains(ids, z.ID) {
			continue
		}
		x := xmlZone{ZoneName: z.Name, ZoneID: z.ID, ZoneState: "available", RegionName: s.region,
			ZoneType: "availability-zone", OptInStatus: "opt-in-not-required", GroupName: s.region, NetworkBorderGroup: s.region}
		ok := matchFilters(filters, func(name string) []string {
			return []string{map[string]string{"zone-name": x.ZoneName, "zone-id": x.ZoneID, "region-name": x.RegionName,
				"state": x.ZoneState, "zone-type": x.ZoneType, "group-name": x.GroupName}[name]}
		})
		if ok {
			res.Zones = append(res.Zones, x)
		}
	}
	return res, nil
}

type returnResult struct {
	Return bool `xml:"return"`
}

// resourceTags finds the tag map of a taggable resource. Callers hold s.mu.
func (s *ec2State) resourceTags(id string, now time.Time) (*map[string]string, *apiError) {
	notFound := func(code, noun string) *apiError {
		return newAPIError(http.StatusBadRequest, code, "The %s '%s' does not exist", noun, id)
	}
	prefix, _, _ := strings.Cut(id, "-")
	switch prefix {
	case "i":
		if rec, ok := s.visibleInstance(id, now); ok {
			return &rec.Tags, nil
		}
		return nil, notFound("InvalidInstanceID.NotFound", "instance ID")
	case "subnet":
		if x, ok := s.subnets.get(id); ok {
			return &x.Tags, nil
		}
		return nil, notFound("InvalidSubnetID.NotFound", "subnet ID")
	case "sg":
		if x, ok := s.securityGroups.get(id); ok {
			return &x.Tags, nil
		}
		return nil, notFound("InvalidGroup.NotFound", "security group")
	case "rtb":
		if x, ok := s.routeTables.get(id); ok {
			return &x.Tags, nil
		}
		return nil, notFound("InvalidRouteTableID.NotFound", "routeTable ID")
	case "vpc":
		if x, ok := s.vpcs.get(id); ok {
			return &x.Tags, nil
		}
		return nil, notFound("InvalidVpcID.NotFound", "vpc ID")
	case "eni":
		eni, apiErr := s.attachedENI(id, now)
		if apiErr != nil {
			return nil, apiErr
		}
		return &eni.Tags, nil
	}
	return nil, newAPIError(http.StatusBadRequest, "InvalidID", "The ID '%s' is not valid", id)
}

// maxTaggedResources is EC2's limit on ResourceId.N in one CreateTags or
// DeleteTags call.
const maxTaggedResources = 1000

// lookupTagged resolves all ResourceId.N before anything changes, so a
// failing CreateTags/DeleteTags changes nothing. Callers hold s.mu.
func (s *ec2State) lookupTagged(form url.Values) ([]*map[string]string, *apiError) {
	ids := indexedValues(form, "ResourceId")
	if len(ids) == 0 {
		return nil, errMissingParameter("ResourceId")
	}
	// "Constraints: Up to 1000 resource IDs" (CreateTags, DeleteTags).
	if len(ids) > maxTaggedResources {
		return nil, newAPIError(http.StatusBadRequest, "ResourceCountExceeded",
			"You have exceeded the number of resources allowed for this request: %d resource IDs, the limit is %d", len(ids), maxTaggedResources)
	}
	now := time.Now()
	var out []*map[string]string
	for _, id := range ids {
		tags, apiErr := s.resourceTags(id, now)
		if apiErr != nil {
			return nil, apiErr
		}
		out = append(out, tags)
	}
	return out, nil
}

// maxTagsPerResource is EC2's limit on the user tags of one resource
// ("Each resource can have a maximum of 50 tags", CreateTags).
const maxTagsPerResource = 50

// userTagCount is how many tags count against maxTagsPerResource once
// tags are put on a resource holding have: a key it already holds is
// overwritten, not added, and aws:-prefixed tags (AWS's own) do not count
// ("Tags with this prefix do not count against your tags per resource
// limit", tag restrictions).
func userTagCount(have map[string]string, tags []tagParam) int {
	n := 0
	for k := range have {
		if !isAWSTag(k) {
			n++
		}
	}
	for _, t := range tags {
		if _, ok := have[t.Key]; !ok && !isAWSTag(t.Key) {
			n++
		}
	}
	return n
}

func isAWSTag(key string) bool { return strings.HasPrefix(strings.ToLower(key), "aws:") }

func (s *ec2State) createTags(form url.Values) (any, *apiError) {
	tags := parseTags(form)
	if len(tags) == 0 {
		return nil, errMissingParameter("Tag")
	}
	for _, t := range tags {
		switch {
		case t.Key == "":
			return nil, errInvalidParameterValue("Tag key must not be empty")
		case len(t.Key) > 128 || len(t.Value) > 256:
			return nil, errInvalidParameterValue("Tag key or value exceeds the maximum length")
		case strings.HasPrefix(strings.ToLower(t.Key), "aws:"):
			return nil, errInvalidParameterValue("Tag keys starting with 'aws:' are reserved for internal use")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	targets, apiErr := s.lookupTagged(form)
	if apiErr != nil {
		return nil, apiErr
	}
	// EC2 calls are all-or-nothing: one resource past the limit fails the
	// whole call, the others in it unchanged, and the message does not say
	// which resource it was.
	for _, m := range targets {
		if userTagCount(*m, tags) > maxTagsPerResource {
			return nil, newAPIError(http.StatusBadRequest, "TagLimitExceeded", "The maximum number of Tags for a resource has been reached.")
		}
	}
	for _, m := range targets {
		if *m == nil {
			*m = map[string]string{}
		}
		for _, t := range tags {
			(*m)[t.Key] = t.Value
		}
	}
	return returnResult{Return: true}, nil
}

func (s *ec2State) deleteTags(form url.Values) (any, *apiError) {
	tags := parseTags(form)
	s.mu.Lock()
	defer s.mu.Unlock()
	targets, apiErr := s.lookupTagged(form)
	if apiErr != nil {
		return nil, apiErr
	}
	for _, m := range targets {
		if len(tags) == 0 { // no Tag.N: delete every user tag
			clear(*m)
		}
		for _, t := range tags {
			if v, ok := (*m)[t.Key]; ok && (!t.HasValue || v == t.Value) {
				delete(*m, t.Key)
			}
		}
	}
	return returnResult{Return: true}, nil
}
