package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
)

// proc is one child process (the emulator or the CCM) started by
// childproc.Start, with stdout and stderr appended to a log file. Its own
// process group keeps a Ctrl-C at the terminal from reaching it directly:
// the demo decides the order of teardown; on Linux it also dies with the
// demo (Pdeathsig) if the demo is killed outright.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed once the process has exited and been reaped
	waitErr error         // valid after done
}

func startProc(name, bin string, args, env []string, logPath string) (*proc, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logFile, "### demo %s: %s %s\n", time.Now().Format(time.RFC3339), bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), env...)
	if err := childproc.Start(cmd); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitError describes an unexpected exit, with the tail of the log.
func (p *proc) exitError() error {
	status := "status 0"
	if p.waitErr != nil {
		status = p.waitErr.Error()
	}
	return fmt.Errorf("%s exited unexpectedly (%s)\n--- tail of %s ---\n%s", p.name, status, p.logPath, childproc.LogTail(p.logPath, 3000))
}

// stop sends SIGTERM to the process group, then SIGKILL after grace, and
// waits until the process is reaped.
func (p *proc) stop(grace time.Duration) error {
	if p == nil {
		return nil
	}
	if !p.exited() {
		_ = childproc.SignalGroup(p.cmd.Process, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			fmt.Fprintf(os.Stderr, "demo: %s did not exit %s after SIGTERM; sending SIGKILL\n", p.name, grace)
			_ = childproc.SignalGroup(p.cmd.Process, syscall.SIGKILL)
			select {
			case <-p.done:
			case <-time.After(10 * time.Second):
				return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, p.cmd.Process.Pid)
			}
		}
	}
	_ = childproc.SignalGroup(p.cmd.Process, syscall.SIGKILL) // anything the child forked
	return nil
}
