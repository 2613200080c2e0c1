// Package nodechecks holds the node-mode checks of `awsccmctl preflight`:
// what a node's own files (static Pod manifests, the kubelet's systemd unit,
// environment files and configuration, read by package nodefiles) say about
// its readiness for the external AWS cloud-controller-manager.
//
// Checks builds the list for one node and mode. Every check is present on
// every node, so reports have the same shape; a check that does not apply
// (control-plane checks on a worker) is skipped with the reason. The checks
// only read.
package nodechecks
