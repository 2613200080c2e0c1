package preflightcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strings"
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

// TestAWSUnreachableExitsThree: AWS that does not answer (STS refusing
// connections, or EC2 failing with 503 through every retry) is the
// documented "cannot reach" exit code, 3, not 1 "checks failed"; the report
// is still written.
func TestAWSUnreachableExitsThree(t *testing.T) {
	cases := map[string]func(t *testing.T, e *awsemu.Emulator){
		"STS connection refused": func(t *testing.T, _ *awsemu.Emulator) {
			l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Setenv("AWS_ENDPOINT_URL_STS", "http://"+l.Addr().String())
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		},
		"EC2 down": func(_ *testing.T, e *awsemu.Emulator) {
			e.InjectFault(awsemu.Fault{Service: "ec2", HTTPStatus: http.StatusServiceUnavailable})
		},
	}
	for name, breakAWS := range cases {
		t.Run(name, func(t *testing.T) {
			e := awsemu.StartT(t, awsemu.DemoFixture())
			e.IMDSEnv().Set(t) // this node's instance from IMDS, so EC2 is asked about it
			breakAWS(t, e)
			var out bytes.Buffer
			err := Run(t.Context(), Options{Mode: "pre-install", Node: true, Root: filepath.Join(fixtures, "kops-node"), FailOn: "error", AWS: true,
				Region: "us-east-1"}, preflight.FormatText, Streams{Out: &out, Err: &bytes.Buffer{}})
			if code := exitcode.Of(err); code != exitcode.Unreachable {
				t.Fatalf("exit code %d (%v), want %d\n%s", code, err, exitcode.Unreachable, out.String())
			}
			if !strings.Contains(err.Error(), "cannot reach AWS") || !strings.Contains(out.String(), "AWS did not answer") && !strings.Contains(out.String(), "make STS reachable") {
				t.Fatalf("error %v, report:\n%s", err, out.String())
			}
		})
	}
}
