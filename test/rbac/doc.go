// Package rbac proves the RBAC that `awsccmctl install` renders: the real
// aws-cloud-controller-manager binary runs with the rendered
// ServiceAccount's token and nothing else against a real kube-apiserver
// (with an audit log) and the AWS emulator, initializes and deletes Nodes,
// serves an authenticated /metrics request, and the audit log must show no
// forbidden request. A second run with one rule removed must show the
// forbidden requests that rule allowed, so the proof cannot pass vacuously.
package rbac
