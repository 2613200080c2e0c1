package awsemu

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecrpublic"
)

func ecrPublicClient(t testing.TB, url string) *ecrpublic.Client {
	return ecrpublic.NewFromConfig(sdkConfig(t), func(o *ecrpublic.Options) {
		o.BaseEndpoint = aws.String(url)
		o.HTTPClient = HTTPClient()
	})
}

// TestECRPublicGetAuthorizationToken: the real ecrpublic client gets one
// "AWS:<password>" token valid for 12 hours, counted as ecr-public, in
// us-east-1 only; with
// IAM enforcement on, it needs both ecr-public:GetAuthorizationToken and
// sts:GetServiceBearerToken for ecr-public.amazonaws.com, as AWS documents.
func TestECRPublicGetAuthorizationToken(t *testing.T) {
	srv, url := demo(t)
	c := ecrPublicClient(t, url)
	ctx := context.Background()
	before := time.Now()
	out, err := c.GetAuthorizationToken(ctx, &ecrpublic.GetAuthorizationTokenInput{})
	if err != nil {
		t.Fatal(err)
	}
	d := out.AuthorizationData
	if d == nil {
		t.Fatal("no authorization data")
	}
	raw, err := base64.StdEncoding.DecodeString(aws.ToString(d.AuthorizationToken))
	if user, pw, ok := strings.Cut(string(raw), ":"); err != nil || !ok || user != ECRTokenUser || !strings.HasPrefix(pw, "awsemu-ecr-public-password-") {
		t.Errorf("token decodes to %q (%v)", raw, err)
	}
	if d.ExpiresAt == nil || d.ExpiresAt.Before(before.Add(ECRTokenLifetime-time.Second)) || d.ExpiresAt.After(time.Now().Add(ECRTokenLifetime)) {
		t.Errorf("expiresAt %v, want about %v from now", d.ExpiresAt, ECRTokenLifetime)
	}
	if n := srv.Calls("ecr-public", "GetAuthorizationToken"); n != 1 {
		t.Errorf("%d ecr-public calls counted, want 1", n)
	}
	_, err = c.GetAuthorizationToken(ctx, &ecrpublic.GetAuthorizationTokenInput{}, func(o *ecrpublic.Options) { o.Region = "us-west-2" })
	wantCode(t, err, "UnsupportedCommandException")

	for _, c2 := range []struct {
		name, policy, denied string
	}{
		{"ecr-public only", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ecr-public:GetAuthorizationToken","Resource":"*"}]}`, "sts:GetServiceBearerToken"},
		{"bearer token only", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sts:GetServiceBearerToken","Resource":"*"}]}`, "ecr-public:GetAuthorizationToken"},
		{"bearer token for another service", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ecr-public:GetAuthorizationToken","sts:GetServiceBearerToken"],"Resource":"*","Condition":{"StringEquals":{"sts:AWSServiceName":"codeartifact.amazonaws.com"}}}]}`, "ecr-public:GetAuthorizationToken"},
		{"both", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ecr-public:GetAuthorizationToken","sts:GetServiceBearerToken"],"Resource":"*"}]}`, ""},
	} {
		t.Run(c2.name, func(t *testing.T) {
			if err := srv.AddPrincipal(Principal{AccessKeyID: "AKIDEXAMPLE", Policies: []string{c2.policy}}); err != nil {
				t.Fatal(err)
			}
			_, err := c.GetAuthorizationToken(ctx, &ecrpublic.GetAuthorizationTokenInput{})
			if c2.denied == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantCode(t, err, "AccessDeniedException")
			if err == nil || !strings.Contains(err.Error(), "not authorized to perform: "+c2.denied) {
				t.Errorf("error %v, want it to name %s", err, c2.denied)
			}
		})
	}
}
