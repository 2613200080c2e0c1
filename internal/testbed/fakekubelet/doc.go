// Package fakekubelet runs a process that looks like a kubelet to what
// reads a running kubelet (internal/kubeletrun): its /proc command line
// names a program called kubelet with the flags a test gives, and it
// answers /healthz on loopback. It is the test binary itself, re-executed
// through a symlink named kubelet: the test's TestMain calls Serve first.
//
// Two ways run it as systemd runs kubelet.service, each start reading the
// node's kubeadm-flags.env afresh: Systemctl writes a shell-script
// systemctl (for tools run with it first in PATH), and Service is the
// same as a Go value for a fake systemd (internal/testbed/fakesystemd) to
// drive, as the systemctl run chrooted into a node's root reaches it.
package fakekubelet
