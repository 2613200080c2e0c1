//go:build unix

package nodepods

import (
	"os"
	"syscall"
)

// exitCode is the exit code a container runtime reports for a process:
// its exit status, or 128 + the signal that ended it (137 for SIGKILL).
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}
