//go:build unix && !linux

package testbed

import (
	"os"
	"os/exec"
	"syscall"
)

// No Pdeathsig outside Linux: a crashed test binary may leave children behind.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func startCmd(cmd *exec.Cmd) error { return cmd.Start() }

func signalGroup(p *os.Process, sig syscall.Signal) error {
	return syscall.Kill(-p.Pid, sig)
}

func processAlive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}
