package awscloud

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"k8s.io/apimachinery/pkg/labels"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/routes"
)

// Routes serves the route controller (internal/routes) when the CCM knows
// the cluster CIDRs; without them no route could be told to be the
// controller's (internal/ccmapp refuses to start the route controller
// without --cluster-cidr).
func (c *Cloud) Routes() (cloudprovider.Routes, bool) {
	if c.routes == nil {
		return nil, false
	}
	return routesFacet{c.routes}, true
}

// newRoutes builds the routes on the provider's clients, instance view and
// Node lister, or nil without cluster CIDRs.
func (c *Cloud) newRoutes(clients *awsapi.Clients, cidrs []netip.Prefix, m *routes.Metrics) *routes.Manager {
	if len(cidrs) == 0 {
		return nil
	}
	return routes.New(routes.Config{
		EC2:          routes.NewEC2(clients.EC2),
		Env:          routes.Env{VPCID: c.env.VPCID, ClusterID: c.env.ClusterID, RouteTableID: c.cfg.Global.RouteTableID},
		ClusterCIDRs: cidrs,
		Instances:    c.view,
		Nodes:        routeNodes{c},
		Events:       c.events,
		Metrics:      m,
		Clock:        c.clock,
	})
}

// routesFacet adapts the routes to cloudprovider.Routes.
type routesFacet struct{ m *routes.Manager }

func (r routesFacet) ListRoutes(ctx context.Context, clusterName string) ([]*cloudprovider.Route, error) {
	return r.m.List(ctx, clusterName)
}

func (r routesFacet) CreateRoute(ctx context.Context, _ string, _ string, route *cloudprovider.Route) error {
	return r.m.Create(ctx, route)
}

func (r routesFacet) DeleteRoute(ctx context.Context, _ string, route *cloudprovider.Route) error {
	return r.m.Delete(ctx, route)
}

// routeNodes answers the routes from the Node lister and the parsed
// providerIDs the provider keeps.
type routeNodes struct{ c *Cloud }

var errNoLister = errors.New("the Node lister is not set up yet (SetInformers)")

func (n routeNodes) List() ([]routes.Node, error) {
	if n.c.nodes == nil {
		return nil, errNoLister
	}
	nodes, err := n.c.nodes.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	out := make([]routes.Node, 0, len(nodes))
	for _, node := range nodes {
		out = append(out, routes.Node{Node: node, InstanceID: n.c.refs.of(node).instanceID})
	}
	return out, nil
}

func (n routeNodes) Get(name string) (routes.Node, error) {
	if n.c.nodes == nil {
		return routes.Node{}, errNoLister
	}
	node, err := n.c.nodes.Get(name)
	if err != nil {
		return routes.Node{}, fmt.Errorf("get Node %s: %w", name, err)
	}
	ref := n.c.refs.of(node)
	if ref.err != nil {
		return routes.Node{}, fmt.Errorf("Node %s: %w", name, ref.err) //nolint:staticcheck // ST1005: the Kubernetes kind, spelt as kubectl does
	}
	return routes.Node{Node: node, InstanceID: ref.instanceID}, nil
}
