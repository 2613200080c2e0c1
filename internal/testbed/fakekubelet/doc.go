// Package fakekubelet runs a process that looks like a kubelet to what
// reads a running kubelet (internal/kubeletrun): its /proc command line
// names a program called kubelet with the flags a test gives, and it
// answers /healthz on loopback. It is the test binary itself, re-executed
// through a symlink named kubelet: the test's TestMain calls Serve first.
package fakekubelet
