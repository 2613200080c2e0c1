//go:build !unix

package childproc

import (
	"os"
	"os/exec"
	"syscall"
)

// Start starts cmd as is: there are no process groups or Pdeathsig here, so
// a parent killed outright may leave the child running.
func Start(cmd *exec.Cmd) error { return cmd.Start() }

// SignalGroup kills p whatever sig is: without process groups, anything p
// forked is not reached.
func SignalGroup(p *os.Process, _ syscall.Signal) error { return p.Kill() }
