// Package integration runs the AWS cloud-controller-manager, in-process and
// exactly as the binary wires it, against a real kube-apiserver + etcd (the
// test bed) and the wire-level AWS emulator, and asserts what it does to
// Nodes and how many AWS calls it makes doing it.
package integration
