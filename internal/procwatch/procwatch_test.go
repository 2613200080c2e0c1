//go:build linux

package procwatch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
)

// The test binary doubles as the listening child: PROCWATCH_HELPER=listen
// makes it listen on PROCWATCH_NET/PROCWATCH_ADDR, print the port and serve
// until killed, so the tests watch real processes through the real /proc.
func TestMain(m *testing.M) {
	if os.Getenv("PROCWATCH_HELPER") == "listen" {
		serve(os.Getenv("PROCWATCH_NET"), os.Getenv("PROCWATCH_ADDR"), os.Getenv("PROCWATCH_REUSEPORT") != "")
		os.Exit(1) // serve returns only on an error
	}
	os.Exit(m.Run())
}

func serve(network, addr string, reusePort bool) {
	var lc net.ListenConfig
	if reusePort {
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var err error
			if cerr := c.Control(func(fd uintptr) { err = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) }); cerr != nil {
				return cerr
			}
			return err
		}
	}
	ln, err := lc.Listen(context.Background(), network, addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	// Accepting keeps the listener reachable (a collected listener is
	// closed by its finalizer) and blocks without tripping deadlock detection.
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		_ = c.Close()
	}
}

// startListener starts the helper child and returns it with its port. The
// child is killed and reaped when the test ends.
func startListener(t *testing.T, network, addr string, reusePort bool) (*exec.Cmd, int) {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), os.Args[0])
	cmd.Env = append(os.Environ(), "PROCWATCH_HELPER=listen", "PROCWATCH_NET="+network, "PROCWATCH_ADDR="+addr)
	if reusePort {
		cmd.Env = append(cmd.Env, "PROCWATCH_REUSEPORT=1")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := childproc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("helper printed no port: %v; stderr: %s", err, stderr.String())
	}
	port, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("helper printed %q: %v", line, err)
	}
	return cmd, port
}

func newFS(t *testing.T) FS {
	t.Helper()
	fs, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestListenerOf(t *testing.T) {
	fs := newFS(t)
	cmd, port := startListener(t, "tcp4", "127.0.0.1:0", false)
	p, err := fs.ListenerOf(port)
	if err != nil {
		t.Fatal(err)
	}
	if p.PID != cmd.Process.Pid {
		t.Errorf("ListenerOf(%d).PID = %d, want the child's %d", port, p.PID, cmd.Process.Pid)
	}
	if p.StartTime == 0 {
		t.Errorf("ListenerOf(%d).StartTime = 0, want the child's start time", port)
	}
	// The kernel truncates comm to 15 bytes.
	if want := filepath.Base(os.Args[0]); p.Comm != want[:min(len(want), 15)] {
		t.Errorf("ListenerOf(%d).Comm = %q, want %q", port, p.Comm, want)
	}

	// Our end of a connection to the child has a port too, but it is
	// ESTABLISHED, not LISTEN.
	conn, err := (&net.Dialer{}).DialContext(context.Background(), "tcp4", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	closed, err := childproc.FreePort(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for name, port := range map[string]int{
		"closed port":        closed,
		"established socket": conn.LocalAddr().(*net.TCPAddr).Port,
	} {
		if _, err := fs.ListenerOf(port); !errors.Is(err, ErrNoListener) {
			t.Errorf("%s: ListenerOf(%d) error = %v, want ErrNoListener", name, port, err)
		}
	}
}

func TestListenerOfTwoProcesses(t *testing.T) {
	fs := newFS(t)
	first, port := startListener(t, "tcp4", "127.0.0.1:0", true)
	second, _ := startListener(t, "tcp4", fmt.Sprintf("127.0.0.1:%d", port), true)
	_, err := fs.ListenerOf(port)
	if err == nil || errors.Is(err, ErrNoListener) {
		t.Fatalf("ListenerOf(%d) error = %v, want one naming both listeners", port, err)
	}
	for _, pid := range []int{first.Process.Pid, second.Process.Pid} {
		if !strings.Contains(err.Error(), fmt.Sprintf("pid %d ", pid)) {
			t.Errorf("error %q does not name pid %d", err, pid)
		}
	}
}

func TestStoppedIsAliveAndZombieIsGone(t *testing.T) {
	fs := newFS(t)
	cmd, port := startListener(t, "tcp4", "127.0.0.1:0", false)
	p, err := fs.ListenerOf(port)
	if err != nil {
		t.Fatal(err)
	}

	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitState(t, fs, p.PID, "T")
	if alive, err := fs.Alive(p); err != nil || !alive {
		t.Fatalf("stopped: Alive = %v, %v; want true", alive, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if _, err := fs.WaitExit(ctx, p, 50*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stopped: WaitExit error = %v, want context.DeadlineExceeded", err)
	}

	// Not reaped yet, so the child lingers as a zombie.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	gone, err := fs.WaitExit(ctx, p, 20*time.Millisecond)
	if err != nil {
		t.Fatalf("killed: WaitExit error = %v, want the time it was seen gone", err)
	}
	if gone.Before(before) || time.Since(before) > 2*time.Second {
		t.Errorf("killed: WaitExit returned %v, %v after the kill; want promptly", gone, gone.Sub(before))
	}
	waitState(t, fs, p.PID, "Z") // proves the zombie, not an absent PID, was judged gone
	_ = cmd.Wait()
}

// waitState waits until pid is in state, so that assertions about a signalled
// process do not race the kernel delivering the signal.
func waitState(t *testing.T, fs FS, pid int, state string) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		proc, err := fs.proc.Proc(pid)
		if err != nil {
			t.Fatal(err)
		}
		st, err := proc.Stat()
		if err != nil {
			t.Fatal(err)
		}
		if last = st.State; last == state {
			return
		}
	}
	t.Fatalf("pid %d is in state %q, want %q", pid, last, state)
}

func TestReusedPIDIsGone(t *testing.T) {
	fs := newFS(t)
	_, port := startListener(t, "tcp4", "127.0.0.1:0", false)
	p, err := fs.ListenerOf(port)
	if err != nil {
		t.Fatal(err)
	}
	if alive, err := fs.Alive(p); err != nil || !alive {
		t.Fatalf("Alive(%s) = %v, %v; want true", p, alive, err)
	}
	other := p
	other.StartTime++
	if alive, err := fs.Alive(other); err != nil || alive {
		t.Errorf("Alive(%s) = %v, %v; want false: same PID, different start time", other, alive, err)
	}
	if _, err := fs.Alive(Process{}); err == nil {
		t.Error("Alive(Process{}) succeeded; want an error, not a verdict on a zero Process")
	}
}

func TestListenerOfIPv6(t *testing.T) {
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("::1 is unavailable, so no IPv6 listener can be tested: %v", err)
	}
	_ = ln.Close()
	fs := newFS(t)
	for _, tc := range []struct{ name, network, addr string }{
		{"loopback ::1", "tcp6", "[::1]:0"},
		// Go's usual wildcard listener: one dual-stack socket, only in tcp6.
		{"dual-stack wildcard", "tcp", ":0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, port := startListener(t, tc.network, tc.addr, false)
			p, err := fs.ListenerOf(port)
			if err != nil {
				t.Fatal(err)
			}
			if p.PID != cmd.Process.Pid {
				t.Errorf("ListenerOf(%d).PID = %d, want the child's %d", port, p.PID, cmd.Process.Pid)
			}
		})
	}
}
