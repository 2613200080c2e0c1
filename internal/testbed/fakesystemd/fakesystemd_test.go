package fakesystemd_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/internal/testbed/fakekubelet"
	"github.com/awsccmctl/awsccmctl/internal/testbed/fakesystemd"
	"github.com/awsccmctl/awsccmctl/internal/testbed/fakesystemd/wire"
)

func TestMain(m *testing.M) {
	fakekubelet.Serve()
	os.Exit(m.Run())
}

// node is a fake node root with a kubelet stand-in behind a fake systemd.
type node struct {
	root, envFile string
	port          int
	kubelet       *fakekubelet.Service
	srv           *fakesystemd.Server
	systemctl     string // the client, installed under root
}

// newNode lays out a node under root: kubeadm-flags.env with flags, the
// static systemctl at /usr/bin/systemctl, and the fake systemd serving
// kubelet.service.
func newNode(t *testing.T, root, flags string) *node {
	t.Helper()
	ctx := t.Context()
	start := time.Now()
	bin, err := fakesystemd.BuildSystemctl(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("BuildSystemctl took %s", time.Since(start).Round(time.Millisecond))
	if err := fakesystemd.InstallSystemctl(bin, root); err != nil {
		t.Fatal(err)
	}
	port, err := childproc.FreePort(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := &node{root: root, envFile: filepath.Join(root, "var", "lib", "kubelet", "kubeadm-flags.env"), port: port,
		systemctl: filepath.Join(root, "usr", "bin", "systemctl")}
	n.writeFlags(t, flags)
	n.kubelet = fakekubelet.NewService(t, port, "ok", n.envFile)
	n.srv, err = fakesystemd.Start(fakesystemd.Options{
		Root:    root,
		Handler: fakesystemd.Units(map[string]fakesystemd.Unit{"kubelet.service": n.kubelet}),
		Logf:    t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.srv.Stop)
	return n
}

func (n *node) writeFlags(t *testing.T, flags string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(n.envFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(n.envFile, []byte(`KUBELET_KUBEADM_ARGS="`+flags+`"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// run runs the client outside a chroot, pointed at the node's socket.
func (n *node) run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), n.systemctl, args...)
	cmd.Env = []string{wire.SocketEnv + "=" + n.srv.SocketPath()}
	return runCmd(t, cmd)
}

func runCmd(t *testing.T, cmd *exec.Cmd) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), errOut.String()
	}
	if err != nil {
		t.Fatalf("run %s: %v", cmd.Path, err)
	}
	return 0, out.String(), errOut.String()
}

// waitKubelet waits until a fake kubelet other than notPid answers
// /healthz on the node's port and returns its command line from /proc.
func (n *node) waitKubelet(t *testing.T, notPid int) (pid int, cmdline []string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		pid = n.kubelet.PID()
		if pid != 0 && pid != notPid && healthz(n.port) == "ok" {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if err == nil {
				return pid, strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new fake kubelet (not pid %d) answers /healthz on port %d; log:\n%s", notPid, n.port, childproc.LogTail(n.kubelet.LogPath(), 2048))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func healthz(port int) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/healthz", port), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestUnitsVerbs(t *testing.T) {
	// A root whose socket path is too long for a socket address: the
	// server and the client go through /proc/self/fd.
	root := filepath.Join(t.TempDir(), strings.Repeat("long-node-root-", 6))
	n := newNode(t, root, "--cloud-provider=aws --node-ip=10.0.1.10")
	if len(n.srv.SocketPath()) <= 107 {
		t.Fatalf("socket path %s is short: the test means a long one", n.srv.SocketPath())
	}

	if code, out, _ := n.run(t, "is-active", "kubelet"); code != 3 || out != "inactive\n" {
		t.Errorf("is-active before start = %d %q, want 3 inactive", code, out)
	}
	if code, _, errOut := n.run(t, "start", "kubelet"); code != 0 {
		t.Fatalf("start = %d %s", code, errOut)
	}
	first, argv := n.waitKubelet(t, 0)
	if filepath.Base(argv[0]) != "kubelet" || !strings.Contains(strings.Join(argv, " "), "--cloud-provider=aws --node-ip=10.0.1.10") {
		t.Errorf("started kubelet runs %q, want kubelet with the flags of kubeadm-flags.env", argv)
	}

	n.writeFlags(t, "--cloud-provider=external --node-ip=10.0.1.10")
	if code, _, errOut := n.run(t, "--no-block", "restart", "kubelet.service"); code != 0 {
		t.Fatalf("restart = %d %s", code, errOut)
	}
	if testbed.ProcessAlive(first) {
		t.Errorf("the kubelet before the restart (pid %d) still runs", first)
	}
	second, argv := n.waitKubelet(t, first)
	if !strings.Contains(strings.Join(argv, " "), "--cloud-provider=external") {
		t.Errorf("restarted kubelet (pid %d) runs %q, want the edited flags", second, argv)
	}
	if code, out, _ := n.run(t, "is-active", "kubelet"); code != 0 || out != "active\n" {
		t.Errorf("is-active = %d %q, want 0 active", code, out)
	}
	if code, _, _ := n.run(t, "daemon-reload"); code != 0 {
		t.Errorf("daemon-reload = %d", code)
	}
	if code, _, errOut := n.run(t, "restart", "containerd"); code != 5 || !strings.Contains(errOut, "Unit containerd.service not found.") {
		t.Errorf("restart of an unknown unit = %d %q, want 5 and not found", code, errOut)
	}
	if code, _, errOut := n.run(t, "frobnicate", "kubelet"); code != 1 || !strings.Contains(errOut, "Unknown command verb frobnicate") {
		t.Errorf("unknown verb = %d %q, want 1", code, errOut)
	}
	if code, _, errOut := n.run(t, "stop", "kubelet"); code != 0 || n.kubelet.Active() || testbed.ProcessAlive(second) {
		t.Errorf("stop = %d %q; active %v, pid %d alive %v", code, errOut, n.kubelet.Active(), second, testbed.ProcessAlive(second))
	}

	var verbs []string
	for _, c := range n.srv.Calls() {
		verbs = append(verbs, c.Verb+" "+strings.Join(c.Units, ",")+fmt.Sprintf("=%d", c.Reply.Code))
	}
	want := "is-active kubelet.service=3|start kubelet.service=0|restart kubelet.service=0|is-active kubelet.service=0|daemon-reload =0|restart containerd.service=5|frobnicate kubelet.service=1|stop kubelet.service=0"
	if got := strings.Join(verbs, "|"); got != want {
		t.Errorf("calls:\n got %s\nwant %s", got, want)
	}
	if log, _ := os.ReadFile(n.srv.LogPath()); strings.Count(string(log), "\n") != 8 || !strings.Contains(string(log), "systemctl --no-block restart kubelet.service -> 0") {
		t.Errorf("call log:\n%s", log)
	}
	if n.kubelet.Starts() != 2 {
		t.Errorf("kubelet starts = %d, want 2", n.kubelet.Starts())
	}
}

func TestClientWithoutServer(t *testing.T) {
	bin, err := fakesystemd.BuildSystemctl(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), bin, "restart", "kubelet")
	cmd.Env = []string{wire.SocketEnv + "=" + filepath.Join(t.TempDir(), "none.sock")}
	code, _, errOut := runCmd(t, cmd)
	if code != 1 || !strings.Contains(errOut, "fake systemd does not answer") {
		t.Errorf("client without a server = %d %q, want 1 and a clear error", code, errOut)
	}
}

// TestChrootedSystemctlRestartsKubelet runs the client as the node step's
// --chroot-systemctl does: /usr/bin/systemctl, chrooted into the node's
// root, with no environment pointing at the socket.
func TestChrootedSystemctlRestartsKubelet(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root (CAP_SYS_CHROOT); TestUnitsVerbs covers the rest unprivileged")
	}
	n := newNode(t, t.TempDir(), "--cloud-provider=aws")
	if err := n.kubelet.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	first, _ := n.waitKubelet(t, 0)
	n.writeFlags(t, "--cloud-provider=external")

	cmd := exec.CommandContext(t.Context(), "/usr/bin/systemctl", "restart", "kubelet")
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: n.root}
	cmd.Dir = "/"
	cmd.Env = []string{}
	code, out, errOut := runCmd(t, cmd)
	if code == 0 && errOut == "" && out == "" && len(n.srv.Calls()) == 0 {
		t.Fatal("systemctl exited 0 but the fake systemd got no call")
	}
	if code != 0 {
		if os.Getenv("CI") == "" && strings.Contains(errOut, "operation not permitted") {
			t.Skipf("chroot refused although root (a container without CAP_SYS_CHROOT?): %s", errOut)
		}
		t.Fatalf("chrooted systemctl restart kubelet = %d, stdout %q, stderr %q", code, out, errOut)
	}
	second, argv := n.waitKubelet(t, first)
	if !strings.Contains(strings.Join(argv, " "), "--cloud-provider=external") {
		t.Errorf("restarted kubelet (pid %d) runs %q, want --cloud-provider=external", second, argv)
	}
	if calls := n.srv.Calls(); len(calls) != 1 || calls[0].Verb != "restart" || calls[0].Units[0] != "kubelet.service" {
		t.Errorf("calls = %+v, want one restart of kubelet.service", calls)
	}
}

func TestParseCall(t *testing.T) {
	for _, c := range []struct {
		args  []string
		verb  string
		units []string
	}{
		{[]string{"restart", "kubelet"}, "restart", []string{"kubelet.service"}},
		{[]string{"--no-block", "-q", "restart", "kubelet.service", "containerd"}, "restart", []string{"kubelet.service", "containerd.service"}},
		{[]string{"daemon-reload"}, "daemon-reload", nil},
		{[]string{"is-active", "kubelet.socket"}, "is-active", []string{"kubelet.socket"}},
		{[]string{"--quiet"}, "", nil},
	} {
		got := fakesystemd.ParseCall(c.args)
		if got.Verb != c.verb || strings.Join(got.Units, ",") != strings.Join(c.units, ",") || strings.Join(got.Args, " ") != strings.Join(c.args, " ") {
			t.Errorf("ParseCall(%q) = %q %q, want %q %q", c.args, got.Verb, got.Units, c.verb, c.units)
		}
	}
}
