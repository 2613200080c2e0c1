package awsemu

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
)

// enforcing serves the demo fixture with the test clients' key
// (AKIDEXAMPLE) under policy.
func enforcing(t *testing.T, policy ...string) (*Server, string) {
	t.Helper()
	s, url := demo(t)
	if err := s.AddPrincipal(Principal{AccessKeyID: "AKIDEXAMPLE", Arn: "arn:aws:iam::123456789012:user/tester", Policies: policy}); err != nil {
		t.Fatal(err)
	}
	return s, url
}

// allow is a policy of one Allow statement.
func allow(actions, resource, condition string) string {
	if condition != "" {
		condition = `,"Condition":` + condition
	}
	return `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":` + actions + `,"Resource":"` + resource + `"` + condition + `}]}`
}

// decoded decodes an UnauthorizedOperation's message with
// sts:DecodeAuthorizationMessage, as an operator would.
func decoded(t *testing.T, url string, err error) authMessage {
	t.Helper()
	wantCode(t, err, "UnauthorizedOperation")
	var ae smithy.APIError
	errors.As(err, &ae)
	msg := ae.ErrorMessage()
	const prefix = "You are not authorized to perform this operation. Encoded authorization failure message: "
	if !strings.HasPrefix(msg, prefix) {
		t.Fatalf("message %q lacks %q", msg, prefix)
	}
	out, err := stsClient(t, url).DecodeAuthorizationMessage(context.Background(), &sts.DecodeAuthorizationMessageInput{EncodedMessage: aws.String(strings.TrimPrefix(msg, prefix))})
	if err != nil {
		t.Fatal(err)
	}
	var m authMessage
	if err := json.Unmarshal([]byte(aws.ToString(out.DecodedMessage)), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func sgInput(name string, tags map[string]string) *ec2.CreateSecurityGroupInput {
	in := &ec2.CreateSecurityGroupInput{GroupName: aws.String(name), Description: aws.String("d"), VpcId: aws.String("vpc-0demo000000000001")}
	if len(tags) > 0 {
		spec := ec2types.TagSpecification{ResourceType: ec2types.ResourceTypeSecurityGroup}
		for k, v := range tags {
			spec.Tags = append(spec.Tags, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
		in.TagSpecifications = []ec2types.TagSpecification{spec}
	}
	return in
}

const decodeOK = `{"Effect":"Allow","Action":"sts:DecodeAuthorizationMessage","Resource":"*"}`

func TestEnforceEC2(t *testing.T) {
	ctx := context.Background()
	owned := map[string]string{"kubernetes.io/cluster/demo": "owned"}
	requestTagged := `{"StringEquals":{"aws:RequestTag/kubernetes.io/cluster/demo":"owned"}}`
	cases := []struct {
		name   string
		policy string
		tags   map[string]string
		// denied is the action and resource the decoded message names ("" = allowed).
		deniedAction, deniedResource string
	}{
		{"not granted", allow(`"ec2:DescribeInstances"`, "*", ""), nil,
			"ec2:CreateSecurityGroup", "arn:aws:ec2:us-east-1:123456789012:security-group/*"},
		{"granted", allow(`"ec2:CreateSecurityGroup"`, "*", ""), nil, "", ""},
		{"tags on create need CreateTags", allow(`"ec2:CreateSecurityGroup"`, "*", ""), owned,
			"ec2:CreateTags", "arn:aws:ec2:us-east-1:123456789012:security-group/*"},
		{"CreateTags for CreateSecurityGroup", `{"Version":"2012-10-17","Statement":[` +
			`{"Effect":"Allow","Action":"ec2:CreateSecurityGroup","Resource":"*"},` +
			`{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*","Condition":{"StringEquals":{"ec2:CreateAction":"CreateSecurityGroup"}}}]}`,
			owned, "", ""},
		{"CreateTags for another create action", `{"Version":"2012-10-17","Statement":[` +
			`{"Effect":"Allow","Action":"ec2:CreateSecurityGroup","Resource":"*"},` +
			`{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*","Condition":{"StringEquals":{"ec2:CreateAction":"RunInstances"}}}]}`,
			owned, "ec2:CreateTags", "arn:aws:ec2:us-east-1:123456789012:security-group/*"},
		// EC2 evaluates aws:RequestTag on the group being created only:
		// the VPC the group is created in has no request tags.
		{"request tag condition on every resource", allow(`["ec2:CreateSecurityGroup","ec2:CreateTags"]`, "*", requestTagged), owned,
			"ec2:CreateSecurityGroup", "arn:aws:ec2:us-east-1:123456789012:vpc/vpc-0demo000000000001"},
		{"request tag condition on the group, VPC granted", `{"Version":"2012-10-17","Statement":[` +
			`{"Effect":"Allow","Action":["ec2:CreateSecurityGroup","ec2:CreateTags"],"Resource":"*","Condition":` + requestTagged + `},` +
			`{"Effect":"Allow","Action":"ec2:CreateSecurityGroup","Resource":"arn:*:ec2:*:*:vpc/*"}]}`,
			owned, "", ""},
		{"request tag condition, untagged request", `{"Version":"2012-10-17","Statement":[` +
			`{"Effect":"Allow","Action":["ec2:CreateSecurityGroup","ec2:CreateTags"],"Resource":"*","Condition":` + requestTagged + `},` +
			`{"Effect":"Allow","Action":"ec2:CreateSecurityGroup","Resource":"arn:*:ec2:*:*:vpc/*"}]}`,
			nil, "ec2:CreateSecurityGroup", "arn:aws:ec2:us-east-1:123456789012:security-group/*"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			policy := strings.Replace(tc.policy, `"Statement":[`, `"Statement":[`+decodeOK+",", 1)
			_, url := enforcing(t, policy)
			_, err := ec2Client(t, url).CreateSecurityGroup(ctx, sgInput("g", tc.tags))
			if tc.deniedAction == "" {
				if err != nil {
					t.Fatalf("denied: %v", err)
				}
				return
			}
			m := decoded(t, url, err)
			if m.Context.Action != tc.deniedAction || m.Context.Resource != tc.deniedResource || m.Context.Principal.Arn != "arn:aws:iam::123456789012:user/tester" {
				t.Errorf("decoded %+v, want %s on %s", m.Context, tc.deniedAction, tc.deniedResource)
			}
		})
	}
}

// TestEnforceResourceTags: changes to a group are judged by its tags.
func TestEnforceResourceTags(t *testing.T) {
	ctx := context.Background()
	s, url := enforcing(t, allow(`["ec2:AuthorizeSecurityGroupIngress","ec2:CreateTags"]`, "*", `{"StringEquals":{"aws:ResourceTag/team":"a"}}`))
	if err := s.AddSecurityGroup("sg-0a", "a", "vpc-0demo000000000001"); err != nil {
		t.Fatal(err)
	}
	c := ec2Client(t, url)
	rule := func() error {
		_, err := c.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String("sg-0a"),
			IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(80), ToPort: aws.Int32(80), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("10.0.0.0/8")}}}}})
		return err
	}
	wantCode(t, rule(), "UnauthorizedOperation")
	// Tagging the untagged group is denied too: it has no team tag yet.
	_, err := c.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{"sg-0a"}, Tags: []ec2types.Tag{{Key: aws.String("team"), Value: aws.String("a")}}})
	wantCode(t, err, "UnauthorizedOperation")
	s.ec2.mu.Lock()
	g, _ := s.ec2.securityGroups.get("sg-0a")
	g.Tags = map[string]string{"team": "a"}
	s.ec2.mu.Unlock()
	if err := rule(); err != nil {
		t.Fatalf("tagged group: %v", err)
	}
}

