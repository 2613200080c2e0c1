// Package instances is the CCM's one shared view of the cluster's EC2
// instances.
//
// Every controller asks it instead of calling DescribeInstances itself. The
// view keeps what it learnt for MaxAge and fills misses in three cheap ways:
//
//   - a snapshot of all cluster-tagged instances (one paged call, 1,000 per
//     page), taken when the data is older than MaxAge, so a pass of the
//     5-minute status loop or the 5-second lifecycle loop over N nodes costs
//     ceil(N/1000) calls instead of N;
//   - batched lookups by instance ID for instances the snapshot does not
//     cover (untagged, other cluster tag, or gone), using the instance-id
//     filter so one unknown ID cannot fail the whole call as InstanceIds
//     would;
//   - batched lookups by private DNS name for nodes that registered without
//     a providerID.
//
// Concurrent requests within a short window share one call, and each call is
// topped up with other instances the cluster's Nodes will ask about soon
// (Candidates), so even a sequential controller loop costs one call per pass.
//
// The view also remembers since when an instance has been absent from
// successful lookups, which is the evidence InstanceExists needs before it
// lets a Node be deleted; errors are never recorded as absence. The
// Breaker weighs that evidence against the whole cluster: when the
// instances of many Nodes are missing at once, the CCM is more likely
// looking in the wrong region, VPC or account than watching them all die,
// and it deletes none of their Nodes.
package instances
