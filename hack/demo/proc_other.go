//go:build unix && !linux

package main

import (
	"os/exec"
	"syscall"
)

// No Pdeathsig outside Linux: a demo killed with SIGKILL may leave its
// children running (Ctrl-C and failures still tear everything down).
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func startCmd(cmd *exec.Cmd) error { return cmd.Start() }
