package awsemu

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
)

// iamFixture: role ccm (path /k8s/) with a managed CCM policy, an AWS
// managed read-only policy and two inline policies (one a Deny).
const iamFixture = `
instances:
  - {id: i-1, availabilityZone: us-east-1a, iamInstanceProfileArn: "arn:aws:iam::123456789012:instance-profile/ccm-profile"}
iam:
  roles:
    - name: ccm
      path: /k8s/
      instanceProfiles: [ccm-profile]
      attachedPolicies: [arn:aws:iam::123456789012:policy/ccm, arn:aws:iam::aws:policy/ReadOnlyS3]
      inlinePolicies:
        no-vpcs: {Version: "2012-10-17", Statement: {Effect: Deny, Action: ec2:DescribeVpcs, Resource: "*"}}
        logs: '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","NotAction":["iam:*","sts:*","ec2:*","s3:*"],"Resource":"*"}]}'
  policies:
    - arn: arn:aws:iam::123456789012:policy/ccm
      document:
        Version: "2012-10-17"
        Statement:
          - {Effect: Allow, Action: ["ec2:Describe*"], Resource: "*"}
          - Effect: Allow
            Action: ec2:CreateTags
            Resource: arn:aws:ec2:*:*:instance/*
            Condition: {StringEquals: {aws:ResourceTag/kubernetes.io/cluster/demo: owned}}
    - arn: arn:aws:iam::aws:policy/ReadOnlyS3
      versionId: v3
      document: {Version: "2012-10-17", Statement: [{Effect: Allow, Action: ["s3:Get*", "s3:List*"], Resource: "*"}]}
`

func writeFixture(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func startIAM(t *testing.T) (*Server, *iam.Client) {
	t.Helper()
	f, err := LoadFixture(writeFixture(t, iamFixture))
	if err != nil {
		t.Fatal(err)
	}
	s, url := start(t, f)
	return s, iamClient(t, url)
}

func iamClient(t testing.TB, url string) *iam.Client {
	return iam.NewFromConfig(sdkConfig(t), func(o *iam.Options) {
		o.BaseEndpoint = aws.String(url)
		o.HTTPClient = HTTPClient()
	})
}

const (
	ccmRoleArn  = "arn:aws:iam::123456789012:role/k8s/ccm"
	instanceArn = "arn:aws:ec2:us-east-1:123456789012:instance/i-1"
	clusterTag  = "aws:ResourceTag/kubernetes.io/cluster/demo"
)

func tagContext(key, value string) []iamtypes.ContextEntry {
	return []iamtypes.ContextEntry{{ContextKeyName: aws.String(key), ContextKeyValues: []string{value}, ContextKeyType: iamtypes.ContextKeyTypeEnumString}}
}

func TestSimulatePrincipalPolicy(t *testing.T) {
	_, client := startIAM(t)
	tests := []struct {
		name, source, action, resource string
		ctx                            []iamtypes.ContextEntry
		want                           iamtypes.PolicyEvaluationDecisionType
		matched                        []string // SourcePolicyId/SourcePolicyType
		missing                        []string
	}{
		{"allowed by wildcard", ccmRoleArn, "ec2:DescribeInstances", "", nil, "allowed", []string{"ccm/user-managed"}, nil},
		{"assumed-role session", "arn:aws:sts::123456789012:assumed-role/ccm/i-1", "EC2:describeAvailabilityZones", "", nil, "allowed", []string{"ccm/user-managed"}, nil},
		{"aws managed policy", ccmRoleArn, "s3:GetObject", "arn:aws:s3:::b/k", nil, "allowed", []string{"ReadOnlyS3/aws-managed"}, nil},
		{"implicit deny", ccmRoleArn, "ec2:TerminateInstances", "", nil, "implicitDeny", nil, nil},
		{"explicit deny beats allow", ccmRoleArn, "ec2:DescribeVpcs", "", nil, "explicitDeny", []string{"no-vpcs/role"}, nil},
		{"tag condition allowed", ccmRoleArn, "ec2:CreateTags", instanceArn, tagContext(clusterTag, "owned"), "allowed", []string{"ccm/user-managed"}, nil},
		{"condition key case-insensitive", ccmRoleArn, "ec2:CreateTags", instanceArn, tagContext("AWS:RESOURCETAG/kubernetes.io/cluster/demo", "owned"), "allowed", []string{"ccm/user-managed"}, nil},
		{"tag condition other value", ccmRoleArn, "ec2:CreateTags", instanceArn, tagContext(clusterTag, "shared"), "implicitDeny", nil, nil},
		{"tag condition missing context", ccmRoleArn, "ec2:CreateTags", instanceArn, nil, "implicitDeny", nil, []string{clusterTag}},
		{"tag condition wrong resource", ccmRoleArn, "ec2:CreateTags", "arn:aws:ec2:us-east-1:123456789012:volume/vol-1", tagContext(clusterTag, "owned"), "implicitDeny", nil, nil},
		{"NotAction allows others", ccmRoleArn, "logs:PutLogEvents", "", nil, "allowed", []string{"logs/role"}, nil},
		{"NotAction excludes", ccmRoleArn, "iam:PassRole", "", nil, "implicitDeny", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := &iam.SimulatePrincipalPolicyInput{PolicySourceArn: aws.String(tc.source), ActionNames: []string{tc.action}, ContextEntries: tc.ctx}
			if tc.resource != "" {
				in.ResourceArns = []string{tc.resource}
			}
			out, err := client.SimulatePrincipalPolicy(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.EvaluationResults) != 1 || out.IsTruncated {
				t.Fatalf("%d results, truncated %v", len(out.EvaluationResults), out.IsTruncated)
			}
			r := out.EvaluationResults[0]
			var matched []string
			for _, m := range r.MatchedStatements {
				matched = append(matched, aws.ToString(m.SourcePolicyId)+"/"+string(m.SourcePolicyType))
			}
			wantRes := tc.resource
			if wantRes == "" {
				wantRes = "*"
			}
			if aws.ToString(r.EvalActionName) != tc.action || aws.ToString(r.EvalResourceName) != wantRes || r.EvalDecision != tc.want ||
				!slices.Equal(matched, tc.matched) || !slices.Equal(r.MissingContextValues, tc.missing) {
				t.Errorf("got %s %s %s matched %v missing %v, want %s matched %v missing %v", aws.ToString(r.EvalActionName),
					aws.ToString(r.EvalResourceName), r.EvalDecision, matched, r.MissingContextValues, tc.want, tc.matched, tc.missing)
			}
		})
	}
}

