package lb

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/lbconfig"
)

// Subnet role tags, as upstream reads them (presence only).
const (
	roleELBTag         = "kubernetes.io/role/elb"
	roleInternalELBTag = "kubernetes.io/role/internal-elb"
)

// subnet is what subnet discovery needs of a subnet.
type subnet struct {
	ID, Zone, CIDR string
	Tags           map[string]string
	Public         bool
	// ZoneType is availability-zone, local-zone or wavelength-zone.
	ZoneType string
}

// networkCache holds the VPC's subnets, which are public, and zone types,
// shared by all Services and refreshed after NetworkMaxAge: subnet
// discovery costs three calls per period, not per sync.
type networkCache struct {
	r *Reconciler

	mu      sync.Mutex
	at      time.Time
	subnets []subnet
}

// get returns the VPC's subnets, refreshing them when stale or force.
func (n *networkCache) get(ctx context.Context, force bool) ([]subnet, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !force && !n.at.IsZero() && n.r.Clock.Since(n.at) < n.r.Options.NetworkMaxAge {
		return n.subnets, nil
	}
	subnets, err := n.load(ctx)
	if err != nil {
		return nil, err
	}
	n.subnets, n.at = subnets, n.r.Clock.Now()
	return subnets, nil
}

func (n *networkCache) load(ctx context.Context) ([]subnet, error) {
	api := n.r.EC2
	vpc := []ec2types.Filter{{Name: aws.String("vpc-id"), Values: []string{n.r.Env.VPCID}}}
	var out []subnet
	var token *string
	for {
		page, err := api.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: vpc, NextToken: token})
		if err != nil {
			return nil, fmt.Errorf("describe subnets of %s: %w", n.r.Env.VPCID, err)
		}
		for _, s := range page.Subnets {
			out = append(out, subnet{ID: aws.ToString(s.SubnetId), Zone: aws.ToString(s.AvailabilityZone), CIDR: aws.ToString(s.CidrBlock), Tags: ec2Tags(s.Tags)})
		}
		if token = page.NextToken; token == nil {
			break
		}
	}
	// A subnet is public when its route table (explicit, else the VPC's
	// main one) routes through an internet gateway.
	mainPublic := false
	explicit := map[string]bool{}
	token = nil
	for {
		page, err := api.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: vpc, NextToken: token})
		if err != nil {
			return nil, fmt.Errorf("describe route tables of %s: %w", n.r.Env.VPCID, err)
		}
		for _, rt := range page.RouteTables {
			public := slices.ContainsFunc(rt.Routes, func(r ec2types.Route) bool { return strings.HasPrefix(aws.ToString(r.GatewayId), "igw") })
			for _, a := range rt.Associations {
				if aws.ToBool(a.Main) {
					mainPublic = public
				} else if id := aws.ToString(a.SubnetId); id != "" {
					explicit[id] = public
				}
			}
		}
		if token = page.NextToken; token == nil {
			break
		}
	}
	zones, err := api.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{})
	if err != nil {
		return nil, fmt.Errorf("describe availability zones: %w", err)
	}
	zoneType := map[string]string{}
	for _, z := range zones.AvailabilityZones {
		zoneType[aws.ToString(z.ZoneName)] = aws.ToString(z.ZoneType)
	}
	for i := range out {
		public, ok := explicit[out[i].ID]
		if !ok {
			public = mainPublic
		}
		out[i].Public = public
		out[i].ZoneType = zoneType[out[i].Zone]
	}
	return out, nil
}

// subnetsFor returns the subnets a new or existing load balancer of cfg
// should use: the Service's subnets annotation, resolved by ID or Name tag,
// else one discovered subnet per availability zone.
func (r *Reconciler) subnetsFor(ctx context.Context, cfg *lbconfig.Config) ([]subnet, error) {
	all, err := r.network.get(ctx, false)
	if err != nil {
		return nil, err
	}
	if len(cfg.Subnets) > 0 {
		picked, missing := resolveSubnets(all, cfg.Subnets)
		if len(missing) > 0 {
			// A subnet made since the last refresh: look once more.
			if all, err = r.network.get(ctx, true); err != nil {
				return nil, err
			}
			picked, missing = resolveSubnets(all, cfg.Subnets)
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%s: no subnet in %s has the ID or Name tag %s", lbconfig.KeySubnets, r.Env.VPCID, strings.Join(missing, ", "))
		}
		return picked, nil
	}
	picked := discoverSubnets(all, r.Env.ClusterID, cfg.Scheme == lbconfig.SchemeInternal)
	if len(picked) == 0 {
		return nil, fmt.Errorf("could not find any suitable subnets for creating the load balancer in %s: tag one subnet per zone with %s (and %s for internet-facing, %s for internal load balancers), or set %s",
			r.Env.VPCID, clustertag.Key(r.Env.ClusterID), roleELBTag, roleInternalELBTag, lbconfig.KeySubnets)
	}
	return picked, nil
}

// resolveSubnets finds each ref by ID (subnet-...) or Name tag.
func resolveSubnets(all []subnet, refs []string) (picked []subnet, missing []string) {
	for _, ref := range refs {
		i := slices.IndexFunc(all, func(s subnet) bool {
			if strings.HasPrefix(ref, "subnet-") {
				return s.ID == ref
			}
			return s.Tags["Name"] == ref
		})
		if i < 0 {
			missing = append(missing, ref)
			continue
		}
		if !slices.ContainsFunc(picked, func(s subnet) bool { return s.ID == all[i].ID }) {
			picked = append(picked, all[i])
		}
	}
	return picked, missing
}

// discoverSubnets applies upstream's rules: candidates carry this cluster's
// tag or no cluster tag at all; internet-facing load balancers skip private
// subnets; only availability zones (not Local or Wavelength zones); one
// subnet per zone, preferring the role tag, then this cluster's tag, then
// the smallest ID. The result is sorted by zone.
func discoverSubnets(all []subnet, clusterID string, internal bool) []subnet {
	role := roleELBTag
	if internal {
		role = roleInternalELBTag
	}
	mine := clustertag.Key(clusterID)
	score := func(s subnet) (int, int) {
		_, hasRole := s.Tags[role]
		return b2i(hasRole), b2i(clustertag.Has(s.Tags, clusterID))
	}
	best := map[string]subnet{}
	for _, s := range all {
		if !clusterCandidate(s.Tags, mine) || (!internal && !s.Public) {
			continue
		}
		if s.ZoneType != "" && s.ZoneType != "availability-zone" {
			continue
		}
		cur, ok := best[s.Zone]
		if !ok {
			best[s.Zone] = s
			continue
		}
		r1, m1 := score(s)
		r0, m0 := score(cur)
		if r1 > r0 || (r1 == r0 && m1 > m0) || (r1 == r0 && m1 == m0 && s.ID < cur.ID) {
			best[s.Zone] = s
		}
	}
	out := make([]subnet, 0, len(best))
	for _, s := range best {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b subnet) int { return strings.Compare(a.Zone, b.Zone) })
	return out
}

// clusterCandidate: tagged for this cluster, or for no cluster at all.
func clusterCandidate(tags map[string]string, mine string) bool {
	if _, ok := tags[mine]; ok {
		return true
	}
	for k := range tags {
		if strings.HasPrefix(k, clustertag.Prefix) {
			return false
		}
	}
	return true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func subnetIDs(ss []subnet) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}

func ec2Tags(tags []ec2types.Tag) map[string]string {
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}
