package main

import (
	"bytes"
	"context"
	"errors"
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

// TestInterruptExits130: SIGINT cancels whatever the command is doing, and
// the binary exits 130 saying "interrupted", as documented, whichever
// command it is (here preflight, waiting on an API server that accepts
// connections and never answers).
func TestInterruptExits130(t *testing.T) {
	bin := build(t)
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
	// Long enough for the signal handler to be in place and the request
	// to be waiting on the silent server.
	time.Sleep(2 * time.Second)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
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
	bin := build(t)
	var exit *exec.ExitError
	out, err := exec.CommandContext(context.Background(), bin, "preflight", "--root", t.TempDir()).CombinedOutput()
	if !errors.As(err, &exit) || exit.ExitCode() != exitcode.Usage || strings.Contains(string(out), "interrupted") {
		t.Fatalf("preflight --root without --node: %v, want exit %d\n%s", err, exitcode.Usage, out)
	}
}

// build builds this binary into a temporary folder.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "awsccmctl")
	if out, err := exec.CommandContext(context.Background(), "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
