//go:build tools

// Package tools pins kubeadm v1.35, which the test bed builds into
// $TESTBED_BIN/v1.35.4/kubeadm to validate v1beta3 configuration.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kubeadm"
)
