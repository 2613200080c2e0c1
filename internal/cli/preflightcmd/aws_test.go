package preflightcmd

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// TestAWSRegionUnknownIsUnreachable: a region preflight cannot learn is
// exit code 3, as an AWS it cannot reach.
func TestAWSRegionUnknownIsUnreachable(t *testing.T) {
	e := awsemu.StartT(t, awsemu.DemoFixture())
	e.IMDSEnv().Set(t)
	e.SetIMDSAvailable(false)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	err := Run(t.Context(), Options{Mode: "pre-install", Node: true, Root: filepath.Join(fixtures, "kops-node"), FailOn: "error", AWS: true},
		preflight.FormatText, Streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
	if code := exitcode.Of(err); code != exitcode.Unreachable {
		t.Fatalf("exit code %d (%v), want %d", code, err, exitcode.Unreachable)
	}
}
