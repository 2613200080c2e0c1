// Package ccmapp wires the AWS provider into k8s.io/cloud-provider's
// controller-manager command. The binary and the in-process integration
// tests build the very same command from here.
package ccmapp
