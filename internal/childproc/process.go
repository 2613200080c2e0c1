package childproc

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Process is a child started with Start whose stdout and stderr go to a
// log file.
type Process struct {
	Name    string
	Cmd     *exec.Cmd
	LogPath string
	done    chan struct{} // closed once the process has exited and been reaped
	waitErr error         // valid after done
}

// StartLogged appends a header line naming the command to logPath, sends the
// child's output there, starts it with Start and reaps it in the background.
func StartLogged(name string, cmd *exec.Cmd, logPath string) (*Process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logFile, "### %s %s: %s\n", name, time.Now().Format(time.RFC3339Nano), strings.Join(cmd.Args, " "))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := Start(cmd); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{Name: name, Cmd: cmd, LogPath: logPath, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the child's process ID.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Exited reports whether the child has exited and been reaped.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ExitStatus says how the child exited; call it once Exited is true.
func (p *Process) ExitStatus() string {
	if p.waitErr != nil {
		return fmt.Sprintf("%s exited: %v", p.Name, p.waitErr)
	}
	return p.Name + " exited with status 0"
}

// ExitError is ExitStatus with the last tailBytes of the child's log.
func (p *Process) ExitError(tailBytes int64) error {
	return fmt.Errorf("%s\n--- tail of %s ---\n%s", p.ExitStatus(), p.LogPath, LogTail(p.LogPath, tailBytes))
}

// Stop sends SIGTERM to the child's process group, waits up to grace, then
// sends SIGKILL and waits for the child to be reaped. A last SIGKILL to the
// group catches anything the child forked.
func (p *Process) Stop(grace time.Duration) error {
	if p == nil {
		return nil
	}
	if !p.Exited() {
		_ = SignalGroup(p.Cmd.Process, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			_ = SignalGroup(p.Cmd.Process, syscall.SIGKILL)
			select {
			case <-p.done:
			case <-time.After(30 * time.Second):
				return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.Name, p.Pid())
			}
		}
	}
	_ = SignalGroup(p.Cmd.Process, syscall.SIGKILL)
	return nil
}
