package preflight

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

// sample is a fixed set of checks covering every status path.
func sample() []Check {
	run := func(r Result) func(context.Context) Result { return func(context.Context) Result { return r } }
	return []Check{
		{ID: "cluster-reachable", Category: "cluster", Title: "Cluster reachable", Severity: SeverityError, Run: run(Pass("kube-apiserver v1.37.1"))},
		{ID: "cluster-version", Category: "cluster", Title: "Control-plane version", Severity: SeverityError, Requires: []string{"cluster-reachable"},
			Run: run(Fail("upgrade the control plane to 1.27 or newer first", "v1.26.13 still runs the in-tree provider"))},
		{ID: "cluster-skew", Category: "cluster", Title: "Kubelet skew", Severity: SeverityWarning, Requires: []string{"cluster-reachable"},
			Run: run(Fail("upgrade kubelets on node-a", "node-a runs v1.23.0, 3 minors behind"))},
		{ID: "aws-identity", Category: "aws", Title: "AWS identity", Severity: SeverityError, Run: run(Fail("set AWS credentials", "no credentials found"))},
		{ID: "aws-iam", Category: "aws", Title: "IAM permissions", Severity: SeverityError, Requires: []string{"aws-identity"}, Run: run(Pass("never runs"))},
		{ID: "aws-imds", Category: "aws", Title: "IMDS reachable", Severity: SeverityError, Run: run(Skip("Region, VPC and cluster ID are in the cloud config"))},
		{ID: "crashes", Category: "aws", Title: "A broken check", Severity: SeverityError, Run: func(context.Context) Result { panic("boom") }},
	}
}

func fixedClock() func() time.Time {
	t := time.Unix(0, 0)
	return func() time.Time { t = t.Add(10 * time.Millisecond); return t }
}

func TestRunStatuses(t *testing.T) {
	r, err := Run(context.Background(), sample(), Options{Mode: ModePreInstall, Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{
		"cluster-reachable": StatusPass,
		"cluster-version":   StatusFail,
		"cluster-skew":      StatusWarn, // warning severity demotes fail
		"aws-identity":      StatusFail,
		"aws-iam":           StatusSkip, // its requirement failed
		"aws-imds":          StatusSkip,
		"crashes":           StatusFail, // a panic is a failure, not a crash of the run
	}
	for _, f := range r.Findings {
		if f.Status != want[f.ID] {
			t.Errorf("%s: status %s, want %s (%s)", f.ID, f.Status, want[f.ID], f.Message)
		}
	}
	if r.Success || r.Summary != (Summary{Pass: 1, Warn: 1, Fail: 3, Skip: 2}) {
		t.Fatalf("success=%v summary=%+v", r.Success, r.Summary)
	}
}

func TestIgnoreFailOnAndCategory(t *testing.T) {
	ctx := context.Background()
	r, err := Run(ctx, sample(), Options{Mode: ModePreInstall, Ignore: []string{"all"}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Success || r.Summary.Fail != 0 {
		t.Fatalf("--ignore-checks=all left failures: %+v", r.Summary)
	}
	r, _ = Run(ctx, sample(), Options{Mode: ModePreInstall, Ignore: []string{"all"}, FailOnWarning: true})
	if r.Success {
		t.Fatal("--fail-on=warning passed with warnings")
	}
	r, _ = Run(ctx, sample(), Options{Mode: ModePreInstall, Ignore: []string{"cluster-version", "aws-identity", "crashes"}})
	if !r.Success {
		t.Fatalf("ignoring every failing check should pass: %+v", r.Summary)
	}
	for _, f := range r.Findings {
		if f.ID == "aws-iam" && f.Status != StatusPass {
			t.Fatalf("an ignored (warned) requirement must not skip its dependents: %+v", f)
		}
	}
	r, _ = Run(ctx, sample(), Options{Mode: ModePreInstall, Categories: []string{"aws"}})
	for _, f := range r.Findings {
		if f.Category != "aws" {
			t.Fatalf("--category aws ran %s", f.ID)
		}
	}
}

func TestRunRejectsBadSelection(t *testing.T) {
	_, err := Run(context.Background(), sample(), Options{Ignore: []string{"no-such-check"}, Categories: []string{"nope"}})
	if err == nil || !strings.Contains(err.Error(), "no-such-check") || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("error = %v; want both problems named", err)
	}
	dup := append(sample(), Check{ID: "aws-imds", Category: "aws", Run: func(context.Context) Result { return Pass("") }})
	if _, err := Run(context.Background(), dup, Options{}); err == nil || !strings.Contains(err.Error(), "defined twice") {
		t.Fatalf("duplicate IDs: %v", err)
	}
}

func TestOutputGolden(t *testing.T) {
	r, err := Run(context.Background(), sample(), Options{Mode: ModePreInstall, Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	for name, format := range map[string]string{"report.txt": FormatText, "report.json": FormatJSON, "report.xml": FormatJUnit} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, r, format, false); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name)
			if *update {
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if b.String() != string(want) {
				t.Fatalf("%s differs from the golden file (go test -update to accept):\n%s", name, b.String())
			}
		})
	}
}
