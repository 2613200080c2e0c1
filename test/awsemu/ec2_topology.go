package awsemu

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// DefaultTopologyInstanceTypes are the instance types EC2 documents instance
// topology for (API reference of DescribeInstanceTopology, "Supported
// instance types"); p6-b200 reports four network-node layers, the others
// three. A Fixture's TopologyInstanceTypes replaces the list.
var DefaultTopologyInstanceTypes = []string{
	"hpc6a.48xlarge", "hpc6id.32xlarge", "hpc7a.12xlarge", "hpc7a.24xlarge", "hpc7a.48xlarge", "hpc7a.96xlarge",
	"hpc7g.4xlarge", "hpc7g.8xlarge", "hpc7g.16xlarge",
	"p3dn.24xlarge", "p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge",
	"trn1.2xlarge", "trn1.32xlarge", "trn1n.32xlarge", "trn2.48xlarge", "trn2u.48xlarge",
	"p6-b200.48xlarge",
}

// DescribeInstanceTopology's limits (API reference): at most 100 instance
// IDs and 100 placement group names; MaxResults 1..100, default 20, and
// not together with instance IDs.
const (
	topologyMaxIDs      = 100
	topologyDefaultPage = 20
	topologyMaxPage     = 100
)

type xmlInstanceTopology struct {
	InstanceID       string   `xml:"instanceId"`
	InstanceType     string   `xml:"instanceType"`
	GroupName        string   `xml:"groupName,omitempty"`
	NetworkNodes     []string `xml:"networkNodeSet>item"`
	AvailabilityZone string   `xml:"availabilityZone"`
	ZoneID           string   `xml:"zoneId"`
}

type describeInstanceTopologyResult struct {
	Instances []xmlInstanceTopology `xml:"instanceSet>item"`
	NextToken string                `xml:"nextToken,omitempty"`
}

// describeInstanceTopology answers for the visible, not terminated
// instances of a topology-supported type (or with NetworkNodes of their
// own); others are left out, which is what the CCMs read as "type not
// supported". A pending, stopping or stopped instance is listed without
// network nodes, as EC2 documents for instances not running. Unknown
// instance IDs are left out rather than failing the call: EC2 documents
// no NotFound error for this action.
func (s *ec2State) describeInstanceTopology(form url.Values) (any, *apiError) {
	ids := indexedValues(form, "InstanceId")
	groups := indexedValues(form, "GroupName")
	if len(ids) > topologyMaxIDs {
		return nil, errInvalidParameterValue("instance-ids cannot contain over %d values.", topologyMaxIDs)
	}
	if len(groups) > topologyMaxIDs {
		return nil, errInvalidParameterValue("group-names cannot contain over %d values.", topologyMaxIDs)
	}
	for _, id := range ids {
		if !strings.HasPrefix(id, "i-") {
			return nil, newAPIError(http.StatusBadRequest, "InvalidInstanceID.Malformed", "Invalid id: %q", id)
		}
	}
	filters, apiErr := parseFilters(form, "availability-zone", "instance-type", "zone-id")
	if apiErr != nil {
		return nil, apiErr
	}
	limit, offset, apiErr := pageParams(form, 1, topologyMaxPage)
	if apiErr != nil {
		return nil, apiErr
	}
	if limit > 0 && len(ids) > 0 {
		return nil, newAPIError(http.StatusBadRequest, "InvalidParameterCombination",
			"The parameter instanceIdSet cannot be used with the parameter maxResults")
	}
	if limit == 0 {
		limit = topologyDefaultPage
	}

	s.mu.RLock()
	defer s.mu.RUnlock()
	now := time.Now()
	var items []xmlInstanceTopology
	for _, rec := range s.instances.list() {
		in := &rec.Instance
		if now.Before(rec.visibleAt) || in.State == "terminated" || !s.hasTopology(in) {
			continue
		}
		if len(ids) > 0 && !slices.Contains(ids, in.ID) || len(groups) > 0 && !slices.Contains(groups, in.PlacementGroup) {
			continue
		}
		x := xmlInstanceTopology{InstanceID: in.ID, InstanceType: in.Type, GroupName: in.PlacementGroup,
			AvailabilityZone: in.AvailabilityZone, ZoneID: s.zoneID(in.AvailabilityZone)}
		if !matchFilters(filters, func(name string) []string {
			switch name {
			case "availability-zone":
				return []string{x.AvailabilityZone}
			case "instance-type":
				return []string{x.InstanceType}
			}
			return []string{x.ZoneID}
		}) {
			continue
		}
		if in.State == "running" {
			x.NetworkNodes = s.networkNodes(in)
		}
		items = append(items, x)
	}
	page, next := paginate(items, limit, offset)
	return describeInstanceTopologyResult{Instances: page, NextToken: next}, nil
}

// hasTopology: the instance has network nodes of its own, or its type is
// one EC2 reports topology for. Callers hold s.mu.
func (s *ec2State) hasTopology(in *Instance) bool {
	return len(in.NetworkNodes) > 0 || slices.Contains(s.topologyTypes, in.Type)
}

// networkNodes returns the instance's own network nodes or derives them:
// one spine per zone, one of four blocks per zone, one host-level node per
// instance (four layers for p6-b200, as EC2 reports). Callers hold s.mu.
func (s *ec2State) networkNodes(in *Instance) []string {
	if len(in.NetworkNodes) > 0 {
		return slices.Clone(in.NetworkNodes)
	}
	node := func(parts ...string) string {
		h := fnv.New64a()
		for _, p := range parts {
			h.Write([]byte(p))
			h.Write([]byte{0})
		}
		return fmt.Sprintf("nn-%017x", h.Sum64()>>4)
	}
	block := fmt.Sprint(fnvOf(in.ID) % 4)
	nodes := []string{node(in.AvailabilityZone), node(in.AvailabilityZone, block), node(in.ID)}
	if strings.HasPrefix(in.Type, "p6-") {
		nodes = append(nodes, node(in.ID, "gpu"))
	}
	return nodes
}

func fnvOf(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