func TestEnforceELB(t *testing.T) {
	ctx := context.Background()
	const user = "arn:aws:iam::123456789012:user/tester"
	create := func(c *elb.Client, tags ...elbtypes.Tag) error {
		_, err := c.CreateLoadBalancer(ctx, &elb.CreateLoadBalancerInput{LoadBalancerName: aws.String("clb"), Subnets: []string{"subnet-0demo00000000000a"},
			Listeners: []elbtypes.Listener{{Protocol: aws.String("TCP"), LoadBalancerPort: 80, InstancePort: aws.Int32(30080)}}, Tags: tags})
		return err
	}
	tag := elbtypes.Tag{Key: aws.String("kubernetes.io/cluster/demo"), Value: aws.String("owned")}
	t.Run("denied", func(t *testing.T) {
		_, url := enforcing(t, allow(`"elasticloadbalancing:Describe*"`, "*", ""))
		err := create(elbClient(t, url))
		wantAccessDenied(t, err, user+" is not authorized to perform: elasticloadbalancing:CreateLoadBalancer on resource: arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/clb because no identity-based policy allows the elasticloadbalancing:CreateLoadBalancer action")
	})
	t.Run("tags on create need AddTags", func(t *testing.T) {
		_, url := enforcing(t, allow(`"elasticloadbalancing:CreateLoadBalancer"`, "*", ""))
		c := elbClient(t, url)
		wantAccessDenied(t, create(c, tag), "perform: elasticloadbalancing:AddTags on resource: arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/clb ")
		if err := create(c); err != nil {
			t.Fatalf("untagged create: %v", err)
		}
	})
	t.Run("AddTags for CreateLoadBalancer only", func(t *testing.T) {
		_, url := enforcing(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"elasticloadbalancing:CreateLoadBalancer","Resource":"*"},`+
			`{"Effect":"Allow","Action":"elasticloadbalancing:AddTags","Resource":"*","Condition":{"StringEquals":{"elasticloadbalancing:CreateAction":"CreateLoadBalancer"}}}]}`)
		c := elbClient(t, url)
		if err := create(c, tag); err != nil {
			t.Fatalf("create: %v", err)
		}
		_, err := c.AddTags(ctx, &elb.AddTagsInput{LoadBalancerNames: []string{"clb"}, Tags: []elbtypes.Tag{{Key: aws.String("x"), Value: aws.String("y")}}})
		wantAccessDenied(t, err, "perform: elasticloadbalancing:AddTags on resource: arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/clb ")
	})
	t.Run("explicit deny", func(t *testing.T) {
		_, url := enforcing(t, allow(`"elasticloadbalancing:*"`, "*", ""), `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Action":"elasticloadbalancing:CreateLoadBalancer","Resource":"*"}]}`)
		wantAccessDenied(t, create(elbClient(t, url)), "loadbalancer/clb with an explicit deny in an identity-based policy")
	})
}

