package preflightcmd_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/cli/root"
)

// TestConfigFileStrict: preflight's --config file (keys are the long flag
// names, read by the root command) is decoded strictly: an unknown or
// misspelt key, or a value no flag takes, is a usage error naming it,
// rather than silently doing nothing. A valid file is honoured, and
// --root given only by the file still needs --node.
func TestConfigFileStrict(t *testing.T) {
	fixture, err := filepath.Abs("../../nodefiles/testdata/kops-node")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, yaml string
		code       int
		stderr     []string
	}{
		{"valid-flags", "node: true\nroot: " + fixture + "\naws: false\nignore-checks: [kubelet-skew]\n", exitcode.OK, nil},
		{"invalid-misspelt-key", "node: true\nroot: " + fixture + "\naws: false\nignore-check: all\n", exitcode.Usage, []string{`unknown key "ignore-check"`}},
		{"invalid-two-problems", "node: true\nRegion: us-east-1\nroot:\n  path: /\n", exitcode.Usage, []string{`unknown key "Region"`, "root: want a value"}},
		{"invalid-nested-list", "node: true\nignore-checks: [[kubelet-skew], {id: x}]\n", exitcode.Usage, []string{"ignore-checks: want a value"}},
		{"invalid-root-without-node", "root: " + fixture + "\naws: false\n", exitcode.Usage, []string{"needs --node"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "awsccmctl.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			err := root.Execute(context.Background(), root.Streams{Out: &out, Err: &errOut}, []string{"preflight", "--config", path})
			if code := exitcode.Of(err); code != tc.code {
				t.Fatalf("exit code %d (%v), want %d\n%s", code, err, tc.code, out.String())
			}
			for _, want := range tc.stderr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v, want it to say %q", err, want)
				}
			}
			if tc.code == exitcode.OK && !strings.Contains(out.String(), "all checks passed") {
				t.Errorf("the file's settings were not used:\n%s", out.String())
			}
		})
	}
}
