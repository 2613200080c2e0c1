package awsapi

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// TestLeastPrivilegePolicyUnderEvaluation attaches the least-privilege
// policy for cluster "demo" to a role in the emulator, which evaluates IAM
// policies (conditions included), and asks SimulatePrincipalPolicy what the
// role may do: mutating actions only on the cluster's resources.
func TestLeastPrivilegePolicyUnderEvaluation(t *testing.T) {
	actions := []Action{
		{Service: ServiceEC2, Operation: "DescribeInstances"},
		{Service: ServiceEC2, Operation: "CreateSecurityGroup", Mutating: true, Scope: ScopeRequestTag},
		{Service: ServiceEC2, Operation: "AuthorizeSecurityGroupIngress", Mutating: true, Scope: ScopeResourceTag},
		{Service: ServiceELB, Operation: "DeleteLoadBalancer", Mutating: true, Scope: ScopeResourceTag},
		{Service: ServiceIAM, Operation: "CreateServiceLinkedRole", Mutating: true, Unscoped: "no resource tags before the role exists"},
	}
	doc, err := leastPrivilege(actions, "demo").JSON()
	if err != nil {
		t.Fatal(err)
	}
	e := awsemu.StartT(t, &awsemu.Fixture{IAM: awsemu.IAMFixture{Roles: []awsemu.IAMRole{{Name: "ccm"}}}})
	if err := e.PutRolePolicy("ccm", "ccm-least-privilege", string(doc)); err != nil {
		t.Fatalf("the emulator refused the policy: %v\n%s", err, doc)
	}
	e.Env().Set(t)
	c, err := NewIAM(context.Background(), Options{Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}

	tag := func(kind, cluster, value string) []iamtypes.ContextEntry {
		return []iamtypes.ContextEntry{{ContextKeyName: aws.String("aws:" + kind + "/kubernetes.io/cluster/" + cluster),
			ContextKeyType: iamtypes.ContextKeyTypeEnumString, ContextKeyValues: []string{value}}}
	}
	cases := []struct {
		name, action string
		context      []iamtypes.ContextEntry
		allowed      bool
	}{
		{"reads need no tag", "ec2:DescribeInstances", nil, true},
		{"create tagged owned for the cluster", "ec2:CreateSecurityGroup", tag("RequestTag", "demo", "owned"), true},
		{"create tagged shared", "ec2:CreateSecurityGroup", tag("RequestTag", "demo", "shared"), false},
		{"create tagged for another cluster", "ec2:CreateSecurityGroup", tag("RequestTag", "other", "owned"), false},
		{"create without tags", "ec2:CreateSecurityGroup", nil, false},
		{"change a shared cluster resource", "ec2:AuthorizeSecurityGroupIngress", tag("ResourceTag", "demo", "shared"), true},
		{"change an owned cluster resource", "elasticloadbalancing:DeleteLoadBalancer", tag("ResourceTag", "demo", "owned"), true},
		{"change another cluster's resource", "elasticloadbalancing:DeleteLoadBalancer", tag("ResourceTag", "other", "owned"), false},
		{"change an untagged resource", "ec2:AuthorizeSecurityGroupIngress", nil, false},
		{"unscoped action", "iam:CreateServiceLinkedRole", nil, true},
		{"an action not in the policy", "ec2:TerminateInstances", tag("ResourceTag", "demo", "owned"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := c.SimulatePrincipalPolicy(context.Background(), &iam.SimulatePrincipalPolicyInput{
				PolicySourceArn: aws.String("arn:aws:iam::123456789012:role/ccm"),
				ActionNames:     []string{tc.action},
				ContextEntries:  tc.context,
			})
			if err != nil {
				t.Fatal(err)
			}
			got := out.EvaluationResults[0].EvalDecision == iamtypes.PolicyEvaluationDecisionTypeAllowed
			if got != tc.allowed {
				t.Errorf("%s allowed = %t, want %t (decision %s)\n%s", tc.action, got, tc.allowed, out.EvaluationResults[0].EvalDecision, doc)
			}
		})
	}
}

// TestGeneratedLeastPrivilegePolicy asks the emulator's policy simulator
// about the generated least-privilege policy (cluster "demo") in the
// requests the CCM makes: tagging what is already the cluster's without
// the cluster tag in the request (a changed additional-resource-tags
// annotation sends only the changed tags), and a new security group's
// VPC, on which EC2 evaluates no request tags.
func TestGeneratedLeastPrivilegePolicy(t *testing.T) {
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
	entry := func(key, value string) iamtypes.ContextEntry {
		return iamtypes.ContextEntry{ContextKeyName: aws.String(key), ContextKeyType: iamtypes.ContextKeyTypeEnumString, ContextKeyValues: []string{value}}
	}
	owned := entry("aws:ResourceTag/kubernetes.io/cluster/demo", "owned")
	cases := []struct {
		name, action, resource string
		context                []iamtypes.ContextEntry
		allowed                bool
	}{
		{"additional tags on the cluster's Classic ELB", "elasticloadbalancing:AddTags", "*", []iamtypes.ContextEntry{owned, entry("aws:RequestTag/team", "a")}, true},
		{"additional tags on the cluster's security group", "ec2:CreateTags", "*", []iamtypes.ContextEntry{entry("aws:ResourceTag/kubernetes.io/cluster/demo", "shared"), entry("aws:RequestTag/team", "a")}, true},
		{"additional tags on another cluster's load balancer", "elasticloadbalancing:AddTags", "*", []iamtypes.ContextEntry{entry("aws:ResourceTag/kubernetes.io/cluster/other", "owned"), entry("aws:RequestTag/team", "a")}, false},
		{"tags on an untagged resource", "elasticloadbalancing:AddTags", "*", []iamtypes.ContextEntry{entry("aws:RequestTag/team", "a")}, false},
		{"security group in a VPC", "ec2:CreateSecurityGroup", "arn:aws:ec2:us-east-1:123456789012:vpc/vpc-1", nil, true},
		{"untagged security group", "ec2:CreateSecurityGroup", "arn:aws:ec2:us-east-1:123456789012:security-group/*", nil, false},
		{"route in a route table tagged KubernetesCluster=demo alone", "ec2:CreateRoute", "arn:aws:ec2:us-east-1:123456789012:route-table/rtb-1",
			[]iamtypes.ContextEntry{entry("aws:ResourceTag/KubernetesCluster", "demo")}, true},
		{"route replaced in a legacy-tagged table", "ec2:ReplaceRoute", "arn:aws:ec2:us-east-1:123456789012:route-table/rtb-1",
			[]iamtypes.ContextEntry{entry("aws:ResourceTag/KubernetesCluster", "demo")}, true},
		{"route deleted from a legacy-tagged table", "ec2:DeleteRoute", "arn:aws:ec2:us-east-1:123456789012:route-table/rtb-1",
			[]iamtypes.ContextEntry{entry("aws:ResourceTag/KubernetesCluster", "demo")}, true},
		{"route in a table of another cluster's legacy tag", "ec2:CreateRoute", "arn:aws:ec2:us-east-1:123456789012:route-table/rtb-1",
			[]iamtypes.ContextEntry{entry("aws:ResourceTag/KubernetesCluster", "other")}, false},
		{"the legacy tag grants nothing but routes", "ec2:ModifyInstanceAttribute", "arn:aws:ec2:us-east-1:123456789012:instance/i-1",
			[]iamtypes.ContextEntry{entry("aws:ResourceTag/KubernetesCluster", "demo")}, false},
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
				t.Errorf("%s allowed = %t, want %t\n%s", tc.action, got, tc.allowed, doc)
			}
		})
	}
}

// TestGeneratedPoliciesHaveUniqueSids: IAM wants every statement's Sid to
// be unique within a policy.
func TestGeneratedPoliciesHaveUniqueSids(t *testing.T) {
	docs := GeneratedPolicies()
	docs["least privilege, cluster demo"] = LeastPrivilegePolicy(ComponentCCM, "demo")
	for name, doc := range docs {
		seen := map[string]bool{}
		for _, st := range doc.Statement {
			if st.Sid != "" && seen[st.Sid] {
				t.Errorf("%s: Sid %s appears twice", name, st.Sid)
			}
			seen[st.Sid] = true
		}
	}
}
