package fakekubelet

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
)

// The environment that makes the test binary a fake kubelet.
const (
	envServe   = "FAKEKUBELET_SERVE"
	envAddress = "FAKEKUBELET_ADDRESS"
	envPort    = "FAKEKUBELET_PORT"
	envHealthz = "FAKEKUBELET_HEALTHZ"
	// envStartDelay is a duration the fake kubelet waits before it
	// listens: a kubelet is not healthy the instant it is exec'd.
	envStartDelay = "FAKEKUBELET_START_DELAY"
)

// Serve makes this process the fake kubelet when it was started as one,
// and then never returns; otherwise it returns at once. Call it first in
// TestMain.
func Serve() {
	if os.Getenv(envServe) == "" {
		return
	}
	if d, err := time.ParseDuration(os.Getenv(envStartDelay)); err == nil {
		time.Sleep(d)
	}
	addr := os.Getenv(envAddress)
	if addr == "" {
		addr = "127.0.0.1"
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", net.JoinHostPort(addr, os.Getenv(envPort)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	answer := os.Getenv(envHealthz)
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if answer != "ok" {
			w.WriteHeader(http.StatusInternalServerError)
		}
		fmt.Fprint(w, answer)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: time.Second}
	fmt.Fprintln(os.Stderr, srv.Serve(ln))
	os.Exit(1)
}

// Program returns a symlink named name (kubelet, or another name to play
// another program) to the test binary, and the environment that makes it
// serve healthz (answering "ok" or, with HTTP 500, anything else) on port
// (0: a free one, printed on stdout).
func Program(t *testing.T, name, healthz string, port int) (path string, env []string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), name)
	if err := os.Symlink(os.Args[0], path); err != nil {
		t.Fatal(err)
	}
	return path, []string{envServe + "=1", envPort + "=" + strconv.Itoa(port), envHealthz + "=" + healthz}
}

// Start runs a fake kubelet named name with args on 127.0.0.1 and returns
// it with its healthz port; it is killed when the test ends.
func Start(t *testing.T, name, healthz string, args ...string) (*exec.Cmd, int) {
	t.Helper()
	return StartOn(t, "127.0.0.1", name, healthz, args...)
}

// StartOn is Start on another loopback address (::1).
func StartOn(t *testing.T, address, name, healthz string, args ...string) (*exec.Cmd, int) {
	t.Helper()
	path, env := Program(t, name, healthz, 0)
	cmd := exec.CommandContext(context.Background(), path, args...)
	cmd.Env = append(os.Environ(), append(env, envAddress+"="+address)...)
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
		t.Fatalf("the fake kubelet printed no port: %v", err)
	}
	port, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the fake kubelet printed %q", line)
	}
	return cmd, port
}

// Systemctl writes a systemctl that runs the fake kubelet as systemd runs
// the kubelet: `start` and `restart` (which stops the one it started first
// and waits for it to exit) read envFile afresh, as systemd reads a unit's
// EnvironmentFile at each start, and pass $KUBELET_KUBEADM_ARGS and
// $KUBELET_EXTRA_ARGS to a fake kubelet serving healthz on port. Every
// call is logged to the returned log. The last fake kubelet is stopped
// when the test ends.
func Systemctl(t *testing.T, port int, healthz, envFile string) (systemctl, log string) {
	t.Helper()
	dir := t.TempDir()
	kubelet, env := Program(t, "kubelet", healthz, port)
	quoted := make([]string, len(env))
	for i, e := range env {
		quoted[i] = strconv.Quote(e) // sh's double quotes, for this plain text
	}
	log, pidFile := filepath.Join(dir, "log"), filepath.Join(dir, "pid")
	script := fmt.Sprintf(`#!/bin/sh
echo "$*" >> %[1]q
start() {
	KUBELET_KUBEADM_ARGS= KUBELET_EXTRA_ARGS=
	. %[2]q
	env %[3]s %[4]q $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS >/dev/null 2>&1 &
	echo $! > %[5]q
}
case "$1" in
daemon-reload) ;;
start) start ;;
restart)
	old=$(cat %[5]q)
	kill "$old"
	while kill -0 "$old" 2>/dev/null; do sleep 0.05; done
	start ;;
*) echo "unknown verb $1" >&2; exit 1 ;;
esac
`, log, envFile, strings.Join(quoted, " "), kubelet, pidFile)
	systemctl = filepath.Join(dir, "systemctl")
	if err := os.WriteFile(systemctl, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return systemctl, log
}
