package awsemu

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ec2Service emulates the EC2 query API (Version 2016-11-15).
type ec2Service struct{ s *Server }

func (*ec2Service) name() string        { return "ec2" }
func (*ec2Service) signingName() string { return "ec2" }
func (*ec2Service) apiVersion() string  { return "2016-11-15" }
func (*ec2Service) protocol() protocol  { return protoEC2Query }
func (*ec2Service) xmlns() string       { return "http://ec2.amazonaws.com/doc/2016-11-15/" }

func (e *ec2Service) handle(_ context.Context, action string, form url.Values) (any, *apiError) {
	s := e.s
	switch action {
	case "DescribeInstances":
		return s.describeInstances(form)
	case "DescribeAvailabilityZones":
		return s.describeAvailabilityZones(form)
	case "DescribeSubnets":
		return s.describeSubnets(form)
	case "DescribeSecurityGroups":
		return s.describeSecurityGroups(form)
	case "DescribeRouteTables":
		return s.describeRouteTables(form)
	case "DescribeVpcs":
		return s.describeVpcs(form)
	case "CreateTags":
		return s.createTags(form)
	case "DeleteTags":
		return s.deleteTags(form)
	}
	if h, ok := ec2SGActions[action]; ok {
		return h(s, form)
	}
	return nil, errInvalidAction(action, "ec2")
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

func (s *Server) describeInstances(form url.Values) (any, *apiError) {
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

func (s *Server) describeAvailabilityZones(form url.Values) (any, *apiError) {
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
func (s *Server) resourceTags(id string, now time.Time) (*map[string]string, *apiError) {
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
	}
	return nil, newAPIError(http.StatusBadRequest, "InvalidID", "The ID '%s' is not valid", id)
}

// lookupTagged resolves all ResourceId.N before anything changes, so a
// failing CreateTags/DeleteTags changes nothing. Callers hold s.mu.
func (s *Server) lookupTagged(form url.Values) ([]*map[string]string, *apiError) {
	ids := indexedValues(form, "ResourceId")
	if len(ids) == 0 {
		return nil, errMissingParameter("ResourceId")
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

func (s *Server) createTags(form url.Values) (any, *apiError) {
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
	for _, m := range targets {
		n := len(*m)
		for _, t := range tags {
			if _, ok := (*m)[t.Key]; !ok {
				n++
			}
		}
		if n > 50 {
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

func (s *Server) deleteTags(form url.Values) (any, *apiError) {
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
