//go:build tools

// Package tools pins the Kubernetes commands the test bed builds:
// kube-apiserver, and kubeadm to validate the configuration awsccmctl writes.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubeadm"
)
