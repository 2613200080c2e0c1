package lb

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/awsccmctl/awsccmctl/internal/lbconfig"
)

func TestDiscoverSubnets(t *testing.T) {
	const (
		mine  = "kubernetes.io/cluster/" + testCluster
		other = "kubernetes.io/cluster/other"
	)
	pub := func(id, zone string, tags ...string) subnet {
		s := subnet{ID: id, Zone: zone, Public: true, ZoneType: "availability-zone", Tags: map[string]string{}}
		for _, k := range tags {
			s.Tags[k] = ""
		}
		return s
	}
	priv := func(id, zone string, tags ...string) subnet {
		s := pub(id, zone, tags...)
		s.Public = false
		return s
	}
	zoneType := func(s subnet, zt string) subnet { s.ZoneType = zt; return s }
	withTag := func(s subnet, k, v string) subnet { s.Tags[k] = v; return s }

	tests := []struct {
		name     string
		all      []subnet
		internal bool
		want     []string
	}{
		{
			name: "another cluster's subnet skipped even with role tag and smaller ID",
			all:  []subnet{pub("subnet-1", "a", other, roleELBTag), pub("subnet-2", "a")},
			want: []string{"subnet-2"},
		},
		{
			name: "another cluster's only subnet leaves the zone out",
			all:  []subnet{pub("subnet-1", "a", other), pub("subnet-2", "b")},
			want: []string{"subnet-2"},
		},
		{
			name: "shared with another cluster but tagged for this one is a candidate",
			all:  []subnet{pub("subnet-1", "a", other, mine)},
			want: []string{"subnet-1"},
		},
		{
			name: "internet-facing skips private subnets",
			all:  []subnet{priv("subnet-1", "a", roleELBTag, mine), pub("subnet-2", "a"), priv("subnet-3", "b", roleELBTag)},
			want: []string{"subnet-2"},
		},
		{
			name:     "internal accepts private and public subnets",
			all:      []subnet{priv("subnet-1", "a"), pub("subnet-2", "b")},
			internal: true,
			want:     []string{"subnet-1", "subnet-2"},
		},
		{
			name: "Local and Wavelength zones skipped",
			all: []subnet{
				zoneType(pub("subnet-1", "us-east-1-bos-1a", roleELBTag), "local-zone"),
				zoneType(pub("subnet-2", "us-east-1-wl1-bos-wlz-1", roleELBTag), "wavelength-zone"),
				pub("subnet-3", "us-east-1a"),
				zoneType(pub("subnet-4", "us-east-1b"), ""), // zone type unknown: kept
			},
			want: []string{"subnet-3", "subnet-4"},
		},
		{
			name: "role tag beats cluster tag and smaller ID",
			all:  []subnet{pub("subnet-1", "a", mine), pub("subnet-3", "a", roleELBTag), pub("subnet-2", "a")},
			want: []string{"subnet-3"},
		},
		{
			name: "role tag counts by presence only",
			all:  []subnet{pub("subnet-1", "a", mine), withTag(pub("subnet-9", "a"), roleELBTag, "0")},
			want: []string{"subnet-9"},
		},
		{
			name: "internet-facing ignores the internal-elb role",
			all:  []subnet{pub("subnet-1", "a", roleInternalELBTag), pub("subnet-2", "a", roleELBTag)},
			want: []string{"subnet-2"},
		},
		{
			name:     "internal prefers the internal-elb role",
			all:      []subnet{pub("subnet-1", "a", roleELBTag), priv("subnet-2", "a", roleInternalELBTag)},
			internal: true,
			want:     []string{"subnet-2"},
		},
		{
			name: "cluster tag beats smaller ID",
			all:  []subnet{pub("subnet-1", "a"), pub("subnet-2", "a", mine)},
			want: []string{"subnet-2"},
		},
		{
			name: "cluster tag beats smaller ID, other order",
			all:  []subnet{pub("subnet-2", "a", mine), pub("subnet-1", "a")},
			want: []string{"subnet-2"},
		},
		{
			name: "smallest ID, larger first",
			all:  []subnet{pub("subnet-b", "a", roleELBTag), pub("subnet-a", "a", roleELBTag)},
			want: []string{"subnet-a"},
		},
		{
			name: "smallest ID, smaller first",
			all:  []subnet{pub("subnet-a", "a", mine), pub("subnet-c", "a", mine), pub("subnet-b", "a", mine)},
			want: []string{"subnet-a"},
		},
		{
			name: "one per zone, sorted by zone",
			all: []subnet{pub("subnet-1", "us-east-1c"), pub("subnet-2", "us-east-1a"), pub("subnet-3", "us-east-1b"), pub("subnet-0", "us-east-1c"),
				pub("subnet-5", "us-east-1f"), pub("subnet-4", "us-east-1d")},
			want: []string{"subnet-2", "subnet-3", "subnet-0", "subnet-4", "subnet-5"},
		},
		{
			name: "nothing suitable",
			all:  []subnet{priv("subnet-1", "a"), pub("subnet-2", "b", other)},
			want: []string{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Several rounds: map order must not leak into the result.
			for range 20 {
				got := subnetIDs(discoverSubnets(tc.all, testCluster, tc.internal))
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("discoverSubnets = %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// Upstream prefers a subnet with "the cluster tag" using hasClusterTag,
// which also accepts the legacy KubernetesCluster=<id> tag.
func TestDiscoverSubnetsLegacyClusterTag(t *testing.T) {
	all := []subnet{
		{ID: "subnet-1", Zone: "a", Public: true, Tags: map[string]string{}},
		{ID: "subnet-2", Zone: "a", Public: true, Tags: map[string]string{"KubernetesCluster": testCluster}},
	}
	if got := subnetIDs(discoverSubnets(all, testCluster, false)); !slices.Equal(got, []string{"subnet-2"}) {
		t.Errorf("discoverSubnets = %v, want [subnet-2]: a subnet tagged KubernetesCluster=%s carries this cluster's tag, as upstream's hasClusterTag counts it", got, testCluster)
	}
}

func TestResolveSubnets(t *testing.T) {
	all := []subnet{
		{ID: "subnet-1", Zone: "a", Tags: map[string]string{"Name": "public-a"}},
		{ID: "subnet-2", Zone: "b", Tags: map[string]string{"Name": "public-b"}},
		{ID: "subnet-3", Zone: "c", Tags: map[string]string{"Name": "subnet-1"}}, // a Name that looks like an ID
	}
	tests := []struct {
		name        string
		refs        []string
		want        []string
		wantMissing []string
	}{
		{"by ID", []string{"subnet-2", "subnet-1"}, []string{"subnet-2", "subnet-1"}, nil},
		{"by Name", []string{"public-b", "public-a"}, []string{"subnet-2", "subnet-1"}, nil},
		{"ID-like refs match IDs only", []string{"subnet-1"}, []string{"subnet-1"}, nil},
		{"missing reported", []string{"subnet-1", "subnet-9", "nope"}, []string{"subnet-1"}, []string{"subnet-9", "nope"}},
		{"duplicates collapsed", []string{"subnet-1", "public-a", "subnet-1", "public-b"}, []string{"subnet-1", "subnet-2"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			picked, missing := resolveSubnets(all, tc.refs)
			if got := subnetIDs(picked); !slices.Equal(got, tc.want) {
				t.Errorf("picked %v, want %v", got, tc.want)
			}
			if !slices.Equal(missing, tc.wantMissing) {
				t.Errorf("missing %v, want %v", missing, tc.wantMissing)
			}
		})
	}
}

// fakeNetwork is an EC2 with subnets, route tables and zones that counts
// the calls.
type fakeNetwork struct {
	subnets    []ec2types.Subnet
	tables     []ec2types.RouteTable
	zones      []ec2types.AvailabilityZone
	calls      map[string]int
	subnetsErr error
}

func (f *fakeNetwork) ec2(t *testing.T) EC2 {
	f.calls = map[string]int{}
	checkVPC := func(filters []ec2types.Filter) {
		t.Helper()
		if len(filters) != 1 || aws.ToString(filters[0].Name) != "vpc-id" || !slices.Equal(filters[0].Values, []string{testVPC}) {
			t.Errorf("filters %+v, want vpc-id=%s", filters, testVPC)
		}
	}
	return EC2{
		DescribeSubnets: func(_ context.Context, in *ec2.DescribeSubnetsInput, _ ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error) {
			f.calls["DescribeSubnets"]++
			checkVPC(in.Filters)
			if f.subnetsErr != nil {
				return nil, f.subnetsErr
			}
			// Two pages: the second subnet onwards on page 2.
			if in.NextToken == nil && len(f.subnets) > 1 {
				return &ec2.DescribeSubnetsOutput{Subnets: f.subnets[:1], NextToken: aws.String("p2")}, nil
			}
			if in.NextToken != nil {
				return &ec2.DescribeSubnetsOutput{Subnets: f.subnets[1:]}, nil
			}
			return &ec2.DescribeSubnetsOutput{Subnets: f.subnets}, nil
		},
		DescribeRouteTables: func(_ context.Context, in *ec2.DescribeRouteTablesInput, _ ...func(*ec2.Options)) (*ec2.DescribeRouteTablesOutput, error) {
			f.calls["DescribeRouteTables"]++
			checkVPC(in.Filters)
			return &ec2.DescribeRouteTablesOutput{RouteTables: f.tables}, nil
		},
		DescribeAvailabilityZones: func(context.Context, *ec2.DescribeAvailabilityZonesInput, ...func(*ec2.Options)) (*ec2.DescribeAvailabilityZonesOutput, error) {
			f.calls["DescribeAvailabilityZones"]++
			return &ec2.DescribeAvailabilityZonesOutput{AvailabilityZones: f.zones}, nil
		},
	}
}

func ec2Subnet(id, zone, cidr string) ec2types.Subnet {
	return ec2types.Subnet{SubnetId: aws.String(id), AvailabilityZone: aws.String(zone), CidrBlock: aws.String(cidr),
		Tags: []ec2types.Tag{{Key: aws.String("Name"), Value: aws.String("name-" + id)}}}
}

func routeTable(id string, main bool, gateway string, subnets ...string) ec2types.RouteTable {
	rt := ec2types.RouteTable{RouteTableId: aws.String(id), Routes: []ec2types.Route{{DestinationCidrBlock: aws.String("10.0.0.0/16"), GatewayId: aws.String("local")}}}
	if gateway != "" {
		rt.Routes = append(rt.Routes, ec2types.Route{DestinationCidrBlock: aws.String("0.0.0.0/0"), GatewayId: aws.String(gateway)})
	}
	if main {
		rt.Associations = append(rt.Associations, ec2types.RouteTableAssociation{Main: aws.Bool(true)})
	}
	for _, s := range subnets {
		rt.Associations = append(rt.Associations, ec2types.RouteTableAssociation{Main: aws.Bool(false), SubnetId: aws.String(s)})
	}
	return rt
}

func TestNetworkCacheRefresh(t *testing.T) {
	f := &fakeNetwork{
		subnets: []ec2types.Subnet{ec2Subnet("subnet-1", "us-east-1a", "10.0.1.0/24"), ec2Subnet("subnet-2", "us-east-1b", "10.0.2.0/24")},
		tables:  []ec2types.RouteTable{routeTable("rtb-main", true, "igw-1")},
		zones:   []ec2types.AvailabilityZone{{ZoneName: aws.String("us-east-1a"), ZoneType: aws.String("availability-zone")}},
	}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	r, _ := newTestReconciler(Config{EC2: f.ec2(t), Clock: clk, Options: Options{NetworkMaxAge: time.Minute}})
	ctx := context.Background()

	wantCalls := func(step string, n int) {
		t.Helper()
		// DescribeSubnets has two pages per load.
		want := map[string]int{"DescribeSubnets": 2 * n, "DescribeRouteTables": n, "DescribeAvailabilityZones": n}
		if !reflect.DeepEqual(f.calls, want) {
			t.Errorf("%s: calls %v, want %v", step, f.calls, want)
		}
	}
	for range 3 {
		got, err := r.network.get(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		if ids := subnetIDs(got); !slices.Equal(ids, []string{"subnet-1", "subnet-2"}) {
			t.Fatalf("subnets %v, want both pages", ids)
		}
	}
	wantCalls("three gets", 1)
	clk.Step(time.Minute - time.Second)
	if _, err := r.network.get(ctx, false); err != nil {
		t.Fatal(err)
	}
	wantCalls("within NetworkMaxAge", 1)
	clk.Step(time.Second)
	if _, err := r.network.get(ctx, false); err != nil {
		t.Fatal(err)
	}
	wantCalls("after NetworkMaxAge", 2)
	if _, err := r.network.get(ctx, false); err != nil {
		t.Fatal(err)
	}
	wantCalls("right after refresh", 2)
	if _, err := r.network.get(ctx, true); err != nil {
		t.Fatal(err)
	}
	wantCalls("forced", 3)

	// A failed refresh is not cached as an empty VPC: the next get asks again.
	f.subnetsErr = apiErr("RequestLimitExceeded")
	clk.Step(time.Hour)
	if _, err := r.network.get(ctx, false); err == nil {
		t.Fatal("get with failing DescribeSubnets: no error")
	}
	f.subnetsErr = nil
	got, err := r.network.get(ctx, false)
	if err != nil || len(got) != 2 {
		t.Fatalf("get after a failure = %v, %v; want both subnets", subnetIDs(got), err)
	}
}

func TestNetworkCacheDefaultMaxAge(t *testing.T) {
	f := &fakeNetwork{subnets: []ec2types.Subnet{ec2Subnet("subnet-1", "us-east-1a", "10.0.1.0/24")}}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	r, _ := newTestReconciler(Config{EC2: f.ec2(t), Clock: clk})
	ctx := context.Background()
	for _, step := range []time.Duration{0, DefaultNetworkMaxAge - time.Second, time.Second} {
		clk.Step(step)
		if _, err := r.network.get(ctx, false); err != nil {
			t.Fatal(err)
		}
	}
	if f.calls["DescribeSubnets"] != 2 {
		t.Errorf("DescribeSubnets called %d times over %v and a second, want 2 (default max age %v)", f.calls["DescribeSubnets"], DefaultNetworkMaxAge, DefaultNetworkMaxAge)
	}
}

func TestNetworkCachePublicAndZones(t *testing.T) {
	subnets := []ec2types.Subnet{
		ec2Subnet("subnet-pub", "us-east-1a", "10.0.1.0/24"),  // explicit table with igw
		ec2Subnet("subnet-nat", "us-east-1a", "10.0.2.0/24"),  // explicit table without igw
		ec2Subnet("subnet-main", "us-east-1b", "10.0.3.0/24"), // no association: the main table
		ec2Subnet("subnet-local", "us-east-1-bos-1a", "10.0.4.0/24"),
	}
	zones := []ec2types.AvailabilityZone{
		{ZoneName: aws.String("us-east-1a"), ZoneType: aws.String("availability-zone")},
		{ZoneName: aws.String("us-east-1b"), ZoneType: aws.String("availability-zone")},
		{ZoneName: aws.String("us-east-1-bos-1a"), ZoneType: aws.String("local-zone")},
	}
	natTable := func() ec2types.RouteTable {
		rt := routeTable("rtb-nat", false, "", "subnet-nat")
		rt.Routes = append(rt.Routes, ec2types.Route{DestinationCidrBlock: aws.String("0.0.0.0/0"), NatGatewayId: aws.String("nat-1")})
		return rt
	}
	tests := []struct {
		name       string
		tables     []ec2types.RouteTable
		wantPublic map[string]bool
	}{
		{
			name:       "main table routes to an internet gateway",
			tables:     []ec2types.RouteTable{routeTable("rtb-main", true, "igw-1"), routeTable("rtb-pub", false, "igw-1", "subnet-pub"), natTable()},
			wantPublic: map[string]bool{"subnet-pub": true, "subnet-nat": false, "subnet-main": true, "subnet-local": true},
		},
		{
			name:       "main table is private",
			tables:     []ec2types.RouteTable{natTable(), routeTable("rtb-pub", false, "igw-1", "subnet-pub"), routeTable("rtb-main", true, "vgw-1")},
			wantPublic: map[string]bool{"subnet-pub": true, "subnet-nat": false, "subnet-main": false, "subnet-local": false},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeNetwork{subnets: subnets, tables: tc.tables, zones: zones}
			r, _ := newTestReconciler(Config{EC2: f.ec2(t)})
			got, err := r.network.get(context.Background(), false)
			if err != nil {
				t.Fatal(err)
			}
			public := map[string]bool{}
			for _, s := range got {
				public[s.ID] = s.Public
			}
			if !reflect.DeepEqual(public, tc.wantPublic) {
				t.Errorf("public = %v, want %v", public, tc.wantPublic)
			}
			byID := map[string]subnet{}
			for _, s := range got {
				byID[s.ID] = s
			}
			if s := byID["subnet-local"]; s.ZoneType != "local-zone" {
				t.Errorf("subnet-local zone type %q, want local-zone", s.ZoneType)
			}
			if s := byID["subnet-pub"]; s.ZoneType != "availability-zone" || s.CIDR != "10.0.1.0/24" || s.Zone != "us-east-1a" || s.Tags["Name"] != "name-subnet-pub" {
				t.Errorf("subnet-pub = %+v", s)
			}
		})
	}
}

func TestSubnetsForRefreshesOnceForUnknownRef(t *testing.T) {
	f := &fakeNetwork{subnets: []ec2types.Subnet{ec2Subnet("subnet-1", "us-east-1a", "10.0.1.0/24")}, tables: []ec2types.RouteTable{routeTable("rtb-main", true, "igw-1")}}
	r, _ := newTestReconciler(Config{EC2: f.ec2(t)})
	ctx := context.Background()
	cfg := &lbconfig.Config{Subnets: []string{"name-subnet-1"}}
	if got, err := r.subnetsFor(ctx, cfg); err != nil || !slices.Equal(subnetIDs(got), []string{"subnet-1"}) {
		t.Fatalf("subnetsFor by Name = %v, %v", subnetIDs(got), err)
	}
	if f.calls["DescribeRouteTables"] != 1 {
		t.Fatalf("loads = %d, want 1", f.calls["DescribeRouteTables"])
	}
	// A subnet made since the last load: one forced reload finds it.
	f.subnets = append(f.subnets, ec2Subnet("subnet-2", "us-east-1b", "10.0.2.0/24"))
	cfg.Subnets = []string{"subnet-2"}
	if got, err := r.subnetsFor(ctx, cfg); err != nil || !slices.Equal(subnetIDs(got), []string{"subnet-2"}) {
		t.Fatalf("subnetsFor new subnet = %v, %v", subnetIDs(got), err)
	}
	if f.calls["DescribeRouteTables"] != 2 {
		t.Errorf("loads = %d, want 2 (one forced refresh)", f.calls["DescribeRouteTables"])
	}
	// Still unknown after the refresh: an error naming it.
	cfg.Subnets = []string{"subnet-2", "subnet-404"}
	_, err := r.subnetsFor(ctx, cfg)
	if err == nil || !contains(err.Error(), "subnet-404") || contains(err.Error(), "subnet-2,") {
		t.Errorf("subnetsFor unknown subnet: err = %v, want one naming only subnet-404", err)
	}
}
