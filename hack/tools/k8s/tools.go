//go:build tools

// Package tools pins the Kubernetes commands the test bed builds.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