func TestSimulatePrincipalPolicyPaging(t *testing.T) {
	s, client := startIAM(t)
	actions := []string{"ec2:DescribeInstances", "ec2:DescribeVpcs", "ec2:RunInstances"}
	resources := []string{"arn:aws:ec2:us-east-1:123456789012:instance/i-1", "arn:aws:ec2:us-east-1:123456789012:instance/i-2"}
	p := iam.NewSimulatePrincipalPolicyPaginator(client, &iam.SimulatePrincipalPolicyInput{
		PolicySourceArn: aws.String(ccmRoleArn), ActionNames: actions, ResourceArns: resources, MaxItems: aws.Int32(4),
	})
	var got []string
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range out.EvaluationResults {
			got = append(got, aws.ToString(r.EvalActionName)+" "+aws.ToString(r.EvalResourceName)[len(resources[0])-3:]+" "+string(r.EvalDecision))
		}
	}
	want := []string{
		"ec2:DescribeInstances i-1 allowed", "ec2:DescribeInstances i-2 allowed", "ec2:DescribeVpcs i-1 explicitDeny",
		"ec2:DescribeVpcs i-2 explicitDeny", "ec2:RunInstances i-1 implicitDeny", "ec2:RunInstances i-2 implicitDeny",
	}
	if !slices.Equal(got, want) || s.Calls("iam", "SimulatePrincipalPolicy") != 2 {
		t.Errorf("pages: %q in %d calls", got, s.Calls("iam", "SimulatePrincipalPolicy"))
	}
}

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%q: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

