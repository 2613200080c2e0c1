//go:build unix

package childproc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// groupAttr returns a copy of cmd's SysProcAttr (the caller's value is not
// modified) with Setpgid forced on and Pgid 0: a process group of its own.
// Setsid and Foreground conflict with that and are refused.
func groupAttr(cmd *exec.Cmd) (*syscall.SysProcAttr, error) {
	a := &syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		c := *cmd.SysProcAttr
		a = &c
	}
	if a.Setsid || a.Foreground {
		return nil, errors.New("childproc: Setsid and Foreground conflict with a process group of its own")
	}
	a.Setpgid, a.Pgid = true, 0
	return a, nil
}

// SignalGroup sends sig to the process group led by p (as Start created it),
// which reaches p and anything it forked.
func SignalGroup(p *os.Process, sig syscall.Signal) error {
	return syscall.Kill(-p.Pid, sig)
}
