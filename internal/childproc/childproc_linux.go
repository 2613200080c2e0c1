//go:build linux

package childproc

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// Start starts cmd in a process group of its own, with Pdeathsig so the
// kernel kills it if this process dies.
//
// The caller's SysProcAttr is kept as groupAttr describes, and Pdeathsig is
// set to SIGKILL unless the caller chose a signal.
func Start(cmd *exec.Cmd) error {
	a, err := groupAttr(cmd)
	if err != nil {
		return err
	}
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
