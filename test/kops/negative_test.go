package kops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/migrate"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// cutOverSets returns every --set value of c's leader-migration plan up to
// and including the cut-over, as its commands carry them.
func cutOverSets(t *testing.T, c kopsCase) []string {
	t.Helper()
	p := c.plan(t, migrate.ModeLeaderMigration)
	var sets []string
	for _, e := range p.Spec.Kops.Edits {
		if len(e.Set) > 0 {
			sets = append(sets, setValues(e.Commands[0])...)
		}
		if e.Step == migrate.StepCutOver {
			return sets
		}
	}
	t.Fatal("the plan has no cut-over edit")
	return nil
}

// TestOmittedEditCaughtHereNotByKops: a cut-over without the edit of one
// component's cloudProvider passes all of kops' validation (kops keeps the
// user's `aws` and adds its CCM add-on anyway), and this package's
// assertion catches it. So the suite cannot pass on kops' word alone.
func TestOmittedEditCaughtHereNotByKops(t *testing.T) {
	bin := testbed.Tool(t, testbed.KopsCheckBinary)
	for _, c := range kopsCases {
		sets := cutOverSets(t, c)
		for _, omit := range []struct{ path, want string }{
			{"spec.kubeControllerManager.cloudProvider", `kubeControllerManager.cloudProvider is "aws" in the populated spec, want external`},
			{"spec.kubelet.cloudProvider", `kubelet.cloudProvider is "aws" in the populated spec, want external`},
		} {
			t.Run(c.name+"/without "+omit.path, func(t *testing.T) {
				res := kopsCheck(t, bin, c.spec, without(sets, omit.path))
				if !res.Valid {
					t.Fatalf("kops now refuses the spec without %s (at %s: %s): this test's premise changed", omit.path, res.Stage, res.stderr)
				}
				err := assertExternal(res)
				if err == nil || !strings.Contains(err.Error(), omit.want) {
					t.Fatalf("assertExternal = %v, want %q", err, omit.want)
				}
			})
		}
	}
}

// TestKopsRefusesBadSpecs: kops-check answers with kops' own refusals and
// field paths (exit 1), so the plan tests above would see a bad edit.
func TestKopsRefusesBadSpecs(t *testing.T) {
	bin := testbed.Tool(t, testbed.KopsCheckBinary)
	spec := "kops126-calico.yaml"
	typo := filepath.Join(t.TempDir(), "typo.yaml")
	body := strings.Replace(readSpec(t, spec), "  kubeControllerManager:\n    cloudProvider: aws\n",
		"  kubeControllerManager:\n    cloudProvider: aws\n    enableLeaderMigraton: true\n", 1)
	if !strings.Contains(body, "enableLeaderMigraton") {
		t.Fatal("the typo was not inserted")
	}
	if err := os.WriteFile(typo, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, spec string
		sets       []string
		stage      string
		field      string
		message    string
	}{
		{"a cloud provider that is not the cluster's", spec, []string{"spec.kubelet.cloudProvider=gce"},
			"PopulateClusterSpec", "spec.kubelet.cloudProvider", "Did not match cluster cloudProvider"},
		{"v1alpha2's masterKubelet, which --set does not take", spec, []string{"spec.masterKubelet.cloudProvider=external"},
			"set", "", "field spec.masterKubelet.cloudProvider not found"},
		{"a value kops cannot parse", spec, []string{"spec.cloudControllerManager.enableLeaderMigration=yes please"},
			"set", "", "spec.cloudControllerManager.enableLeaderMigration"},
		{"a misspelt field in the spec", typo, nil, "decode", "", `unknown field "enableLeaderMigraton"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := kopsCheck(t, bin, tc.spec, tc.sets)
			if res.Valid || res.exitCode != 1 {
				t.Fatalf("kops-check accepted it (exit %d)", res.exitCode)
			}
			if res.Stage != tc.stage {
				t.Errorf("refused at %q, want %q: %+v", res.Stage, tc.stage, res.Errors)
			}
			found := false
			for _, e := range res.Errors {
				if (tc.field == "" || e.Field == tc.field) && strings.Contains(e.Detail, tc.message) {
					found = true
				}
			}
			if !found {
				t.Errorf("no error with field %q and %q: %+v", tc.field, tc.message, res.Errors)
			}
			if !strings.Contains(res.stderr, tc.message) {
				t.Errorf("stderr lacks kops' message %q:\n%s", tc.message, res.stderr)
			}
		})
	}
}
