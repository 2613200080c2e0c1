package rbac

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// auditPolicy records, at Metadata level, what ServiceAccounts do: the
// CCM's requests and nothing of the test's own admin traffic.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  userGroups: ["system:serviceaccounts"]
- level: None
`

var env struct {
	cp      *testbed.ControlPlane
	aws     *awsemu.Emulator
	ccmPath string
}

func TestMain(m *testing.M) {
	os.Exit(testbed.MainOptions(m, testbed.Options{AuditPolicy: []byte(auditPolicy)}, setup))
}

func setup(cp *testbed.ControlPlane) error {
	env.cp = cp
	emu, err := awsemu.Serve(awsemu.DemoFixture())
	if err != nil {
		return fmt.Errorf("start AWS emulator: %w", err)
	}
	env.aws = emu
	// The real binary, as the DaemonSet runs it (without -race: this is the
	// product, not the test).
	env.ccmPath = filepath.Join(cp.Dir, "aws-cloud-controller-manager")
	build := exec.CommandContext(context.Background(), "go", "build", "-o", env.ccmPath, "./cmd/aws-cloud-controller-manager")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build the CCM: %w\n%s", err, out)
	}
	return nil
}