func decodeDoc(t *testing.T, doc *string) string {
	t.Helper()
	s, err := url.QueryUnescape(aws.ToString(doc))
	if err != nil || strings.Contains(aws.ToString(doc), "{") {
		t.Fatalf("document %q is not URL-encoded JSON: %v", aws.ToString(doc), err)
	}
	return s
}

func TestIAMReadRoundTrip(t *testing.T) {
	_, client := startIAM(t)
	ctx := context.Background()
	ip, err := client.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("ccm-profile")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(ip.InstanceProfile.Arn) != "arn:aws:iam::123456789012:instance-profile/ccm-profile" || len(ip.InstanceProfile.Roles) != 1 {
		t.Fatalf("instance profile %+v", ip.InstanceProfile)
	}
	role := ip.InstanceProfile.Roles[0]
	if aws.ToString(role.RoleName) != "ccm" || aws.ToString(role.Arn) != ccmRoleArn || aws.ToString(role.Path) != "/k8s/" ||
		!strings.HasPrefix(aws.ToString(role.RoleId), "AROA") || role.CreateDate == nil ||
		!strings.Contains(decodeDoc(t, role.AssumeRolePolicyDocument), `"Service":"ec2.amazonaws.com"`) {
		t.Errorf("role %+v", role)
	}
	got, err := client.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("CCM")})
	if err != nil || aws.ToString(got.Role.RoleId) != aws.ToString(role.RoleId) {
		t.Fatalf("GetRole: %v %+v", err, got)
	}

	var attached []string
	p := iam.NewListAttachedRolePoliciesPaginator(client, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String("ccm"), MaxItems: aws.Int32(1)})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range out.AttachedPolicies {
			attached = append(attached, aws.ToString(a.PolicyName)+"="+aws.ToString(a.PolicyArn))
		}
	}
	if want := []string{"ccm=arn:aws:iam::123456789012:policy/ccm", "ReadOnlyS3=arn:aws:iam::aws:policy/ReadOnlyS3"}; !slices.Equal(attached, want) {
		t.Errorf("attached %v", attached)
	}

	pol, err := client.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: aws.String("arn:aws:iam::aws:policy/ReadOnlyS3")})
	if err != nil || aws.ToString(pol.Policy.DefaultVersionId) != "v3" || aws.ToInt32(pol.Policy.AttachmentCount) != 1 {
		t.Fatalf("GetPolicy: %v %+v", err, pol)
	}
	ver, err := client.GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: pol.Policy.Arn, VersionId: pol.Policy.DefaultVersionId})
	if err != nil || !ver.PolicyVersion.IsDefaultVersion {
		t.Fatalf("GetPolicyVersion: %v %+v", err, ver)
	}
	if doc := decodeDoc(t, ver.PolicyVersion.Document); !jsonEqual(t, doc,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:Get*","s3:List*"],"Resource":"*"}]}`) {
		t.Errorf("policy version document %s", doc)
	}

	names, err := client.ListRolePolicies(ctx, &iam.ListRolePoliciesInput{RoleName: aws.String("ccm")})
	if err != nil || !slices.Equal(names.PolicyNames, []string{"logs", "no-vpcs"}) || names.IsTruncated {
		t.Fatalf("ListRolePolicies: %v %+v", err, names)
	}
	inline, err := client.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String("ccm"), PolicyName: aws.String("no-vpcs")})
	if err != nil {
		t.Fatal(err)
	}
	if doc := decodeDoc(t, inline.PolicyDocument); !jsonEqual(t, doc,
		`{"Version":"2012-10-17","Statement":{"Effect":"Deny","Action":"ec2:DescribeVpcs","Resource":"*"}}`) {
		t.Errorf("inline policy document %s", doc)
	}
}

