package installcmd_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/internal/testbed/pty"
)

// terminalColumns is the pseudo-terminal's width: narrower than the status
// line with the rollout's first state, which must be cut to it, and wide
// enough for the second.
const terminalColumns = 100

// buildCLI builds the awsccmctl binary, as a user runs it.
func buildCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "awsccmctl")
	build := exec.CommandContext(context.Background(), "go", "build", "-o", bin, "./cmd/awsccmctl")
	build.Dir = filepath.Join("..", "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build awsccmctl: %v\n%s", err, out)
	}
	return bin
}

// playRollout plays the DaemonSet controller the test bed lacks, halfway:
// once the DaemonSet exists and the wait has shown its first state for a
// while, it reports one of two Pods updated, none available, and the
// rollout goes no further, so the wait's state changes once and then
// times out.
func playRollout(t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	var ds *appsv1.DaemonSet
	for {
		list, err := cs.AppsV1().DaemonSets(ns).List(ctx, metav1.ListOptions{})
		if err == nil && len(list.Items) == 1 {
			ds = &list.Items[0]
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("no DaemonSet in %s after a minute", ns)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2500 * time.Millisecond)
	ds.Status = appsv1.DaemonSetStatus{ObservedGeneration: ds.Generation, DesiredNumberScheduled: 2, CurrentNumberScheduled: 2, UpdatedNumberScheduled: 1}
	if _, err := cs.AppsV1().DaemonSets(ns).UpdateStatus(ctx, ds, metav1.UpdateOptions{}); err != nil {
		t.Errorf("write the DaemonSet's status: %v", err)
	}
}

// applyWait runs the built binary's `install apply --wait` into a fresh
// namespace while playRollout moves the rollout halfway, and returns what
// start gave it to write to; the install is removed at the end of t (one
// install at a time: a second namespace is refused).
func applyWait(t *testing.T, bin string, extra []string, start func(*exec.Cmd) (wait func() (int, string))) (exit int, screen, ns string) {
	t.Helper()
	cp := testbed.Get(t)
	kubeconfig, ns := cluster(t)
	cs := kubernetes.NewForConfigOrDie(cp.Config)
	flags := []string{"--kubeconfig", kubeconfig, "--namespace", ns}
	uninstallAtEnd(t, flags)
	cmd := exec.CommandContext(context.Background(), bin, slices.Concat([]string{"install", "apply", "--no-detect", "--wait", "--timeout=6s"}, flags, extra)...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	wait := start(cmd)
	playRollout(t, cs, ns)
	exit, screen = wait()
	return exit, screen, ns
}

// exitOf is a finished command's exit code.
func exitOf(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("run awsccmctl: %v", err)
	return -1
}

// TestApplyWaitOnATerminal runs the real binary under a pseudo-terminal:
// the rollout's wait is one line that updates in place (erased and redrawn,
// its elapsed time advancing, its state changing) cut to the terminal's
// width, not a line per poll, and it ends frozen with its result. The same
// command with its output to pipes, or with -o json on the terminal, prints
// the plain events, a line per change, without a control sequence.
func TestApplyWaitOnATerminal(t *testing.T) {
	testbed.Get(t)
	bin := buildCLI(t)
	t.Run("terminal", func(t *testing.T) { terminalRun(t, bin) })
	t.Run("pipe", func(t *testing.T) { pipeRun(t, bin) })
	t.Run("terminal with -o json", func(t *testing.T) { jsonOnTerminalRun(t, bin) })
}

// onTerminal starts cmd on a pseudo-terminal and returns the wait for
// its exit code and everything its screen received.
func onTerminal(t *testing.T) func(cmd *exec.Cmd) func() (int, string) {
	return func(cmd *exec.Cmd) func() (int, string) {
		ptmx, err := pty.Start(cmd, terminalColumns, 24)
		if err != nil {
			t.Skipf("no pseudo-terminal: %v", err)
		}
		var buf bytes.Buffer
		copied := make(chan struct{})
		go func() {
			// Until EIO: the binary exited and closed the terminal.
			_, _ = io.Copy(&buf, ptmx)
			close(copied)
		}()
		return func() (int, string) {
			err := cmd.Wait()
			<-copied
			_ = ptmx.Close()
			return exitOf(t, err), buf.String()
		}
	}
}

func terminalRun(t *testing.T, bin string) {
	exit, screen, ns := applyWait(t, bin, nil, onTerminal(t))
	if exit != 1 {
		t.Fatalf("exit %d, want 1 (the rollout never finishes)\n%q", exit, screen)
	}
	ds := "DaemonSet/" + ns + "/" + install.AppName
	// The terminal turns each "\n" into "\r\n"; the status line is
	// redrawn after "\r\x1b[K" (erase the line) and never ends a line.
	start := strings.Index(screen, "\r\x1b[K"+ds)
	end := strings.Index(screen, "\r\x1b[K✗ "+ds)
	if start < 0 || end < start {
		t.Fatalf("no status line for %s ending in ✗ on the screen:\n%q", ds, screen)
	}
	live := screen[start:end]
	if strings.Contains(live, "\n") {
		t.Errorf("the wait wrote lines, not one line updated in place:\n%q", live)
	}
	frames := strings.Split(live, "\r\x1b[K")[1:]
	seconds := map[string]bool{}
	elapsed := regexp.MustCompile(`^DaemonSet/[^ ]+ \((\d+)s\)`)
	for _, f := range frames {
		if n := utf8.RuneCountInString(f); n > terminalColumns-1 {
			t.Errorf("frame %q is %d columns wide, on a terminal of %d", f, n, terminalColumns)
		}
		if m := elapsed.FindStringSubmatch(f); m != nil {
			seconds[m[1]] = true
		} else if f != "" {
			t.Errorf("frame %q is not the status line", f)
		}
	}
	if len(seconds) < 4 {
		t.Errorf("the elapsed time showed %v over a 6 s wait, want it to advance every second:\n%q", slices.Sorted(maps.Keys(seconds)), live)
	}
	if len(frames) > 40 {
		t.Errorf("%d redraws in 6 s: more than a few a second", len(frames))
	}
	// Cut to 99 columns, the first state shows in part.
	if !regexp.MustCompile(`\): waiting for the DaemonSet controller[^\r]*…\r`).MatchString(live) || !strings.Contains(live, "): 1 of 2 Pods updated, 0 available") {
		t.Errorf("the state did not change in place:\n%q", live)
	}
	result := screen[end+len("\r\x1b[K"):]
	if !regexp.MustCompile(`^✗ DaemonSet/\S+ \(6(\.\d)?s\): not ready after 6s: 1 of 2 Pods updated, 0 available\r\n`).MatchString(result) {
		t.Errorf("the line did not end frozen with the result:\n%q", result)
	}
}

func pipeRun(t *testing.T, bin string) {
	exit, plain, ns := applyWait(t, bin, nil, func(cmd *exec.Cmd) func() (int, string) {
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return func() (int, string) { return exitOf(t, cmd.Wait()), stderr.String() }
	})
	ds := "DaemonSet/" + ns + "/" + install.AppName
	want := ds + ": waiting for the DaemonSet controller to see generation 1\n" + ds + ": 1 of 2 Pods updated, 0 available\n"
	if exit != 1 || !strings.Contains(plain, want) || strings.Contains(plain, "\x1b") || strings.Contains(plain, "\r") {
		t.Errorf("through a pipe: exit %d, want 1 and the plain events\n%s\nin\n%q", exit, want, plain)
	}
}

// jsonOnTerminalRun: with -o json the output is for a program even on a
// terminal: the plain events on stderr, the document on stdout.
func jsonOnTerminalRun(t *testing.T, bin string) {
	exit, screen, ns := applyWait(t, bin, []string{"-o", "json"}, onTerminal(t))
	ds := "DaemonSet/" + ns + "/" + install.AppName
	want := ds + ": waiting for the DaemonSet controller to see generation 1\r\n" + ds + ": 1 of 2 Pods updated, 0 available\r\n"
	if exit != 1 || !strings.Contains(screen, want) || strings.Contains(screen, "\x1b") || !strings.Contains(screen, `"objects"`) {
		t.Errorf("-o json on a terminal: exit %d, want 1, the plain events\n%q\nand the document in\n%q", exit, want, screen)
	}
}
