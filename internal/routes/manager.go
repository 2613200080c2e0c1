package routes

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// maxMutations bounds the controller's EC2 changes in flight. The route
// controller starts up to 200 creates at once; EC2 refills its bucket of
// mutating calls at a few per second, so more in flight only buys
// throttling, and each costs memory while it waits.
const maxMutations = 10

// DefaultFullTableRetry is how long a full route table refuses creates
// locally before the CCM tries AWS again (a deleted route ends it sooner).
// Raising the quota is a support case that takes minutes at the least.
const DefaultFullTableRetry = 5 * time.Minute

// Config is what New needs.
type Config struct {
	EC2 EC2
	Env Env
	// ClusterCIDRs are --cluster-cidr; only routes into them can be the
	// controller's.
	ClusterCIDRs []netip.Prefix
	Instances    Instances
	Nodes        Nodes
	// Events receives the Warning events on Nodes.
	Events record.EventRecorder
	// Clock times the full-table memory and the source/destination check
	// memory; it must be the instance view's clock.
	Clock clock.PassiveClock
	// FullTableRetry: see DefaultFullTableRetry (the default when zero).
	FullTableRetry time.Duration
	// Metrics records table problems and Warning events; nil records
	// nothing.
	Metrics *Metrics
}

// Manager implements the routes of one cluster. It is safe for concurrent
// use: the route controller creates and deletes up to 200 routes at once.
type Manager struct {
	ec2       EC2
	env       Env
	cidrs     []netip.Prefix
	instances Instances
	nodes     Nodes
	events    record.EventRecorder
	metrics   *Metrics
	clock     clock.PassiveClock
	retry     time.Duration

	mu sync.Mutex
	// last is the latest reading of the table with the controller's own
	// changes since; creates and deletes work from it.
	last *table
	// owned are the routes of last that are the controller's, by
	// destination: the Node they lead to ("" when blackholed).
	owned map[netip.Prefix]string
	// full remembers a RouteLimitExceeded answer, since fullSince.
	full      *fullTable
	fullSince time.Time
	// strangers are instances behind routes into the cluster CIDRs that
	// are no Node's and carry no cluster tag, with when that was seen.
	strangers map[string]time.Time
	// checkOff is when the controller turned a route target's
	// source/destination check off, by instance ID (one interface) or
	// network interface ID (the primary of several).
	checkOff map[string]time.Time
	// tableProblem is the message of the current *TableError ("" while
	// the table is found), and warnedTable the Nodes told about it.
	tableProblem string
	warnedTable  map[string]bool
	// mutations holds a slot per EC2 change in flight (maxMutations).
	mutations chan struct{}
	// dests serialise the controller's calls per destination: a sync may
	// delete a blackholed route and create one to the same destination at
	// once.
	dests map[netip.Prefix]*sync.Mutex
}

// New returns a Manager.
func New(c Config) *Manager {
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.FullTableRetry <= 0 {
		c.FullTableRetry = DefaultFullTableRetry
	}
	return &Manager{
		ec2: c.EC2, env: c.Env, cidrs: slices.Clone(c.ClusterCIDRs), instances: c.Instances, nodes: c.Nodes,
		events: c.Events, metrics: c.Metrics, clock: c.Clock, retry: c.FullTableRetry, warnedTable: map[string]bool{},
		mutations: make(chan struct{}, maxMutations),
		owned:     map[netip.Prefix]string{}, strangers: map[string]time.Time{}, checkOff: map[string]time.Time{}, dests: map[netip.Prefix]*sync.Mutex{},
	}
}

// inClusterCIDRs reports whether p lies within one of the cluster CIDRs.
func (m *Manager) inClusterCIDRs(p netip.Prefix) bool {
	for _, c := range m.cidrs {
		if c.Addr().Is4() == p.Addr().Is4() && c.Bits() <= p.Bits() && c.Contains(p.Addr()) {
			return true
		}
	}
	return false
}

