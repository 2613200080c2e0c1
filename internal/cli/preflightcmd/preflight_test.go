package preflightcmd

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

var update = flag.Bool("update", false, "rewrite golden files")

const fixtures = "../../nodefiles/testdata"

// TestNodeModeGolden runs the command on the node fixtures and compares the
// human and JSON output with golden files, and checks the exit code.
func TestNodeModeGolden(t *testing.T) {
	cases := []struct {
		fixture, mode, format string
		wantCode              int
	}{
		{"kubeadm-1.26-intree", "pre-install", preflight.FormatText, exitcode.Failed},
		{"kubeadm-1.26-intree", "pre-migrate", preflight.FormatText, exitcode.OK},
		{"kubeadm-external", "post-install", preflight.FormatJSON, exitcode.OK},
		{"kops-node", "pre-install", preflight.FormatText, exitcode.OK},
		{"broken", "pre-install", preflight.FormatJUnit, exitcode.Failed},
	}
	for _, tc := range cases {
		name := tc.fixture + "-" + tc.mode + "." + tc.format
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			err := Run(t.Context(), Options{Mode: tc.mode, Node: true, Root: filepath.Join(fixtures, tc.fixture), FailOn: "error", AWS: false},
				tc.format, Streams{Out: &out, Err: &bytes.Buffer{}})
			if code := exitcode.Of(err); code != tc.wantCode {
				t.Fatalf("exit code %d (%v), want %d", code, err, tc.wantCode)
			}
			if tc.format == preflight.FormatJSON {
				var r preflight.Report
				if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.SchemaVersion != preflight.SchemaVersion {
					t.Fatalf("JSON output does not decode as a %s report: %v", preflight.SchemaVersion, err)
				}
			}
			path := filepath.Join("testdata", name)
			if *update {
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if out.String() != string(want) {
				t.Fatalf("output differs from %s (go test -update to accept):\n%s", path, out.String())
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	cases := map[string]Options{
		"bad mode":          {Mode: "during-lunch", Node: true, Root: fixtures, FailOn: "error"},
		"bad fail-on":       {Mode: "pre-install", Node: true, Root: fixtures, FailOn: "sometimes"},
		"bad cloud-routes":  {Mode: "pre-install", Node: true, Root: fixtures, FailOn: "error", CloudRoutes: "sometimes"},
		"unknown ignore":    {Mode: "pre-install", Node: true, Root: filepath.Join(fixtures, "kops-node"), FailOn: "error", Ignore: []string{"no-such-check"}},
		"root without node": {Mode: "pre-install", Root: filepath.Join(fixtures, "kops-node"), FailOn: "error"},
	}
	for name, o := range cases {
		t.Run(name, func(t *testing.T) {
			err := Run(t.Context(), o, preflight.FormatText, Streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
			if code := exitcode.Of(err); code != exitcode.Usage {
				t.Fatalf("exit code %d (%v), want %d", code, err, exitcode.Usage)
			}
		})
	}
}

func TestIgnoreAndFailOn(t *testing.T) {
	root := filepath.Join(fixtures, "kubeadm-1.26-intree")
	run := func(o Options) int {
		o.Node, o.Root, o.Mode = true, root, "pre-install"
		return exitcode.Of(Run(t.Context(), o, preflight.FormatText, Streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}))
	}
	if code := run(Options{FailOn: "error", Ignore: []string{"all"}}); code != exitcode.OK {
		t.Fatalf("--ignore-checks=all: exit %d", code)
	}
	if code := run(Options{FailOn: "warning", Ignore: []string{"all"}}); code != exitcode.Failed {
		t.Fatalf("--ignore-checks=all --fail-on=warning: exit %d, want %d", code, exitcode.Failed)
	}
}

func TestClusterUnreachableExitsThree(t *testing.T) {
	kube := genericclioptions.NewConfigFlags(false)
	server, kubeconfig := "https://127.0.0.1:1", os.DevNull
	kube.APIServer, kube.KubeConfig = &server, &kubeconfig
	var out bytes.Buffer
	err := Run(t.Context(), Options{Mode: "pre-install", FailOn: "error", Kube: kube, AWS: false}, preflight.FormatJSON, Streams{Out: &out, Err: &bytes.Buffer{}})
	if code := exitcode.Of(err); code != exitcode.Unreachable || !strings.Contains(err.Error(), "cannot reach the cluster") {
		t.Fatalf("exit code %d (%v), want %d naming the cluster", code, err, exitcode.Unreachable)
	}
	// The JSON report marks the failure unreachable, as for AWS.
	var r preflight.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) == 0 || r.Findings[0].ID != "cluster-reachable" || !r.Findings[0].Unreachable {
		t.Fatalf("first finding %+v, want cluster-reachable marked unreachable", r.Findings)
	}
}

// TestNodeModeNoNodeFiles: node mode on a directory without node files (not
// a node, or a wrong --root) fails naming the root, instead of reporting
// "all checks passed" on nothing.
func TestNodeModeNoNodeFiles(t *testing.T) {
	root := t.TempDir()
	var out bytes.Buffer
	err := Run(t.Context(), Options{Mode: "pre-install", Node: true, Root: root, FailOn: "error"}, preflight.FormatText, Streams{Out: &out, Err: &bytes.Buffer{}})
	if code := exitcode.Of(err); code != exitcode.Failed {
		t.Fatalf("exit code %d (%v), want %d", code, err, exitcode.Failed)
	}
	if text := out.String(); !strings.Contains(text, "no kubelet or control-plane files found under "+root) || strings.Contains(text, "all checks passed") {
		t.Fatalf("output:\n%s", text)
	}
}

// TestFailureSummaryNamesOnlyFailures: the final line names the failed
// checks and no warned one; with --fail-on=warning the warnings are named
// apart, as warnings. The expected IDs are the fixture's: an in-tree
// kubeadm 1.26 control plane fails its cloud-provider flags and warns on
// node identity and the ECR credential provider.
func TestFailureSummaryNamesOnlyFailures(t *testing.T) {
	const failed = "preflight failed: 5 failed: control-plane-apiserver-cloud-provider, control-plane-apiserver-cloud-config, " +
		"control-plane-apiserver-admission, control-plane-kcm-cloud-provider, kubelet-cloud-provider"
	cases := map[string]string{
		"error":   failed,
		"warning": failed + "; 2 warned (--fail-on=warning): kubelet-node-identity, kubelet-ecr-credential-provider",
	}
	for failOn, want := range cases {
		t.Run(failOn, func(t *testing.T) {
			err := Run(t.Context(), Options{Mode: "pre-install", Node: true, Root: filepath.Join(fixtures, "kubeadm-1.26-intree"), FailOn: failOn},
				preflight.FormatText, Streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
			if exitcode.Of(err) != exitcode.Failed {
				t.Fatalf("exit code %d (%v), want %d", exitcode.Of(err), err, exitcode.Failed)
			}
			if err.Error() != want {
				t.Fatalf("summary\n%s\nwant\n%s", err, want)
			}
		})
	}
}
