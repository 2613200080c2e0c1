package preflightcmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

func emulatorEnv(t *testing.T) *awsemu.Server {
	t.Helper()
	e := awsemu.StartT(t, awsemu.DemoFixture())
	e.IMDSEnv().Set(t)
	return e.Server
}

// TestNodeModeWithAWS runs node mode plus the AWS checks against the
// emulator: the region and this node's instance come from IMDS, as on EC2.
func TestNodeModeWithAWS(t *testing.T) {
	srv := emulatorEnv(t)
	cc := filepath.Join(t.TempDir(), "cloud.conf")
	if err := os.WriteFile(cc, []byte("[Global]\nKubernetesClusterID = demo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := Run(t.Context(), Options{Mode: "pre-install", Node: true, Root: filepath.Join(fixtures, "kops-node"), FailOn: "error",
		AWS: true, CloudConfig: cc, HostNetwork: true}, preflight.FormatJSON, Streams{Out: &out, Err: &bytes.Buffer{}})
	var r preflight.Report
	if jerr := json.Unmarshal(out.Bytes(), &r); jerr != nil {
		t.Fatalf("decode report: %v (run error %v)", jerr, err)
	}
	got := map[string]preflight.Status{}
	for _, f := range r.Findings {
		got[f.ID] = f.Status
	}
	for _, id := range []string{"aws-identity", "aws-cluster-id", "aws-iam-permissions"} {
		if got[id] != preflight.StatusPass {
			t.Errorf("%s = %s, want pass (findings %v)", id, got[id], got)
		}
	}
	if srv.Calls("imds", "") == 0 || srv.Calls("sts", "GetCallerIdentity") != 1 || srv.Calls("iam", "SimulatePrincipalPolicy") != 1 {
		t.Fatalf("calls = %v", srv.CallCounts())
	}
	if code := exitcode.Of(err); code != exitcode.OK && code != exitcode.Failed {
		t.Fatalf("exit code %d: %v", code, err)
	}
}

func TestAWSRegionUnknownIsUnreachable(t *testing.T) {
	srv := emulatorEnv(t)
	srv.SetIMDSAvailable(false)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	err := Run(t.Context(), Options{Mode: "pre-install", Node: true, Root: filepath.Join(fixtures, "kops-node"), FailOn: "error", AWS: true},
		preflight.FormatText, Streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
	if code := exitcode.Of(err); code != exitcode.Unreachable {
		t.Fatalf("exit code %d (%v), want %d", code, err, exitcode.Unreachable)
	}
}
