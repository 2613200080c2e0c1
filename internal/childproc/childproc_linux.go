//go:build linux

package childproc

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// Start starts cmd in a process group of its own, with Pdeathsig so the
// kernel kills it if this process dies.
//
// SysProcAttr fields the caller set are kept (on a copy; the caller's value
// is not modified), except that Setpgid is forced on with Pgid 0, and
// Pdeathsig is set to SIGKILL unless the caller chose a signal. Setsid and
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
	if a.Pdeathsig == 0 {
		a.Pdeathsig = syscall.SIGKILL
	}
	cmd.SysProcAttr = a
	return startOnSpawnThread(cmd)
}

// Pdeathsig fires when the *thread* that forked the child exits, not the
// process, and the Go runtime terminates a thread when a goroutine locked to
// it exits. So every child is forked by one goroutine that locks itself to
// its OS thread and never unlocks or returns: the thread outlives every
// child, and the death signal fires only when the whole process is gone.
var (
	spawnOnce sync.Once
	spawnCh   chan spawnReq
)

type spawnReq struct {
	cmd *exec.Cmd
	res chan error
}

func startOnSpawnThread(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnCh = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread must outlive the children
			for r := range spawnCh {
				r.res <- r.cmd.Start()
			}
		}()
	})
	res := make(chan error, 1)
	spawnCh <- spawnReq{cmd: cmd, res: res}
	return <-res
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
