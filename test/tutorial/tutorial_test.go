package tutorial

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

const page = "docs/getting-started.md"

// TestGettingStarted runs every sh block of the page in one bash with -e,
// so a command that fails where the page does not expect it fails the
// test, then checks what the reader is told to look for.
func TestGettingStarted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo, which needs the test bed: make test runs it")
	}
	// The page's prerequisites; without curl its health wait would loop
	// until the timeout instead of failing.
	for _, tool := range []string{"bash", "make", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s needs %s (its first paragraph says so): %v", page, tool, err)
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseBlocks(page, string(md))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) < 5 {
		t.Fatalf("%s has %d sh blocks; the tutorial has at least 5 steps", page, len(blocks))
	}
	// Whatever happens, nothing the page started outlives the test.
	t.Cleanup(func() {
		down := exec.CommandContext(context.Background(), "hack/demo.sh", "down")
		down.Dir = root
		if out, err := down.CombinedOutput(); err != nil {
			t.Logf("hack/demo.sh down: %v\n%s", err, out)
		}
	})

	// Each block is echoed first, so a failure shows which command failed.
	body, skipped := script(page, blocks)
	t.Logf("%s: %d sh blocks, %d skipped %q", page, len(blocks), len(skipped), skipped)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", body)
	cmd.Dir = root
	// A clean environment as on a fresh machine: no AWS settings or
	// kubeconfig of the developer's leak into the tutorial.
	cmd.Env = freshEnv(os.Environ())
	// Its own process group, so the CCM it starts in the background is
	// stopped with it if the script fails before its kill.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A command the page starts in the background keeps bash's output
	// pipe open after bash has exited (failed); without a delay Run would
	// wait for it until the timeout instead of failing at once.
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if runErr != nil {
		t.Fatalf("the commands of %s failed: %v\n%s\nCCM log:\n%s", page, runErr, out.String(), tail(filepath.Join(root, "_output/tutorial/ccm.log")))
	}
	got := out.String()
	t.Logf("output:\n%s", got)

	for _, want := range []*regexp.Regexp{
		// Step 1: the demo's report.
		regexp.MustCompile(`aws:///us-east-1[a-c]/i-`),
		// Step 3: the reader's CCM came up healthy.
		regexp.MustCompile(`(?m)^ok$`),
		// Step 5: the kept demo stopped.
		regexp.MustCompile(`demo: stopped`),
	} {
		if !want.MatchString(got) {
			t.Errorf("output lacks %q", want)
		}
	}
	// Step 4, cluster mode: a report (checks failing on the demo cluster
	// is what the page says to expect), never a usage or reachability error.
	if m := regexp.MustCompile(`preflight exit code: (\d+)`).FindStringSubmatch(got); m == nil || m[1] != "1" {
		t.Errorf("cluster preflight exit code %v; the page promises a report with failed checks (exit 1)", m)
	}
	// The page names the one check the demo cluster fails.
	if !strings.Contains(got, "preflight failed: 1 failed: aws-node-names\n") {
		t.Errorf("cluster preflight did not fail aws-node-names alone, as the page says")
	}
	junit, err := os.ReadFile(filepath.Join(root, "_output/tutorial/preflight.xml"))
	if err != nil || !bytes.Contains(junit, []byte("<testsuite")) {
		t.Errorf("step 4's JUnit report: %v\n%s", err, junit)
	}
	// The reader's CCM worked against the kept cluster: the demo's Node
	// that names no instance still carries the uninitialized taint, and
	// this CCM, not the demo's, tried to initialise it.
	if log := tail(filepath.Join(root, "_output/tutorial/ccm.log")); !strings.Contains(log, "Initializing node worker-1.corp.example.com") {
		t.Errorf("the tutorial CCM's log shows no attempt at the demo's uninitialized Node:\n%s", log)
	}
	// Stopped means stopped: the kept demo's PID file is gone.
	if _, err := os.Stat(filepath.Join(root, "_output/demo/demo.pid")); !os.IsNotExist(err) {
		t.Errorf("_output/demo/demo.pid after make demo-down: %v", err)
	}
}

// freshEnv drops the variables a developer's shell may carry that would
// point the tutorial elsewhere than the page says.
func freshEnv(env []string) []string {
	var kept []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if name == "KUBECONFIG" || strings.HasPrefix(name, "AWS_") || strings.HasPrefix(name, "AWSCCMCTL_") {
			continue
		}
		kept = append(kept, kv)
	}
	return kept
}

func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 8<<10 {
		b = b[len(b)-8<<10:]
	}
	return string(b)
}
