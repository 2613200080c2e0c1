package childproc

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
)

func TestStartPdeathsig(t *testing.T) {
	cmd := exec.CommandContext(context.Background(), "true")
	if err := Start(cmd); err != nil {
		t.Fatalf("Start: %v", err)
	}
	_ = cmd.Wait()
	if got := cmd.SysProcAttr.Pdeathsig; got != syscall.SIGKILL {
		t.Errorf("Pdeathsig = %v, want SIGKILL", got)
	}

	cmd = exec.CommandContext(context.Background(), "true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := Start(cmd); err != nil {
		t.Fatalf("Start: %v", err)
	}
	_ = cmd.Wait()
	if got := cmd.SysProcAttr.Pdeathsig; got != syscall.SIGTERM {
		t.Errorf("caller's Pdeathsig = %v after Start, want it kept (SIGTERM)", got)
	}
}
