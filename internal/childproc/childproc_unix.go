//go:build unix && !linux

package childproc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// Start starts cmd in a process group of its own. There is no Pdeathsig
// outside Linux: if this process is killed outright, the child keeps running.
//
// SysProcAttr fields the caller set are kept (on a copy; the caller's value
// is not modified), except that Setpgid is forced on with Pgid 0. Setsid and
// Foreground conflict with a new process group and make Start fail.
func Start(cmd *exec.Cmd) error {
	a := &syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		c := *cmd.SysProcAttr
		a = &c
	}
	if a.Setsid || a.Foreground {
		return errors.New("childproc: Setsid and Foreground conflict with a process group of its own")
	}
	a.Setpgid, a.Pgid = true, 0
	cmd.SysProcAttr = a
	return cmd.Start()
}

// SignalGroup sends sig to the process group led by p (as Start created it),
// which reaches p and anything it forked.
func SignalGroup(p *os.Process, sig syscall.Signal) error {
	return syscall.Kill(-p.Pid, sig)
}

// Alive reports whether a process with this pid exists. An exited child
// that has not been reaped yet (a zombie) still counts as alive.
func Alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
