//go:build tools

// Package tools pins the Kubernetes v1.26 commands the test bed builds for
// the in-tree → external migration tests: kube-apiserver,
// kube-controller-manager and the kubelet (the last minor with
// --cloud-provider=aws); ./fakecri is the CRI endpoint the kubelet talks to.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
