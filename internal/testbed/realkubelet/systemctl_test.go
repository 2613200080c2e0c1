package realkubelet

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSystemctlRunsTheNodeFromItsFiles drives a node's systemctl against a
// stand-in kubelet (a script that records what it sees and sleeps): each
// start reads the node's files afresh and runs in the node's namespaces,
// and the verbs answer as systemctl does.
func TestSystemctlRunsTheNodeFromItsFiles(t *testing.T) {
	ctx := context.Background()
	if why := Unsupported(ctx); why != "" {
		t.Skip(why)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "fake", "kubelet")
	writeNodeFile(t, "/", bin, `#!/bin/sh
echo "$*" > /var/lib/kubelet/args
hostname > /var/log/hostname
cat /etc/kubernetes/cloud.conf > /var/lib/kubelet/cloud.conf
exec sleep 600
`)
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	n := &Node{Name: "node-a", Hostname: "ip-10-0-1-10", Dir: dir, Root: filepath.Join(dir, "root, with: a comma"), SystemctlDir: filepath.Join(dir, "bin"),
		LogPath: filepath.Join(dir, "kubelet.log"), kubeletBin: bin, env: os.Environ(), runDir: t.TempDir(), procCtx: ctx}
	if err := os.Mkdir(filepath.Join(n.runDir, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	n.Systemctl, n.SystemctlLog = filepath.Join(n.SystemctlDir, "systemctl"), filepath.Join(dir, "systemctl.log")
	n.KubeadmFlagsFile = filepath.Join(n.Root, KubeadmFlagsPath)
	l := layout{criEndpoint: "unix:///run/cri.sock", kubeadmArgs: InTreeFlags, port: 1, health: 2, caPEM: []byte("ca"), cloudConfig: "[Global]\nKubernetesClusterID = node-a\n"}
	if err := l.write(n.Root); err != nil {
		t.Fatal(err)
	}
	var err error
	if n.sup, err = startSupervisor(n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop() })

	systemctl := func(wantCode int, args ...string) string {
		t.Helper()
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, n.Systemctl, args...)
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != wantCode {
			t.Fatalf("systemctl %s: exit %d (%s), want %d", strings.Join(args, " "), code, out.String(), wantCode)
		}
		return strings.TrimSpace(out.String())
	}
	// waitFile waits for the stand-in's record of this start.
	waitFile := func(path, want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		var b []byte
		for time.Now().Before(deadline) {
			if b, _ = os.ReadFile(filepath.Join(n.Root, path)); strings.Contains(string(b), want) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("%s holds %q, want %q", path, b, want)
	}

	if out := systemctl(3, "is-active", "kubelet.service"); out != "inactive" {
		t.Errorf("is-active before a start: %q", out)
	}
	systemctl(0, "start", "kubelet")
	waitFile("/var/lib/kubelet/args", "--cloud-provider=aws")
	waitFile("/var/log/hostname", "ip-10-0-1-10")
	waitFile("/var/lib/kubelet/cloud.conf", "KubernetesClusterID = node-a")
	first := n.PID()
	if out := systemctl(0, "is-active", "kubelet.service"); out != "active" || first == 0 {
		t.Errorf("is-active after start: %q (pid %d)", out, first)
	}

	setCloudFlags(t, n, []string{"--cloud-provider=external"})
	systemctl(0, "daemon-reload")
	systemctl(0, "restart", "kubelet.service")
	waitFile("/var/lib/kubelet/args", "--cloud-provider=external")
	if second := n.PID(); second == 0 || second == first {
		t.Errorf("restart: pid %d, then %d", first, second)
	}
	if out := systemctl(5, "restart", "containerd.service"); !strings.Contains(out, "containerd.service not found") {
		t.Errorf("restart of another unit: %q", out)
	}
	systemctl(1, "reboot")
	systemctl(0, "stop", "kubelet.service")
	if n.PID() != 0 {
		t.Error("stop left the kubelet running")
	}
	if b, err := os.ReadFile(n.SystemctlLog); err != nil || !strings.HasPrefix(string(b), "is-active kubelet.service\nstart kubelet\n") {
		t.Errorf("systemctl log: %q, %v", b, err)
	}
	if _, err := os.Stat("/var/lib/kubelet/args"); err == nil {
		t.Error("the stand-in wrote to the host's /var/lib/kubelet: the bind mount is missing")
	}
}