func TestIAMErrors(t *testing.T) {
	_, client := startIAM(t)
	ctx := context.Background()
	var nse *iamtypes.NoSuchEntityException
	_, err := client.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("nope")})
	if !errors.As(err, &nse) || !strings.Contains(err.Error(), "The role with name nope cannot be found") {
		t.Errorf("GetRole: %v", err)
	}
	calls := map[string]func() error{
		"GetInstanceProfile": func() error {
			_, err := client.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("nope")})
			return err
		},
		"GetPolicy": func() error {
			_, err := client.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: aws.String("arn:aws:iam::123456789012:policy/nope")})
			return err
		},
		"GetPolicyVersion": func() error {
			_, err := client.GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: aws.String("arn:aws:iam::123456789012:policy/ccm"), VersionId: aws.String("v9")})
			return err
		},
		"GetRolePolicy": func() error {
			_, err := client.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String("ccm"), PolicyName: aws.String("nope")})
			return err
		},
		"SimulatePrincipalPolicy": func() error {
			_, err := client.SimulatePrincipalPolicy(ctx, &iam.SimulatePrincipalPolicyInput{PolicySourceArn: aws.String("arn:aws:iam::123456789012:role/ccm"), ActionNames: []string{"ec2:DescribeInstances"}})
			return err // the role's path is /k8s/
		},
	}
	for name, call := range calls {
		if err := call(); apiCode(err) != "NoSuchEntity" || !errors.As(err, &nse) {
			t.Errorf("%s: %v, want NoSuchEntity", name, err)
		}
	}
	_, err = client.SimulatePrincipalPolicy(ctx, &iam.SimulatePrincipalPolicyInput{PolicySourceArn: aws.String("arn:aws:iam::123456789012:user/bob"), ActionNames: []string{"ec2:DescribeInstances"}})
	wantCode(t, err, "InvalidInput")
	_, err = client.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: aws.String("not-an-arn-at-all-but-long")})
	wantCode(t, err, "InvalidInput")
	_, err = client.ListRolePolicies(ctx, &iam.ListRolePoliciesInput{RoleName: aws.String("ccm"), Marker: aws.String("bogus")})
	wantCode(t, err, "InvalidInput")
	_, err = client.ListRolePolicies(ctx, &iam.ListRolePoliciesInput{RoleName: aws.String("ccm"), MaxItems: aws.Int32(0)})
	wantCode(t, err, "ValidationError")
}

func TestPutRolePolicy(t *testing.T) {
	s, client := startIAM(t)
	simulate := func() iamtypes.PolicyEvaluationDecisionType {
		out, err := client.SimulatePrincipalPolicy(context.Background(), &iam.SimulatePrincipalPolicyInput{
			PolicySourceArn: aws.String(ccmRoleArn), ActionNames: []string{"ec2:DescribeInstances"}})
		if err != nil {
			t.Fatal(err)
		}
		return out.EvaluationResults[0].EvalDecision
	}
	if got := simulate(); got != "allowed" {
		t.Fatalf("before: %s", got)
	}
	if err := s.PutRolePolicy("ccm", "no-describe", `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Action":"ec2:Describe*","Resource":"*"}]}`); err != nil {
		t.Fatal(err)
	}
	if got := simulate(); got != "explicitDeny" {
		t.Errorf("after deny: %s", got)
	}
	if err := s.PutRolePolicy("ccm", "no-describe", `{"Statement":{"Effect":"Allow","Action":"ec2:Describe*","Resource":"*"}}`); err != nil || simulate() != "allowed" {
		t.Errorf("replacing the policy: %v", err)
	}
	if err := s.PutRolePolicy("ccm", "bad", `{"Statement":{"Effect":"Permit","Action":"*","Resource":"*"}}`); err == nil || !strings.Contains(err.Error(), "MalformedPolicyDocument") {
		t.Errorf("bad document: %v", err)
	}
	if err := s.PutRolePolicy("nope", "x", `{"Statement":{"Effect":"Allow","Action":"*","Resource":"*"}}`); err == nil || !strings.Contains(err.Error(), "NoSuchEntity") {
		t.Errorf("unknown role: %v", err)
	}
}

