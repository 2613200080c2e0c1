package main

import (
	"context"
	"os"
	"os/exec"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
)

// startProc starts one child of the demo (the emulator or the CCM) in its
// own process group, so a Ctrl-C at the terminal does not reach it directly
// and the demo decides the order of teardown; on Linux it also dies with the
// demo (Pdeathsig) if the demo is killed outright. Each run starts a fresh
// log. env is the child's whole environment.
func startProc(name, bin string, args, env []string, logPath string) (*childproc.Process, error) {
	_ = os.Remove(logPath)
	cmd := exec.CommandContext(context.Background(), bin, args...)
	cmd.Env = env
	return childproc.StartLogged(name, cmd, logPath)
}
