package awsapi

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// TestLeastPrivilegeTaggingOfInstances asks the emulator's policy simulator
// about the tagging controller's requests under the generated
// least-privilege policy (cluster "demo"): --tags on and off the cluster's
// instances only, never removing a cluster tag, never DeleteTags without
// keys (which removes every tag).
func TestLeastPrivilegeTaggingOfInstances(t *testing.T) {
	doc, err := LeastPrivilegePolicy(ComponentCCM, "demo").JSON()
	if err != nil {
		t.Fatal(err)
	}
	e := awsemu.StartT(t, &awsemu.Fixture{IAM: awsemu.IAMFixture{Roles: []awsemu.IAMRole{{Name: "ccm"}}}})
	if err := e.PutRolePolicy("ccm", "ccm-least-privilege", string(doc)); err != nil {
		t.Fatal(err)
	}
	e.Env().Set(t)
	c, err := NewIAM(context.Background(), Options{Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	entry := func(key string, values ...string) iamtypes.ContextEntry {
		typ := iamtypes.ContextKeyTypeEnumString
		if len(values) != 1 {
			typ = iamtypes.ContextKeyTypeEnumStringList
		}
		return iamtypes.ContextEntry{ContextKeyName: aws.String(key), ContextKeyType: typ, ContextKeyValues: values}
	}
	const instance = "arn:aws:ec2:us-east-1:123456789012:instance/i-0a1b2c3d4e5f60001"
	ours := entry("aws:ResourceTag/kubernetes.io/cluster/demo", "owned")
	theirs := entry("aws:ResourceTag/kubernetes.io/cluster/other", "owned")
	cases := []struct {
		name, action, resource string
		context                []iamtypes.ContextEntry
		allowed                bool
	}{
		{"tag the cluster's instance", "ec2:CreateTags", instance, []iamtypes.ContextEntry{ours, entry("aws:RequestTag/team", "blue"), entry("aws:TagKeys", "team")}, true},
		{"tag another cluster's instance", "ec2:CreateTags", instance, []iamtypes.ContextEntry{theirs, entry("aws:RequestTag/team", "blue"), entry("aws:TagKeys", "team")}, false},
		{"tag an untagged instance", "ec2:CreateTags", instance, []iamtypes.ContextEntry{entry("aws:RequestTag/team", "blue"), entry("aws:TagKeys", "team")}, false},
		{"untag the cluster's instance", "ec2:DeleteTags", instance, []iamtypes.ContextEntry{ours, entry("aws:TagKeys", "team", "env")}, true},
		{"untag another cluster's instance", "ec2:DeleteTags", instance, []iamtypes.ContextEntry{theirs, entry("aws:TagKeys", "team")}, false},
		{"untag an untagged instance", "ec2:DeleteTags", instance, []iamtypes.ContextEntry{entry("aws:TagKeys", "team")}, false},
		{"remove every tag (no keys)", "ec2:DeleteTags", instance, []iamtypes.ContextEntry{ours}, false},
		{"remove the cluster tag", "ec2:DeleteTags", instance, []iamtypes.ContextEntry{ours, entry("aws:TagKeys", "team", "kubernetes.io/cluster/demo")}, false},
		{"remove the legacy cluster tag", "ec2:DeleteTags", instance, []iamtypes.ContextEntry{ours, entry("aws:TagKeys", "KubernetesCluster")}, false},
		// Any of the cluster's resources, as for its other changes: preflight's
		// simulation names no resource, so a grant narrowed to instance ARNs
		// would fail it (TestGeneratedPoliciesPassTheIAMCheck).
		{"untag the cluster's security group", "ec2:DeleteTags", "arn:aws:ec2:us-east-1:123456789012:security-group/sg-1", []iamtypes.ContextEntry{ours, entry("aws:TagKeys", "team")}, true},
		{"untag as preflight simulates it", "ec2:DeleteTags", "*", []iamtypes.ContextEntry{ours, entry("aws:TagKeys", "example-tag")}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := c.SimulatePrincipalPolicy(context.Background(), &iam.SimulatePrincipalPolicyInput{
				PolicySourceArn: aws.String("arn:aws:iam::123456789012:role/ccm"),
				ActionNames:     []string{tc.action}, ResourceArns: []string{tc.resource}, ContextEntries: tc.context,
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := out.EvaluationResults[0].EvalDecision == iamtypes.PolicyEvaluationDecisionTypeAllowed; got != tc.allowed {
				t.Errorf("%s on %s allowed = %t, want %t\n%s", tc.action, tc.resource, got, tc.allowed, doc)
			}
		})
	}
}
