// Package kubeletrun reads what the kubelet running on this node runs, as
// opposed to what its files say it should run: editing the kubelet's flags
// proves nothing until the kubelet restarts, so a migration that moves
// kubelets to --cloud-provider=external must see the running process.
//
// The kubelet is found as the process listening on its healthz port (the
// port and address its files configure, defaults 10248 and 127.0.0.1), not
// by name: on a node the port is one process's, and a test bed running
// several kubelets on one host gives each its own port. From that process
// it reads, through procwatch: the command line as the process has it
// (/proc/<pid>/cmdline), its start time, and /healthz's answer.
package kubeletrun