func TestEnforceELBv2ResourceTags(t *testing.T) {
	ctx := context.Background()
	_, url := enforcing(t, `{"Version":"2012-10-17","Statement":[`+
		`{"Effect":"Allow","Action":["elasticloadbalancing:CreateLoadBalancer","elasticloadbalancing:AddTags"],"Resource":"*"},`+
		`{"Effect":"Allow","Action":"elasticloadbalancing:DeleteLoadBalancer","Resource":"*","Condition":{"Null":{"aws:ResourceTag/kubernetes.io/cluster/demo":"false"}}}]}`)
	c := elbv2Client(t, url)
	arn := func(name string, tags ...elbv2types.Tag) *string {
		out, err := c.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String(name), Type: elbv2types.LoadBalancerTypeEnumNetwork,
			Subnets: []string{"subnet-0demo00000000000a"}, Tags: tags})
		if err != nil {
			t.Fatal(err)
		}
		return out.LoadBalancers[0].LoadBalancerArn
	}
	tagged := arn("tagged", elbv2types.Tag{Key: aws.String("kubernetes.io/cluster/demo"), Value: aws.String("shared")})
	untagged := arn("untagged")
	_, err := c.DeleteLoadBalancer(ctx, &elbv2.DeleteLoadBalancerInput{LoadBalancerArn: untagged})
	wantAccessDenied(t, err, "perform: elasticloadbalancing:DeleteLoadBalancer on resource: "+aws.ToString(untagged)+" because")
	if _, err := c.DeleteLoadBalancer(ctx, &elbv2.DeleteLoadBalancerInput{LoadBalancerArn: tagged}); err != nil {
		t.Fatalf("tagged: %v", err)
	}
}

