package installcmd_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/sizing"
)

// TestExpectedNodes: --expected-nodes (or AWSCCMCTL_EXPECTED_NODES) sizes
// the rendered flags, the default size applies without it, and an
// --extra-args value of a sizing flag wins over the computed one.
func TestExpectedNodes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		env   string
		nodes int
		user  map[string]string
	}{
		{name: "default", nodes: install.DefaultExpectedNodes},
		{name: "flag", args: []string{"--expected-nodes", "5000"}, nodes: 5000},
		{name: "environment", env: "100", nodes: 100},
		{name: "flag beats environment", args: []string{"--expected-nodes=20"}, env: "100", nodes: 20},
		{name: "extra args win", args: []string{"--expected-nodes", "5000", "--extra-args", "kube-api-qps=77,concurrent-node-syncs=9"}, nodes: 5000,
			user: map[string]string{"kube-api-qps": "77", "concurrent-node-syncs": "9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("AWSCCMCTL_EXPECTED_NODES", tc.env)
			}
			out, _, err := run(t, append([]string{"install", "manifests"}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			_, spec, _ := workload(t, out)
			for name, want := range sizing.ForNodes(tc.nodes).Values() {
				if u, ok := tc.user[name]; ok {
					want = u
				}
				if got := arg(spec, name); got != want {
					t.Errorf("--%s=%s, want %s", name, got, want)
				}
			}
			if want := install.AnnotationSizedForNodes + `: "` + strconv.Itoa(tc.nodes) + `"`; !strings.Contains(out, want) {
				t.Errorf("the output does not say %s", want)
			}
		})
	}
}

// TestExpectedNodesUsageErrors: a size that is not a positive number exits
// 2 naming the flag (or the variable), and renders nothing.
func TestExpectedNodesUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  string
		want []string
	}{
		{"zero", []string{"--expected-nodes", "0"}, "", []string{"expectedNodes (--expected-nodes) 0: must be at least 1"}},
		{"negative", []string{"--expected-nodes=-5"}, "", []string{"expectedNodes (--expected-nodes) -5: must be at least 1"}},
		{"not a number", []string{"--expected-nodes", "lots"}, "", []string{`invalid argument "lots" for "--expected-nodes"`}},
		{"environment not a number", nil, "1e3", []string{"expected-nodes", `"1e3"`}},
		{"config zero", []string{"--config", filepath.Join("..", "..", "install", "testdata", "config", "invalid-expected-nodes-zero.yaml")}, "",
			[]string{"expectedNodes (--expected-nodes) 0: must be at least 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("AWSCCMCTL_EXPECTED_NODES", tc.env)
			}
			out, _, err := run(t, append([]string{"install", "manifests"}, tc.args...)...)
			if code := exitcode.Of(err); code != exitcode.Usage {
				t.Fatalf("exit code %d (%v), want %d", code, err, exitcode.Usage)
			}
			if out != "" {
				t.Errorf("wrote manifests despite the error:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestApplyCountsNodes: install apply counts the cluster's Nodes (at least
// the default size) unless --expected-nodes is given, and says so.
func TestApplyCountsNodes(t *testing.T) {
	kubeconfig, ns := cluster(t)
	flags := []string{"install", "apply", "--kubeconfig", kubeconfig, "--namespace", ns, "--dry-run=client", "--diff",
		"--cloud-config", filepath.Join("testdata", "valid-cloud.conf")}

	out, log, err := run(t, flags...)
	if code := exitcode.Of(err); code != exitcode.Failed {
		t.Fatalf("exit %d (%v), want 1 (differences)\n%s", code, err, log)
	}
	if want := "expected Nodes " + strconv.Itoa(install.DefaultExpectedNodes) + ": "; !strings.Contains(log, want) || !strings.Contains(log, "Nodes counted") {
		t.Errorf("stderr does not report the count (%q):\n%s", want, log)
	}
	if want := "--kube-api-qps=" + strconv.Itoa(sizing.ForNodes(install.DefaultExpectedNodes).KubeAPIQPS); !strings.Contains(out, want) {
		t.Errorf("the diff lacks %s:\n%s", want, out)
	}

	out, log, err = run(t, append(flags, "--expected-nodes", "5000")...)
	if code := exitcode.Of(err); code != exitcode.Failed {
		t.Fatalf("exit %d (%v), want 1 (differences)\n%s", code, err, log)
	}
	if !strings.Contains(log, "expected Nodes 5000: as given") || strings.Contains(log, "Nodes counted") {
		t.Errorf("stderr:\n%s", log)
	}
	if !strings.Contains(out, "--kube-api-qps=1000") || !strings.Contains(out, install.AnnotationSizedForNodes+`: "5000"`) {
		t.Errorf("the diff is not sized for 5000:\n%s", out)
	}
}

// TestSizingDocCommandsExist: the awsccmctl command lines of
// docs/install-sizing.md name real subcommands and flags.
func TestSizingDocCommandsExist(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "install-sizing.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := docCommands(string(data))
	if len(lines) == 0 {
		t.Fatal("no awsccmctl command found in docs/install-sizing.md")
	}
	for _, line := range lines {
		checkCommand(t, line)
	}
}
