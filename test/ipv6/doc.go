// Package ipv6 runs the CCM with NodeIPFamilies = ipv6 against a real
// kube-apiserver and the AWS emulator: Nodes of instances in IPv6-only
// subnets (no private IPv4, resource-based hostnames such as
// i-0123456789abcdef0.us-west-2.compute.internal) are resolved and
// initialized by the real cloud node controller. It has its own control
// plane because test/integration's shared CCM runs with the IPv4 default.
package ipv6
