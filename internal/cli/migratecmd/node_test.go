package migratecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/kubeletrun"
	"github.com/awsccmctl/awsccmctl/internal/migrate"
	"github.com/awsccmctl/awsccmctl/internal/procwatch"
	"github.com/awsccmctl/awsccmctl/internal/testbed/fakekubelet"
)

// TestNodeReportsTheRunningKubelet: the phases that change the kubelet's
// flags report what the running kubelet runs, found by the healthz port
// its files configure; here nothing listens there, and the report and the
// operator are told so instead of the phase passing for a restart. The
// control-plane phases do not look.
func TestNodeReportsTheRunningKubelet(t *testing.T) {
	ctx := context.Background()
	free, err := childproc.FreePort(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		phase, scope string
		looks        bool
	}{
		{"kubelet-external", "", true},
		{"restore", "kubelet", true},
		{"control-plane-external", "", false},
		{"restore", "control-plane", false},
	} {
		t.Run(tc.phase+"/"+tc.scope, func(t *testing.T) {
			root := kubeletRoot(t, free)
			var out, errOut bytes.Buffer
			err = runNode(ctx, nodeOptions{Root: root, Phase: tc.phase, Scope: tc.scope, NodeName: "n1"}, "", "json", Streams{Out: &out, Err: &errOut})
			if err != nil {
				t.Fatalf("runNode: %v\n%s", err, errOut.String())
			}
			var got nodeOutput
			if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Report == nil {
				t.Fatalf("output %q: %v", out.String(), err)
			}
			want := "no kubelet is running: nothing listens on port " + strconv.Itoa(free) + ", the healthz port the kubelet's files configure"
			switch {
			case tc.looks && (got.Report.Kubelet != nil || got.Report.KubeletError != want):
				t.Errorf("report kubelet %+v, error %q; want %q", got.Report.Kubelet, got.Report.KubeletError, want)
			case tc.looks && !strings.Contains(errOut.String(), "the running kubelet could not be read: "+want):
				t.Errorf("stderr does not tell the operator:\n%s", errOut.String())
			case !tc.looks && (got.Report.Kubelet != nil || got.Report.KubeletError != ""):
				t.Errorf("phase %s looked at the kubelet: %+v %q", tc.phase, got.Report.Kubelet, got.Report.KubeletError)
			}
		})
	}
}

