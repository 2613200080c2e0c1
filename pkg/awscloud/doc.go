// Package awscloud adapts the AWS cloud to k8s.io/cloud-provider's
// cloudprovider.Interface, and does nothing else: one file per facet
// (instances, zones, load balancers, routes). The work that talks to AWS lives
// in the packages beneath it, above all internal/instances, the one shared
// instance view every controller reads through.
package awscloud
