//go:build !linux

package staticpod

import "os/exec"

// commandAs ignores the host name where there are no UTS namespaces.
func commandAs(_, binary string, args []string) *exec.Cmd {
	return exec.Command(binary, args...)
}
