package gather

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/awschecks"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// emulatorEnv serves the demo fixture and points the SDK, IMDS included,
// at it through the environment, as on EC2.
func emulatorEnv(t *testing.T) *awsemu.Server {
	t.Helper()
	e := awsemu.StartT(t, awsemu.DemoFixture())
	e.IMDSEnv().Set(t)
	return e.Server
}

// TestCollectNodeModeWithAWS runs node mode plus the AWS checks against the
// emulator: the region and this node's instance come from IMDS, as on EC2.
func TestCollectNodeModeWithAWS(t *testing.T) {
	srv := emulatorEnv(t)
	cc := filepath.Join(t.TempDir(), "cloud.conf")
	if err := os.WriteFile(cc, []byte("[Global]\nKubernetesClusterID = demo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Collect(t.Context(), Options{Mode: preflight.ModePreInstall, Node: true, Root: filepath.Join(fixtures, "kops-node"),
		AWS: true, CloudConfig: cc, HostNetwork: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]preflight.Status{}
	for _, f := range r.Findings {
		got[f.ID] = f.Status
	}
	for _, id := range []string{awschecks.IDIdentity, awschecks.IDClusterID, awschecks.IDIAMPermissions} {
		if got[id] != preflight.StatusPass {
			t.Errorf("%s = %s, want pass (findings %v)", id, got[id], got)
		}
	}
	if srv.Calls("imds", "") == 0 || srv.Calls("sts", "GetCallerIdentity") != 1 || srv.Calls("iam", "SimulatePrincipalPolicy") != 1 {
		t.Fatalf("calls = %v", srv.CallCounts())
	}
}
