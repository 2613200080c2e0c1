package staticpod

import (
	"context"
	"os/exec"
	"syscall"
)

// commandAs runs binary with args under its own host name: in a new UTS
// namespace, a shell sets the name and execs the binary, so the process
// keeps the PID the Runner started. On a node each kube-controller-manager
// sees its node's host name, and its leader-election identity
// (<hostname>_<uuid>) names the node; on one test machine they would all
// share the machine's.
func commandAs(hostname, binary string, args []string) *exec.Cmd {
	if hostname == "" {
		return exec.CommandContext(context.Background(), binary, args...)
	}
	cmd := exec.CommandContext(context.Background(), "/bin/sh", append([]string{"-c", `hostname "$0" && exec "$@"`, hostname, binary}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUTS}
	return cmd
}
