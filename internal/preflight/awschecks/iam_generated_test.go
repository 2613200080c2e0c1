package awschecks

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// TestGeneratedPoliciesPassTheIAMCheck: a CCM role holding exactly what
// iam/ ships (the broad policy, or the least-privilege one for cluster
// demo) passes aws-iam-permissions. A grant the simulation cannot see
// (one narrowed to resource ARNs or needing request context preflight does
// not send) would make preflight fail every cluster using the policy.
func TestGeneratedPoliciesPassTheIAMCheck(t *testing.T) {
	for name, doc := range map[string]awsapi.PolicyDocument{
		"ccm-policy.json":                 awsapi.Policy(awsapi.ComponentCCM),
		"ccm-policy-least-privilege.json": awsapi.LeastPrivilegePolicy(awsapi.ComponentCCM, "demo"),
	} {
		t.Run(name, func(t *testing.T) {
			statements, err := json.Marshal(doc.Statement)
			if err != nil {
				t.Fatal(err)
			}
			e := start(t, func(f *awsemu.Fixture) {
				ccmPolicy(f, strings.TrimSuffix(strings.TrimPrefix(string(statements), "["), "]"))
			}, true)
			got := run(t, e.baseInput())[IDIAMPermissions]
			if got.Status != preflight.StatusPass {
				t.Errorf("%s = %s, want pass\n  message: %s\n  fix: %s", IDIAMPermissions, got.Status, got.Message, got.Remediation)
			}
		})
	}
}