func wantAccessDenied(t *testing.T, err error, substr string) {
	t.Helper()
	wantCode(t, err, "AccessDenied")
	var ae smithy.APIError
	errors.As(err, &ae)
	if !strings.HasPrefix(ae.ErrorMessage(), "User: ") || !strings.Contains(ae.ErrorMessage(), substr) {
		t.Fatalf("message %q, want it to contain %q", ae.ErrorMessage(), substr)
	}
}

func TestEnforceCredentials(t *testing.T) {
	ctx := context.Background()
	s, url := demo(t)
	if err := s.AddPrincipal(Principal{AccessKeyID: "AKIDOTHER", Policies: []string{allow(`"*"`, "*", "")}}); err != nil {
		t.Fatal(err)
	}
	_, err := ec2Client(t, url).DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
	wantCode(t, err, "AuthFailure")
	_, err = elbClient(t, url).DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{})
	wantCode(t, err, "InvalidClientTokenId")
	if err := s.AddPrincipal(Principal{AccessKeyID: "AKIDBAD", Policies: []string{`{"Statement":[]}`}}); err == nil || !strings.Contains(err.Error(), "MalformedPolicyDocument") {
		t.Errorf("bad policy: %v", err)
	}
	if err := s.AddPrincipal(Principal{AccessKeyID: "AKIDNONE"}); err == nil {
		t.Error("a principal without policies was accepted")
	}
}

// TestEnforceAssumeRole: a session acts with its role's policies, and IAM
// and STS are enforced too.
func TestEnforceAssumeRole(t *testing.T) {
	ctx := context.Background()
	_, url := enforcing(t, allow(`"sts:AssumeRole"`, "arn:aws:iam::123456789012:role/control-plane", ""))
	_, err := iamClient(t, url).GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("control-plane")})
	wantAccessDenied(t, err, "perform: iam:GetRole on resource: arn:aws:iam::123456789012:role/control-plane because")
	_, err = stsClient(t, url).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::123456789012:role/other"), RoleSessionName: aws.String("s")})
	wantAccessDenied(t, err, "perform: sts:AssumeRole on resource: arn:aws:iam::123456789012:role/other because")

	out, err := stsClient(t, url).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::123456789012:role/control-plane"), RoleSessionName: aws.String("s")})
	if err != nil {
		t.Fatal(err)
	}
	creds := out.Credentials
	cfg := sdkConfig(t)
	cfg.Credentials = credentials.NewStaticCredentialsProvider(aws.ToString(creds.AccessKeyId), aws.ToString(creds.SecretAccessKey), aws.ToString(creds.SessionToken))
	session := sts.NewFromConfig(cfg, func(o *sts.Options) { o.BaseEndpoint, o.HTTPClient = aws.String(url), HTTPClient() })
	id, err := session.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil || aws.ToString(id.Arn) != "arn:aws:sts::123456789012:assumed-role/control-plane/s" {
		t.Fatalf("GetCallerIdentity = %v, %v", id, err)
	}
	// The demo role may describe instances but not terminate them.
	ec2s := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint, o.HTTPClient = aws.String(url), HTTPClient() })
	if _, err := ec2s.DescribeInstances(ctx, &ec2.DescribeInstancesInput{}); err != nil {
		t.Fatalf("the role's session: %v", err)
	}
	_, err = ec2s.CreateSecurityGroup(ctx, sgInput("g", nil))
	wantCode(t, err, "UnauthorizedOperation")
}
