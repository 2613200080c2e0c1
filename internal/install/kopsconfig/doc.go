// Package kopsconfig renders what a kops cluster needs to run this
// project's AWS cloud-controller-manager: the spec.cloudControllerManager
// snippet of the kops Cluster (apiVersion kops.k8s.io/v1alpha2) and the
// equivalent kops commands. kops deploys the CCM itself, as an addon with
// its own RBAC and flags derived from the spec, and reverts anything
// applied to its clusters by hand; so for kops, awsccmctl never applies
// manifests, it tells kops what to run.
package kopsconfig
