//go:build !unix

package nodepods

import "os"

// exitCode is the process's exit status (no signals here).
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	return ps.ExitCode()
}
