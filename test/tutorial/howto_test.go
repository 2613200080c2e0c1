package tutorial

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHowTos runs every sh block of the install how-tos as written, page
// by page, each in one bash with -e in a directory of its own, against
// the demo's kube-apiserver and AWS emulator (hack/demo.sh up). The
// harness does what the pages tell the reader to do for their own
// cluster, and nothing else: KUBECONFIG and AWS_* come from the demo's
// env.sh (the pages use the current kubeconfig and the environment's AWS
// settings), awsccmctl is the one just built, on PATH. AWSCCMCTL_TIMEOUT
// (an environment form of --timeout, which install-existing-cluster
// documents) shortens the waits that cannot end well on a test bed
// without kubelets. Blocks marked skip are counted and their reasons
// printed; blocks marked with an exit code must end with exactly that
// code.
func TestHowTos(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the kept demo, which needs the test bed: make test runs it")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	up := exec.CommandContext(context.Background(), "hack/demo.sh", "up")
	up.Dir = root
	up.Env = freshEnv(os.Environ())
	t.Cleanup(func() {
		down := exec.CommandContext(context.Background(), "hack/demo.sh", "down")
		down.Dir = root
		if out, err := down.CombinedOutput(); err != nil {
			t.Logf("hack/demo.sh down: %v\n%s", err, out)
		}
	})
	if out, err := up.CombinedOutput(); err != nil {
		t.Fatalf("hack/demo.sh up: %v\n%s", err, out)
	}
	// The harness's own lines, before the page's commands.
	prologue := ". " + filepath.Join(root, "_output/demo/env.sh") + "\n" +
		"export PATH=" + filepath.Join(root, "_output/bin") + ":\"$PATH\"\n" +
		"export AWSCCMCTL_TIMEOUT=10s\n"

	t.Run("install-existing-cluster", func(t *testing.T) {
		out, dir := runPage(t, root, "docs/install-existing-cluster.md", prologue, 4)
		// Step 2 reports on the demo cluster: the failures its marker
		// names, not a usage error for a missing cloud.conf.
		if !strings.Contains(out, "preflight failed: 2 failed: aws-node-names, aws-iam-permissions\n") {
			t.Errorf("step 2's preflight did not fail aws-node-names and aws-iam-permissions alone")
		}
		// Step 5's wait says what it waited for, not a client error.
		if !strings.Contains(out, "DaemonSet/kube-system/aws-cloud-controller-manager: not ready after 10s: ") {
			t.Errorf("the wait does not name the DaemonSet it waited for")
		}
		if strings.Contains(out, "rate limiter") {
			t.Errorf("the wait ended with a client error")
		}
		// Monitoring without prometheus-operator: refused, naming the CRDs.
		if !strings.Contains(out, "install prometheus-operator's CRDs first") {
			t.Errorf("install apply --monitoring on the demo did not name the missing CRDs")
		}
		// Step 6 removed what step 5 installed.
		if !strings.Contains(out, "DaemonSet/kube-system/aws-cloud-controller-manager deleted") {
			t.Errorf("install uninstall did not report the DaemonSet deleted")
		}
		for _, f := range []string{"cloud.conf", "install.yaml"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("the page's %s: %v", f, err)
			}
		}
	})
	t.Run("install-kubeadm", func(t *testing.T) {
		out, dir := runPage(t, root, "docs/install-kubeadm.md", prologue, 4)
		if b, err := os.ReadFile(filepath.Join(dir, "ccm-kubeadm.yaml")); err != nil || !bytes.Contains(b, []byte("cloud-provider")) {
			t.Errorf("1.1's ccm-kubeadm.yaml: %v\n%s", err, b)
		}
		// 1.2: the provider ID from the emulator's metadata service.
		if !strings.Contains(out, "aws:///us-east-1") {
			t.Errorf("install kubeadm --from-imds printed no provider ID from IMDS")
		}
		if !strings.Contains(out, "DaemonSet/kube-system/aws-cloud-controller-manager: not ready after 10s: ") {
			t.Errorf("the wait does not name the DaemonSet it waited for")
		}
		if !strings.Contains(out, "preflight failed: 2 failed: nodes-provider-id, aws-node-names\n") {
			t.Errorf("1.4's preflight did not fail nodes-provider-id and aws-node-names alone")
		}
		for _, f := range []string{"ccm-policy.json", "node-policy.json"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil || !json.Valid(b) || !bytes.Contains(b, []byte(`"Statement"`)) {
				t.Errorf("the IAM section's %s is not a policy: %v\n%s", f, err, b)
			}
		}
	})
}

// runPage runs page's blocks after prologue in a new directory and
// returns the output and the directory. Fewer runnable blocks than
// minRun means the markers skip what should run.
func runPage(t *testing.T, root, page, prologue string, minRun int) (string, string) {
	t.Helper()
	md, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseBlocks(page, string(md))
	if err != nil {
		t.Fatal(err)
	}
	body, skipped := script(page, blocks)
	t.Logf("%s: %d sh blocks, %d run, %d skipped", page, len(blocks), len(blocks)-len(skipped), len(skipped))
	for _, s := range skipped {
		t.Logf("skipped %s", s)
	}
	if len(blocks)-len(skipped) < minRun {
		t.Fatalf("%s: only %d blocks run on the test bed", page, len(blocks)-len(skipped))
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The prologue's set -e does not reach the page: script starts with
	// its own set -euo pipefail.
	cmd := exec.CommandContext(ctx, "bash", "-c", prologue+body)
	cmd.Dir = dir
	cmd.Env = freshEnv(os.Environ())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the commands of %s failed: %v\n%s", page, err, out.String())
	}
	t.Logf("output of %s:\n%s", page, out.String())
	return out.String(), dir
}
