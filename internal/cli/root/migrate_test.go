package root

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
)

// copyTree copies a testdata node layout into a temporary root.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestMigrateUsageErrors(t *testing.T) {
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(plan, []byte("apiVersion: awsccmctl.io/v1alpha1\nkind: MigrationPlan\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"apply without a plan", []string{"migrate-from-intree", "apply", "--approve"}, "--plan is required"},
		{"apply with a missing plan", []string{"migrate-from-intree", "apply", "--plan", "/nonexistent.yaml", "--approve"}, "no such file"},
		{"apply with an invalid plan", []string{"migrate-from-intree", "apply", "--plan", plan, "--approve"}, "metadata.name: required"},
		{"node with an unknown phase", []string{"migrate-from-intree", "node", "--phase", "bogus"}, `phase "bogus"`},
		{"node with a scope outside restore", []string{"migrate-from-intree", "node", "--phase", "kubelet-external", "--scope", "kubelet"}, "--scope goes with --phase restore"},
		{"status with an unknown output", []string{"migrate-from-intree", "status", "-o", "yaml"}, "--output"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, tc.args...)
			if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v (exit %d), want exit 2 and %q", err, exitcode.Of(err), tc.want)
			}
		})
	}
}

// The node step on a kubeadm worker: a dry run writes nothing and says
// what it would change, as JSON for scripts; the real run changes the
// kubelet's flags and a second run changes nothing.
func TestMigrateNodeKubeletExternal(t *testing.T) {
	root := copyTree(t, filepath.Join("..", "..", "migrate", "nodephase", "testdata", "kubeadm-node"))
	flags := filepath.Join(root, "var", "lib", "kubelet", "kubeadm-flags.env")
	before, err := os.ReadFile(flags)
	if err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "migrate-from-intree", "node", "--root", root, "--phase", "kubelet-external", "--dry-run", "-o", "json")
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	var res struct {
		Result struct {
			DryRun  bool `json:"dryRun"`
			Changed bool `json:"changed"`
			Files   []struct {
				Path, Action, Diff string
			} `json:"files"`
		} `json:"result"`
		Report *json.RawMessage `json:"report"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	if !res.Result.DryRun || !res.Result.Changed || res.Report != nil {
		t.Errorf("dry run result: %s", out)
	}
	if after, _ := os.ReadFile(flags); string(after) != string(before) {
		t.Error("the dry run wrote the kubelet's flags")
	}
	// The fixture's kubelet is not this host's: nothing to restart.
	if _, err := run(t, "migrate-from-intree", "node", "--root", root, "--phase", "kubelet-external", "--node-name", "w-1", "--restart-kubelet=false"); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(flags)
	if !strings.Contains(string(after), "--cloud-provider=external") || strings.Contains(string(after), "--cloud-provider=aws") {
		t.Errorf("kubelet flags after the phase:\n%s", after)
	}
	out, err = run(t, "migrate-from-intree", "node", "--root", root, "--phase", "kubelet-external", "--node-name", "w-1", "--restart-kubelet=false", "-o", "json")
	if err != nil || !strings.Contains(out, `"changed": false`) {
		t.Errorf("second run: %v\n%s", err, out)
	}
	if _, err := run(t, "migrate-from-intree", "node", "--root", root, "--phase", "restore", "--restart-kubelet=false"); err != nil {
		t.Fatal(err)
	}
	if restored, _ := os.ReadFile(flags); string(restored) != string(before) {
		t.Errorf("restore did not put the file back byte for byte:\n%s", restored)
	}
}