// List reads the table once and returns the controller's routes: those to
// a cluster Node's instance (TargetNode is the Node), and blackholed ones
// (Blackhole, no TargetNode), so that the route controller deletes or
// replaces them. Foreign routes are left out, so the controller never
// touches them.
func (m *Manager) List(ctx context.Context, clusterName string) ([]*cloudprovider.Route, error) {
	t, err := m.describeTable(ctx)
	if err != nil {
		// The route controller only logs a failed List: the Nodes hear
		// of a table problem from the CCM (problems.go).
		m.reportTableProblem(err, nil)
		return nil, err
	}
	m.tableFound(t.id)
	nodes, err := m.nodes.List()
	if err != nil {
		return nil, fmt.Errorf("list Nodes: %w", err)
	}
	byInstance := make(map[string]types.NodeName, len(nodes))
	unresolved := false
	for _, n := range nodes {
		if n.InstanceID != "" {
			byInstance[n.InstanceID] = types.NodeName(n.Node.Name)
		} else {
			unresolved = true
		}
	}
	byENI, err := m.interfaceOwners(ctx, t, byInstance)
	if err != nil {
		return nil, err
	}
	orphans, err := m.orphans(ctx, t, byInstance, byENI, unresolved)
	if err != nil {
		return nil, err
	}
	owned := map[netip.Prefix]string{}
	var out []*cloudprovider.Route
	for _, r := range sortedRoutes(t) {
		if !r.mayBeOurs() || !m.inClusterCIDRs(r.dest) {
			continue
		}
		cr := &cloudprovider.Route{Name: clusterName + "-" + r.dest.String(), DestinationCIDR: r.dest.String()}
		instance := r.instanceID
		if instance == "" {
			instance = byENI[r.eniID]
		}
		switch node, ok := byInstance[instance]; {
		case r.blackhole:
			cr.Blackhole = true
		case ok:
			cr.TargetNode = node
		case orphans[instance]:
			// No TargetNode: the route controller deletes it.
			klog.InfoS("Route leads to a cluster instance that is no Node's; the route controller deletes it", "table", t.id,
				"destination", r.dest, "instance", instance)
		default:
			klog.V(4).InfoS("Route into the cluster CIDRs leads to no cluster Node; not the controller's", "table", t.id,
				"destination", r.dest, "instance", r.instanceID, "networkInterface", r.eniID)
			continue
		}
		owned[r.dest] = string(cr.TargetNode)
		out = append(out, cr)
	}
	m.mu.Lock()
	m.last, m.owned = t, owned
	m.forgetFullIfShrunk(t)
	m.mu.Unlock()
	klog.V(4).InfoS("Listed routes", "table", t.id, "routes", len(t.routes), "clusterRoutes", len(out))
	return out, nil
}

// interfaceOwners maps network interfaces to the cluster's instances, for
// routes that name an interface but no instance. EC2 names the instance
// behind an attached interface, so this asks the instance view only for
// such a rare route and costs nothing in a steady sync.
func (m *Manager) interfaceOwners(ctx context.Context, t *table, byInstance map[string]types.NodeName) (map[string]string, error) {
	need := false
	for _, r := range t.routes {
		if r.mayBeOurs() && !r.blackhole && r.instanceID == "" && m.inClusterCIDRs(r.dest) {
			need = true
			break
		}
	}
	if !need || len(byInstance) == 0 {
		return nil, nil
	}
	ids := make([]string, 0, len(byInstance))
	for id := range byInstance {
		ids = append(ids, id)
	}
	found, err := m.instances.ByIDs(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("find the instances of network interface routes in %s: %w", t.id, err)
	}
	out := map[string]string{}
	for id, inst := range found {
		for _, eni := range inst.ENIs {
			out[eni.ID] = id
		}
	}
	return out, nil
}

func sortedRoutes(t *table) []route {
	out := make([]route, 0, len(t.routes))
	for _, r := range t.routes {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b route) int { return a.dest.Addr().Compare(b.dest.Addr()) })
	return out
}

// mutate runs one EC2 change within the maxMutations bound.
func (m *Manager) mutate(ctx context.Context, call func() error) error {
	select {
	case m.mutations <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-m.mutations }()
	return call()
}

// lockDest serialises the controller's calls for one destination.
func (m *Manager) lockDest(p netip.Prefix) func() {
	m.mu.Lock()
	l := m.dests[p]
	if l == nil {
		l = &sync.Mutex{}
		m.dests[p] = l
	}
	m.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// current returns the latest reading of the table, reading it if there is
// none yet (the route controller lists before it creates or deletes).
func (m *Manager) current(ctx context.Context) (*table, error) {
	m.mu.Lock()
	t := m.last
	m.mu.Unlock()
	if t != nil {
		return t, nil
	}
	t, err := m.describeTable(ctx)
	if err != nil {
		return nil, err
	}
	m.tableFound(t.id)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last == nil {
		m.last = t
	}
	return m.last, nil
}

// parseDestination parses a route's DestinationCIDR.
func parseDestination(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("route destination %q is not a CIDR: %w", s, err)
	}
	return p.Masked(), nil
}
