package preflightcmd

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/awschecks"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// TestAWSRegionUnknownStillReports: a region preflight cannot learn (no
// --region, no cloud config, IMDS silent) does not stop the run: the node
// checks report, the AWS checks are skipped, and the exit code follows the
// results (kops-node passes its node checks).
func TestAWSRegionUnknownStillReports(t *testing.T) {
	e := awsemu.StartT(t, awsemu.DemoFixture())
	e.IMDSEnv().Set(t)
	e.SetIMDSAvailable(false)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	var out bytes.Buffer
	err := Run(t.Context(), Options{Mode: "pre-install", Node: true, Root: filepath.Join(fixtures, "kops-node"), FailOn: "error", AWS: true},
		preflight.FormatJSON, Streams{Out: &out, Err: &bytes.Buffer{}})
	if code := exitcode.Of(err); code != exitcode.OK {
		t.Fatalf("exit code %d (%v), want %d", code, err, exitcode.OK)
	}
	var r preflight.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("no JSON report: %v\n%s", err, out.String())
	}
	aws, passed := 0, 0
	for _, f := range r.Findings {
		switch {
		case f.Category == awschecks.Category:
			aws++
			if f.Status != preflight.StatusSkip {
				t.Errorf("%s: %s, want skip", f.ID, f.Status)
			}
		case f.Status == preflight.StatusPass:
			passed++
		}
	}
	if aws == 0 || passed == 0 {
		t.Fatalf("%d AWS findings, %d node checks passed; want both", aws, passed)
	}
}
