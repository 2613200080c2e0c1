package awsemu

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

const (
	testIssuer  = "https://oidc.example.test/id/CLUSTER1"
	testSubject = "system:serviceaccount:team:puller"
)

// webIdentityFixture is the demo with a role "ecr-puller" that tokens of
// testIssuer for audience sts.amazonaws.com and testSubject may assume,
// allowed ecr:GetAuthorizationToken, and a role "no-ecr" with the same
// trust and no ECR permission.
func webIdentityFixture() *Fixture {
	f := DemoFixture()
	trust := PolicyDocument(WebIdentityTrustPolicy(f.Account, testIssuer, "sts.amazonaws.com", testSubject))
	allowECR := PolicyDocument(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ecr:GetAuthorizationToken","Resource":"*"}]}`)
	allowEC2 := PolicyDocument(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:DescribeInstances","Resource":"*"}]}`)
	f.IAM.Roles = append(f.IAM.Roles,
		IAMRole{Name: "ecr-puller", AssumeRolePolicy: trust, InlinePolicies: map[string]PolicyDocument{"pull": allowECR}},
		IAMRole{Name: "no-ecr", AssumeRolePolicy: trust, InlinePolicies: map[string]PolicyDocument{"ec2": allowEC2}})
	return f
}

// TestAssumeRoleWithWebIdentity: the real SDK's unsigned call gets the
// role's credentials for a token its trust policy accepts, and with IAM
// enforcement on those credentials act as the role: ECR answers the
// puller role, refuses the role without ECR permission and the caller
// whose own policy lacks it. Tokens the trust policy or STS refuse get
// AWS's errors.
func TestAssumeRoleWithWebIdentity(t *testing.T) {
	srv, url := start(t, webIdentityFixture())
	// The static caller may not call ECR (nor STS: the call is unsigned).
	if err := srv.AddPrincipal(Principal{AccessKeyID: "AKIDEXAMPLE", // sdkConfig's key
		Policies: []string{`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:DescribeInstances","Resource":"*"}]}`}}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	client := stsClient(t, url)
	token := WebIdentityToken(testIssuer, testSubject, []string{"sts.amazonaws.com"}, time.Now().Add(time.Hour))
	assume := func(role, token string) (*sts.AssumeRoleWithWebIdentityOutput, error) {
		return client.AssumeRoleWithWebIdentity(ctx, &sts.AssumeRoleWithWebIdentityInput{
			RoleArn: aws.String("arn:aws:iam::123456789012:role/" + role), RoleSessionName: aws.String("ecr-credential-provider"),
			WebIdentityToken: aws.String(token),
		})
	}
	ecrAs := func(c *sts.AssumeRoleWithWebIdentityOutput) error {
		cl := ecr.NewFromConfig(sdkConfig(t), func(o *ecr.Options) {
			o.BaseEndpoint, o.HTTPClient = aws.String(url), HTTPClient()
			if c != nil {
				o.Credentials = credentials.NewStaticCredentialsProvider(aws.ToString(c.Credentials.AccessKeyId),
					aws.ToString(c.Credentials.SecretAccessKey), aws.ToString(c.Credentials.SessionToken))
			}
		})
		_, err := cl.GetAuthorizationToken(ctx, &ecr.GetAuthorizationTokenInput{})
		return err
	}

	out, err := assume("ecr-puller", token)
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(out.AssumedRoleUser.Arn); got != "arn:aws:sts::123456789012:assumed-role/ecr-puller/ecr-credential-provider" {
		t.Errorf("assumed role %q", got)
	}
	if aws.ToString(out.SubjectFromWebIdentityToken) != testSubject || aws.ToString(out.Audience) != "sts.amazonaws.com" ||
		aws.ToString(out.Provider) != strings.TrimPrefix(testIssuer, "https://") || out.Credentials.Expiration == nil {
		t.Errorf("result %+v %+v", out, out.Credentials)
	}
	if err := ecrAs(out); err != nil {
		t.Errorf("ECR as the puller role: %v", err)
	}
	wantCode(t, ecrAs(nil), "AccessDeniedException")
	noECR, err := assume("no-ecr", token)
	if err != nil {
		t.Fatal(err)
	}
	err = ecrAs(noECR)
	wantCode(t, err, "AccessDeniedException")
	if err == nil || !strings.Contains(err.Error(), "assumed-role/no-ecr/ecr-credential-provider is not authorized to perform: ecr:GetAuthorizationToken") {
		t.Errorf("no-ecr: %v", err)
	}

	for _, c := range []struct{ name, role, token, code string }{
		{"other audience", "ecr-puller", WebIdentityToken(testIssuer, testSubject, []string{"other"}, time.Now().Add(time.Hour)), "AccessDenied"},
		{"other service account", "ecr-puller", WebIdentityToken(testIssuer, "system:serviceaccount:team:other", []string{"sts.amazonaws.com"}, time.Now().Add(time.Hour)), "AccessDenied"},
		{"other issuer", "ecr-puller", WebIdentityToken("https://other.example.test", testSubject, []string{"sts.amazonaws.com"}, time.Now().Add(time.Hour)), "AccessDenied"},
		{"role trusting EC2 only", "control-plane", token, "AccessDenied"},
		{"no such role", "missing", token, "AccessDenied"},
		{"expired", "ecr-puller", WebIdentityToken(testIssuer, testSubject, []string{"sts.amazonaws.com"}, time.Now().Add(-time.Minute)), "ExpiredTokenException"},
		{"not a JWT", "ecr-puller", "not-a-jwt-at-all", "InvalidIdentityToken"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := assume(c.role, c.token)
			wantCode(t, err, c.code)
		})
	}
}
