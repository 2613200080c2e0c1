// Package lb is the load-balancer reconciler behind the CCM's
// cloudprovider.LoadBalancer: Classic ELBs (the default) and Network Load
// Balancers with instance targets, wire-compatible with the in-tree
// provider and upstream (names, tags, security groups, target groups), so
// their load balancers are adopted untouched.
//
// Every sync compares what AWS has with what the Service asks for and
// changes only the difference: an unchanged Service costs no mutating call
// and a few reads. Deletion removes every owned part (load balancer,
// listeners, target groups, the managed security group and the rules it
// added to node security groups) and reports the load balancer as existing
// until all of them are gone, so the Service's cleanup finalizer only comes
// off when nothing is left behind.
package lb
