package testbed

import (
	"bytes"
	"errors"
	"os"
	"syscall"
)

// logTailBytes is how much of a child's log goes into an error.
const logTailBytes = 4096

func logContains(path, s string) bool {
	b, err := os.ReadFile(path)
	return err == nil && bytes.Contains(b, []byte(s))
}

// ProcessAlive reports whether a process with this pid exists, for tests
// that prove a child was stopped. An exited child that has not been reaped
// yet (a zombie) still counts as alive.
func ProcessAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
