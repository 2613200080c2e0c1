package staticpod

import (
	"os/exec"
	"syscall"
)

// commandAs runs binary with args under its own host name: in a new UTS
// namespace, a shell sets the name and execs the binary, so the process
// keeps the PID the Runner started. On a node each kube-controller-manager
// sees its node's host name, and its leader-election identity
// (<hostname>_<uuid>) names the node; on one test machine they would all
// share the machine's. No context ends the process: the worker stops it
// as the kubelet does, SIGTERM then the grace period (worker.stop).
func commandAs(hostname, binary string, args []string) *exec.Cmd {
	if hostname == "" {
		return exec.Command(binary, args...) //nolint:noctx // the worker stops the process (see above)
	}
	cmd := exec.Command("/bin/sh", append([]string{"-c", `hostname "$0" && exec "$@"`, hostname, binary}, args...)...) //nolint:noctx // the worker stops the process (see above)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUTS}
	return cmd
}
