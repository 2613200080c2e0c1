package testbed

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
)

// process is one child (etcd or kube-apiserver) started by childproc.Start
// (its own process group; on Linux, killed with the test binary), with
// stdout and stderr appended to one log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed once the process has exited and been reaped
	waitErr error         // valid after done
}

func startProcess(name, bin string, args []string, logPath string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logFile, "### testbed %s: %s %s\n", time.Now().Format(time.RFC3339Nano), bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := childproc.Start(cmd); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, waits up to grace, then sends
// SIGKILL to the group and waits for the process to be reaped. A second
// SIGKILL to the group afterwards catches any child left behind.
func (p *process) stop(grace time.Duration) error {
	if !p.exited() {
		_ = childproc.SignalGroup(p.cmd.Process, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			_ = childproc.SignalGroup(p.cmd.Process, syscall.SIGKILL)
			select {
			case <-p.done:
			case <-time.After(30 * time.Second):
				return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, p.pid())
			}
		}
	}
	_ = childproc.SignalGroup(p.cmd.Process, syscall.SIGKILL)
	return nil
}

// describeExit returns "exited: <status>" once the process is gone.
func (p *process) describeExit() string {
	if p.waitErr != nil {
		return fmt.Sprintf("%s exited: %v", p.name, p.waitErr)
	}
	return p.name + " exited with status 0"
}

// logTailBytes is how much of a child's log goes into an error.
const logTailBytes = 4096

func logContains(path, s string) bool {
	b, err := os.ReadFile(path)
	return err == nil && bytes.Contains(b, []byte(s))
}
