package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// proc is one child process (the emulator or the CCM) in its own process
// group, with stdout and stderr appended to a log file. Its own process
// group keeps a Ctrl-C at the terminal from reaching it directly: the demo
// decides the order of teardown.
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
	cmd.SysProcAttr = sysProcAttr()
	if err := startCmd(cmd); err != nil {
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
	return fmt.Errorf("%s exited unexpectedly (%s)\n--- tail of %s ---\n%s", p.name, status, p.logPath, logTail(p.logPath, 3000))
}

// stop sends SIGTERM to the process group, then SIGKILL after grace, and
// waits until the process is reaped.
func (p *proc) stop(grace time.Duration) error {
	if p == nil {
		return nil
	}
	pgid := -p.cmd.Process.Pid
	if !p.exited() {
		_ = syscall.Kill(pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			fmt.Fprintf(os.Stderr, "demo: %s did not exit %s after SIGTERM; sending SIGKILL\n", p.name, grace)
			_ = syscall.Kill(pgid, syscall.SIGKILL)
			select {
			case <-p.done:
			case <-time.After(10 * time.Second):
				return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, p.cmd.Process.Pid)
			}
		}
	}
	_ = syscall.Kill(pgid, syscall.SIGKILL) // anything the child forked
	return nil
}

// logTail returns the last lines (about limit bytes) of a log file.
func logTail(path string, limit int64) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	off := max(st.Size()-limit, 0)
	b, _ := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	if off > 0 {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return strings.TrimRight(string(b), "\n")
}

// freePort asks the kernel for a free loopback port. Another process may
// take it before the CCM binds it; the CCM then exits and the demo fails
// with its log, which is acceptable for a demo.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
