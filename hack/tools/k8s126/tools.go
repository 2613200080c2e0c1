//go:build tools

// Package tools pins the Kubernetes v1.26 commands the test bed builds for
// the in-tree → external migration tests: kube-apiserver and
// kube-controller-manager (the last minor with --cloud-provider=aws).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
