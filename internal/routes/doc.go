// Package routes is the AWS side of the route controller: it keeps one VPC
// route table's routes to the cluster's Nodes in step with the Nodes' pod
// CIDRs, for CNIs that rely on VPC routing (kubenet and the like) instead
// of giving pods VPC addresses.
//
// The table is RouteTableID from the cloud config, or the one route table
// in the cluster's VPC that carries the cluster tag; none or several are
// errors that name the fix, as upstream refuses them too.
//
// EC2 routes carry no tags, so ownership is decided from what a route is:
// the controller's routes are those whose destination lies in the cluster
// CIDRs (--cluster-cidr) and whose target is a cluster Node's instance or
// one of its network interfaces, or such a route turned blackhole (its
// instance is gone). Every other route, including routes into the cluster
// CIDRs to gateways, peering connections or foreign instances, is never
// listed, replaced or deleted, with one exception: when a Node's pod CIDR
// must be routed and a route to exactly that destination points elsewhere,
// it is replaced, since the cluster allocated that range to the Node.
//
// Costs: a route sync reads the table once (ListRoutes); creates and
// deletes work from that reading, the Nodes' instances come from the
// controllers' Node lister, and instance details (source/destination check,
// network interfaces) from the shared instance view, so a steady sync over
// N Nodes is one DescribeRouteTables call and no DescribeInstances.
//
// When the table is full (RouteLimitExceeded) the Node gets a Warning event
// with the fix, and further creates into that table are refused locally for
// FullTableRetry or until a route is deleted, instead of failing in AWS for
// every Node on every sync. When there is no one table to manage (none or
// several tagged, RouteTableID wrong), each Node with a pod CIDR gets one
// Warning event per problem (the route controller only logs the failed
// listing), and a gauge shows the problem (Metrics).
//
// The source/destination check is turned off on the route's target: the
// instance with ModifyInstanceAttribute, or, for an instance with several
// network interfaces (EC2 refuses the instance call there), its primary
// interface, which the route then names, with
// ModifyNetworkInterfaceAttribute.
package routes
