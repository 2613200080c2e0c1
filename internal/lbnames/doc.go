// Package lbnames holds the names and tags by which the CCM finds the load
// balancer of a Service of type LoadBalancer: the name derived from the
// Service UID, the names of the security groups and target groups created
// with it (resources.go), the tag keys it writes, and which Services are
// this CCM's at all (Classic ELB, NLB, or handled by another controller).
//
// These values are a wire contract shared with the in-tree provider and
// upstream kubernetes/cloud-provider-aws: load balancers they created are
// adopted only because the names and tags are the same. They MUST NOT
// change.
package lbnames
