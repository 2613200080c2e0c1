//go:build unix

package childproc

import (
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStartSignalGroup(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.CommandContext(context.Background(), sleep, "30")
	callerAttr := &syscall.SysProcAttr{}
	cmd.SysProcAttr = callerAttr
	if err := Start(cmd); err != nil {
		t.Fatalf("Start: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	pid := cmd.Process.Pid
	t.Cleanup(func() { _ = SignalGroup(cmd.Process, syscall.SIGKILL) })

	if callerAttr.Setpgid {
		t.Errorf("Start modified the caller's SysProcAttr")
	}
	if !cmd.SysProcAttr.Setpgid {
		t.Errorf("Setpgid not set: %+v", *cmd.SysProcAttr)
	}
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
		t.Errorf("Getpgid(%d) = %d, %v; want its own group", pid, pgid, err)
	}
	select {
	case err := <-done:
		t.Fatalf("pid %d exited after Start: %v", pid, err)
	default:
	}

	if err := SignalGroup(cmd.Process, syscall.SIGTERM); err != nil {
		t.Fatalf("SignalGroup: %v", err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "terminated") {
			t.Errorf("Wait = %v, want killed by SIGTERM", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("pid %d still running 2s after SIGTERM to its group", pid)
	}
}

func TestStartRejectsSetsid(t *testing.T) {
	cmd := exec.CommandContext(context.Background(), "true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := Start(cmd); err == nil {
		_ = cmd.Wait()
		t.Fatal("Start with Setsid succeeded")
	}
}
