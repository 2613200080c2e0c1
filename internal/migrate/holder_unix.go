//go:build unix

package migrate

import "syscall"

// processAlive reports whether a process with pid runs on this machine
// (signal 0 checks without signalling).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	return syscall.Kill(pid, 0) == nil
}
