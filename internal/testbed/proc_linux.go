//go:build linux

package testbed

import (
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// sysProcAttr puts the child in its own process group (so Stop can signal it
// and anything it forks) and asks the kernel to SIGKILL it when its parent
// dies, so a crashed or killed test binary leaves nothing behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// Pdeathsig fires when the *thread* that forked the child exits, not the
// process. The Go runtime terminates a thread when a goroutine locked to it
// exits, so children are forked from one dedicated goroutine that stays
// locked to its thread for the life of the test binary.
var (
	spawnOnce sync.Once
	spawnCh   chan spawnReq
)

type spawnReq struct {
	cmd *exec.Cmd
	res chan error
}

func startCmd(cmd *exec.Cmd) error {
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

func signalGroup(p *os.Process, sig syscall.Signal) error {
	return syscall.Kill(-p.Pid, sig)
}

func processAlive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}
