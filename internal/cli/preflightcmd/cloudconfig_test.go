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

// TestCloudConfigEveryProblem: preflight --cloud-config lists every problem
// of the file (exit 2), also those after a value that does not parse.
func TestCloudConfigEveryProblem(t *testing.T) {
	cc := filepath.Join(t.TempDir(), "cloud.conf")
	if err := os.WriteFile(cc, []byte("[Global]\nDisableSecurityGroupIngress = maybe\nRegoin = us-east-1\nVPC = 0123456789abcdef0\n[Kubernetes]\nx = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	err := root.Execute(context.Background(), root.Streams{Out: &out, Err: &errOut}, []string{"preflight", "--node", "--root", filepath.Join("..", "..", "nodefiles", "testdata", "kubeadm-external"),
		"--cloud-config", cc, "--region", "us-east-1"})
	if code := exitcode.Of(err); code != exitcode.Usage {
		t.Fatalf("exit %d (%v), want %d", code, err, exitcode.Usage)
	}
	for _, want := range []string{"4 problems", "DisableSecurityGroupIngress: invalid value", `unknown key "Regoin"`,
		"unknown section [Kubernetes]", `VPC "0123456789abcdef0" is not a vpc ID`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