func TestIAMFixtureErrors(t *testing.T) {
	const role = "iam:\n  roles:\n    - name: ccm\n"
	tests := []struct{ name, yaml, want string }{
		{"bad policy document", "iam:\n  policies:\n    - arn: arn:aws:iam::123456789012:policy/ccm\n      document: {Statement: [{Effect: Alow, Action: \"*\", Resource: \"*\"}]}\n",
			`iam.policies[0] (arn:aws:iam::123456789012:policy/ccm): document: MalformedPolicyDocument: Statement[0]: Effect must be "Allow" or "Deny", got Alow`},
		{"bad inline policy", role + "      inlinePolicies: {x: {Statement: {Effect: Allow, Action: ec2:*}}}\n",
			"iam.roles[0] (ccm): inlinePolicies[x]: MalformedPolicyDocument: Statement[0]: exactly one of Resource and NotResource is required"},
		{"inline policy not json", role + "      inlinePolicies: {x: '{\"Statement\": '}\n", "inlinePolicies[x]: MalformedPolicyDocument: the policy is not a JSON object"},
		{"unknown field", role + "      bogus: 1\n", `unknown field "bogus"`},
		{"dangling attached policy", role + "      attachedPolicies: [arn:aws:iam::123456789012:policy/missing]\n",
			`iam.roles[0] (ccm): attachedPolicies: "arn:aws:iam::123456789012:policy/missing" is not in iam.policies`},
		{"bad policy arn", "iam:\n  policies:\n    - {arn: ccm, document: {Statement: {Effect: Allow, Action: \"*\", Resource: \"*\"}}}\n", "iam.policies[0] (ccm): arn must be"},
		{"foreign account", "iam:\n  policies:\n    - {arn: \"arn:aws:iam::999999999999:policy/x\", document: {Statement: {Effect: Allow, Action: \"*\", Resource: \"*\"}}}\n",
			"account 999999999999 is not the fixture account 123456789012"},
		{"duplicate role", role + "    - name: CCM\n", "iam.roles[1] (CCM): duplicate role"},
		{"profile with two roles", role + "      instanceProfiles: [p]\n    - name: other\n      instanceProfiles: [p]\n", `instance profile "p" is invalid or already holds role ccm`},
		{"bad path", role + "      path: k8s\n", `path "k8s" must start and end with /`},
		{"instance profile not in iam", "instances:\n  - {id: i-1, availabilityZone: us-east-1a, iamInstanceProfileArn: \"arn:aws:iam::123456789012:instance-profile/nope\"}\n" + role,
			`instances[0] (i-1): iamInstanceProfileArn "arn:aws:iam::123456789012:instance-profile/nope" is not an instance profile of iam.roles`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadFixture(writeFixture(t, tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant it to mention %q", err, tc.want)
			}
		})
	}
	bad := &Fixture{IAM: IAMFixture{Roles: []IAMRole{{Name: "r", InlinePolicies: map[string]PolicyDocument{"p": PolicyDocument(`{"Statement":[]}`)}}}}}
	if _, _, _, err := Start(bad); err == nil || !strings.Contains(err.Error(), "MalformedPolicyDocument") {
		t.Errorf("Start: %v", err)
	}
}

// TestIAMDemo checks what preflight sees on the demo fixture: IMDS instance
// -> instance profile -> role = the STS caller's role, with the CCM's
// permissions.
func TestIAMDemo(t *testing.T) {
	s, url := demo(t)
	client := iamClient(t, url)
	ctx := context.Background()
	in, _ := s.Instance(demoA)
	profile := in.IAMInstanceProfileArn[strings.LastIndex(in.IAMInstanceProfileArn, "/")+1:]
	for _, name := range []string{profile, "control-plane"} {
		ip, err := client.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
		if err != nil || aws.ToString(ip.InstanceProfile.Roles[0].Arn) != DefaultCallerArn {
			t.Fatalf("GetInstanceProfile(%s): %v", name, err)
		}
	}
	out, err := client.SimulatePrincipalPolicy(ctx, &iam.SimulatePrincipalPolicyInput{
		PolicySourceArn: aws.String(DefaultCallerArn),
		ActionNames:     []string{"ec2:DescribeInstances", "ec2:DescribeAvailabilityZones", "sts:AssumeRole", "ec2:CreateTags", "ec2:TerminateInstances", "ec2:RunInstances"},
		ContextEntries:  tagContext(clusterTag, "owned"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range out.EvaluationResults {
		got = append(got, string(r.EvalDecision))
	}
	if want := []string{"allowed", "allowed", "allowed", "allowed", "explicitDeny", "implicitDeny"}; !slices.Equal(got, want) {
		t.Errorf("decisions %v, want %v", got, want)
	}
}
