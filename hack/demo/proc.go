package main

import (
	"os"
	"os/exec"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
)

// startProc starts one child of the demo (the emulator or the CCM) in its
// own process group, so a Ctrl-C at the terminal does not reach it directly
// and the demo decides the order of teardown; on Linux it also dies with the
// demo (Pdeathsig) if the demo is killed outright. Each run starts a fresh
// log. env is the child's whole environment. No context ends the child:
// the demo stops it itself, in order, with a grace period (teardown).
func startProc(name, bin string, args, env []string, logPath string) (*childproc.Process, error) {
	_ = os.Remove(logPath)
	cmd := exec.Command(bin, args...) //nolint:noctx // the demo stops the child itself (see above), never by a context's kill
	cmd.Env = env
	return childproc.StartLogged(name, cmd, logPath)
}
