package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
)

// binary is this command, built once by TestMain; empty under -short,
// where the tests that run it are skipped.
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runTests(m))
}

// runTests builds the binary (unless -short) and runs the tests, removing
// the build folder afterwards.
func runTests(m *testing.M) int {
	if testing.Short() {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "awsccmctl-main-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	binary = filepath.Join(dir, "awsccmctl")
	if out, err := exec.CommandContext(context.Background(), "go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// built returns the binary TestMain built, skipping the test under -short.
func built(t *testing.T) string {
	t.Helper()
	if binary == "" {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	return binary
}

// TestInterruptExits130: SIGINT cancels whatever the command is doing, and
// the binary exits 130 saying "interrupted", as documented, whichever
// command it is (here preflight, waiting on an API server that accepts
// connections and never answers).
func TestInterruptExits130(t *testing.T) {
	bin := built(t)
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 16)
	defer func() {
		_ = l.Close()
		for c := range accepted {
			_ = c.Close()
		}
	}()
	go func() {
		defer close(accepted)
		for {
			c, err := l.Accept() // accepted, never answered
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	kc := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://` + l.Addr().String() + `", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
	if err := os.WriteFile(kubeconfig, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), bin, "preflight", "--kubeconfig", kubeconfig, "--aws=false")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Once the binary has connected to the silent server, its signal
	// handler (set before any command runs) is in place and a request is
	// waiting.
	select {
	case c := <-accepted:
		defer func() { _ = c.Close() }()
	case err := <-done:
		t.Fatalf("exited before connecting to the API server: %v\n%s", err, stderr.String())
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("no connection to the API server in 30 s\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("still running 30 s after SIGINT\n%s", stderr.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitcode.Interrupted || !strings.Contains(stderr.String(), "awsccmctl: interrupted") {
		t.Fatalf("after SIGINT: %v, want exit %d and \"interrupted\"\n%s", err, exitcode.Interrupted, stderr.String())
	}
}

// TestErrorsKeepTheirExitCode: without a signal, a failing command exits
// with its own code, not 130 (the handler's context is cancelled on the
// way out too, which must not read as an interrupt).
func TestErrorsKeepTheirExitCode(t *testing.T) {
	bin := built(t)
	var exit *exec.ExitError
	out, err := exec.CommandContext(context.Background(), bin, "preflight", "--root", t.TempDir()).CombinedOutput()
	if !errors.As(err, &exit) || exit.ExitCode() != exitcode.Usage || strings.Contains(string(out), "interrupted") {
		t.Fatalf("preflight --root without --node: %v, want exit %d\n%s", err, exitcode.Usage, out)
	}
}
