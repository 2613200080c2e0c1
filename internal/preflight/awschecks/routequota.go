package awschecks

import (
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/routes"
)

// EC2's quota "Routes per route table" (Service Quotas: service vpc, quota
// L-93826ACB): 50 by default, adjustable up to 1,000. CreateRoute fails
// with RouteLimitExceeded past it, and the route controller cannot route the
// pods of the Nodes that do not fit.
const (
	routeQuotaDefault = 50
	routeQuotaMax     = 1000
	routeQuotaCode    = "L-93826ACB"
	// routeQuotaMargin is how close to the default quota a table may come
	// before the check warns: room for this many more Nodes' routes.
	routeQuotaMargin = 10
)

// routeQuota compares the routes table will hold once every Node's pod
// CIDR is routed (one route per pod CIDR; a Node without one yet will get
// one) plus the other routes already in it with EC2's default quota. It
// returns ok=false with a warning when the table is within
// routeQuotaMargin of the quota or past it, else a note for the pass
// message. Without Nodes (node mode) there is nothing to count.
func (r *runner) routeQuota(table ec2types.RouteTable) (res preflight.Result, note string, ok bool) {
	if r.in.NodePodCIDRs == nil {
		return preflight.Result{}, "", true
	}
	var podCIDRs []string
	needed := 0
	for _, cidrs := range r.in.NodePodCIDRs {
		needed += max(1, len(cidrs))
		podCIDRs = append(podCIDRs, cidrs...)
	}
	other := 0
	for _, rt := range table.Routes {
		dest := aws.ToString(rt.DestinationCidrBlock) + aws.ToString(rt.DestinationIpv6CidrBlock)
		// Counted as the CCM counts (not the VPC-local route, propagated
		// routes or prefix lists), except the Nodes' own routes, which
		// needed counts.
		if !routes.QuotaCounted(rt) || slices.Contains(podCIDRs, dest) {
			continue
		}
		other++
	}
	total, id := needed+other, aws.ToString(table.RouteTableId)
	counts := fmt.Sprintf("%d for the pod CIDRs of the cluster's %d Nodes and %d other routes already in it (the VPC-local route and propagated routes not counted)",
		needed, len(r.in.NodePodCIDRs), other)
	if total+routeQuotaMargin <= routeQuotaDefault {
		return preflight.Result{}, fmt.Sprintf("; it will hold %d routes of EC2's default quota of %d: %s", total, routeQuotaDefault, counts), true
	}
	fix := fmt.Sprintf("if the account's quota is still the default, raise \"Routes per route table\" for the region before the cluster grows "+
		"(aws service-quotas request-service-quota-increase --service-code vpc --quota-code %s --desired-value <n>, at most %d); "+
		"past %d routes, use a CNI that gives pods VPC addresses (the Amazon VPC CNI) and run the CCM with --configure-cloud-routes=false",
		routeQuotaCode, routeQuotaMax, routeQuotaMax)
	if total > routeQuotaDefault {
		return preflight.Warn(fix, "route table %s will need %d routes, more than EC2's default quota of %d routes per route table: %s; "+
			"unless the quota was raised, CreateRoute fails with RouteLimitExceeded for %d of them and those Nodes' pods are not routed",
			id, total, routeQuotaDefault, counts, total-routeQuotaDefault), "", false
	}
	return preflight.Warn(fix, "route table %s will hold %d routes of EC2's default quota of %d routes per route table: %s; "+
		"%d more Nodes fill it, and the route controller cannot route the pods of Nodes past that (RouteLimitExceeded)",
		id, total, routeQuotaDefault, counts, routeQuotaDefault-total), "", false
}