// TestNodeRestartsTheKubelet: with --restart-kubelet, a kubelet-external run
// that changed the kubelet's flags restarts the unit its files name, then
// waits for a healthy kubelet and fails (exit 1) when none comes; a re-run
// that changes nothing, with no kubelet running, restarts nothing.
func TestNodeRestartsTheKubelet(t *testing.T) {
	ctx := context.Background()
	free, err := childproc.FreePort(ctx)
	if err != nil {
		t.Fatal(err)
	}
	root := kubeletRoot(t, free)
	// A systemctl that only logs: the restart "succeeds" and no kubelet
	// ever answers.
	bin := t.TempDir()
	log := filepath.Join(bin, "log")
	if err := os.WriteFile(filepath.Join(bin, "systemctl"), []byte("#!/bin/sh\necho \"$*\" >> "+log+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	o := nodeOptions{Root: root, Phase: "kubelet-external", NodeName: "n1", RestartKubelet: true, Wait: time.Second}
	var out, errOut bytes.Buffer
	err = runNode(ctx, o, "", "text", Streams{Out: &out, Err: &errOut})
	if code := exitcode.Of(err); code != exitcode.Failed || !strings.Contains(err.Error(), "did not come back healthy within 1s after systemctl restart kubelet.service") {
		t.Fatalf("runNode = %v (exit %d), want exit 1: the kubelet did not come back\n%s", err, code, errOut.String())
	}
	calls, err := os.ReadFile(log)
	if err != nil || string(calls) != "restart kubelet.service\n" {
		t.Errorf("systemctl calls %q (%v), want one restart of the unit the drop-in belongs to", calls, err)
	}
	if !strings.Contains(errOut.String(), "the kubelet was restarted but not seen healthy") {
		t.Errorf("stderr does not say the restart failed:\n%s", errOut.String())
	}
	// Nothing changes now and no kubelet runs to be stale: no restart.
	errOut.Reset()
	if err := runNode(ctx, o, "", "text", Streams{Out: &out, Err: &errOut}); err != nil {
		t.Fatalf("re-run: %v\n%s", err, errOut.String())
	}
	if calls, _ := os.ReadFile(log); string(calls) != "restart kubelet.service\n" {
		t.Errorf("the re-run called systemctl again: %q", calls)
	}
}

// TestNodeReportsWhatTheKubeletRuns: against a running (fake) kubelet on the
// healthz port the files configure, the report carries its pid and the
// --cloud-provider it runs; without --restart-kubelet the operator is told
// to restart one that runs another provider than its files now say, and
// not one that already runs it.
func TestNodeReportsWhatTheKubeletRuns(t *testing.T) {
	ctx := context.Background()
	for _, running := range []string{"aws", "external"} {
		t.Run(running, func(t *testing.T) {
			cmd, port := fakekubelet.Start(t, "kubelet", "ok", "--cloud-provider="+running)
			root := kubeletRoot(t, port)
			var out, errOut bytes.Buffer
			if err := runNode(ctx, nodeOptions{Root: root, Phase: "kubelet-external", NodeName: "n1"}, "", "json", Streams{Out: &out, Err: &errOut}); err != nil {
				t.Fatalf("runNode: %v\n%s", err, errOut.String())
			}
			var got nodeOutput
			if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Report == nil || got.Report.Kubelet == nil {
				t.Fatalf("output %q: %v", out.String(), err)
			}
			k := got.Report.Kubelet
			if k.PID != cmd.Process.Pid || k.CloudProvider != running || !k.Healthy() || got.Report.KubeletRestarted {
				t.Errorf("report kubelet %+v (restarted %v), want pid %d running %s, healthy, not restarted", *k, got.Report.KubeletRestarted, cmd.Process.Pid, running)
			}
			hint := "its files say --cloud-provider=external, and the kubelet reads them only when it restarts"
			if says := strings.Contains(errOut.String(), hint); says != (running != "external") {
				t.Errorf("restart hint shown %v for a kubelet running %s:\n%s", says, running, errOut.String())
			}
		})
	}
}

// kubeletRoot is a copy of a kubeadm 1.26 worker's files on the in-tree
// provider whose kubelet serves healthz on port.
func kubeletRoot(t *testing.T, port int) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("..", "..", "nodefiles", "testdata", "kubeadm-1.26-intree"))); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(root, "var", "lib", "kubelet", "config.yaml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, bytes.Replace(data, []byte("healthzPort: 10248"), []byte("healthzPort: "+strconv.Itoa(port)), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestNodeRestartLaterSwitchesTheKubelet: as an operator runs it. The
// kubelet runs from its flag files under a systemctl that reads them at
// each start. The phase run with --restart-kubelet=false edits the files
// and leaves the in-tree kubelet running; a later run (nothing left to
// edit) finds it stale, restarts it, and reports the new process, which
// runs --cloud-provider=external.
func TestNodeRestartLaterSwitchesTheKubelet(t *testing.T) {
	ctx := context.Background()
	port, err := childproc.FreePort(ctx)
	if err != nil {
		t.Fatal(err)
	}
	root := kubeletRoot(t, port)
	systemctl, log := fakekubelet.Systemctl(t, port, "ok", filepath.Join(root, "var", "lib", "kubelet", "kubeadm-flags.env"))
	bin := filepath.Dir(systemctl)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if b, err := exec.CommandContext(ctx, systemctl, "start").CombinedOutput(); err != nil {
		t.Fatalf("systemctl start: %v %s", err, b)
	}
	fs, err := procwatch.New("")
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := kubeletrun.Observe(ctx, fs, kubeletrun.Endpoint{Address: "127.0.0.1", Port: port}); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the kubelet systemctl started never answered: %v", err)
		}
	}
	var out, errOut bytes.Buffer
	o := nodeOptions{Root: root, Phase: "kubelet-external", NodeName: "n1", HostnameOverride: "n1", Wait: 10 * time.Second}
	report := func() *migrate.NodeReport {
		t.Helper()
		out.Reset()
		errOut.Reset()
		if err := runNode(ctx, o, "", "json", Streams{Out: &out, Err: &errOut}); err != nil {
			t.Fatalf("runNode: %v\n%s", err, errOut.String())
		}
		var got nodeOutput
		if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Report == nil || got.Report.Kubelet == nil {
			t.Fatalf("output %q: %v\n%s", out.String(), err, errOut.String())
		}
		return got.Report
	}
	first := report()
	if first.Kubelet.CloudProvider != "aws" || first.KubeletRestarted || len(first.Changed) == 0 {
		t.Fatalf("first run: %+v, want the files changed and the in-tree kubelet left running", *first)
	}
	// The evidence apply's gate judges: the files say external and were
	// edited after the running kubelet started.
	if first.KubeletFilesCloudProvider != "external" || first.KubeletFilesModified == nil || !first.Kubelet.Started.Before(first.KubeletFilesModified.Time) {
		t.Errorf("first run: files say %q, modified %v, kubelet started %v; want external, modified after the in-tree kubelet started",
			first.KubeletFilesCloudProvider, first.KubeletFilesModified, first.Kubelet.Started)
	}
	o.RestartKubelet = true
	second := report()
	if !second.KubeletRestarted || second.Kubelet.CloudProvider != "external" || second.Kubelet.PID == first.Kubelet.PID ||
		!second.Kubelet.Healthy() || len(second.Changed) != 0 {
		t.Errorf("second run: %+v (kubelet %+v), want nothing changed and a new healthy external kubelet", *second, *second.Kubelet)
	}
	if second.KubeletFilesModified == nil || second.Kubelet.StartedBefore(second.KubeletFilesModified.Time) ||
		second.KubeletNodeName != "n1" || second.Kubelet.HostnameOverride != "n1" {
		t.Errorf("second run: kubelet started %v, files modified %v, registers as %q (--hostname-override %q); want started after the edit, as n1",
			second.Kubelet.Started, second.KubeletFilesModified, second.KubeletNodeName, second.Kubelet.HostnameOverride)
	}
	if calls, _ := os.ReadFile(log); string(calls) != "start\nrestart kubelet.service\n" {
		t.Errorf("systemctl calls %q, want the start, then one restart", calls)
	}
}
