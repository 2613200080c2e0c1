package awsemu

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
)

func ecrClient(t testing.TB, url string) *ecr.Client {
	return ecr.NewFromConfig(sdkConfig(t), func(o *ecr.Options) {
		o.BaseEndpoint = aws.String(url)
		o.HTTPClient = HTTPClient()
	})
}

// TestECRGetAuthorizationToken: the real SDK client gets a token
// "AWS:<password>" valid for 12 hours, with the caller's registry as proxy
// endpoint, and one per registry asked for.
func TestECRGetAuthorizationToken(t *testing.T) {
	srv, url := demo(t)
	c := ecrClient(t, url)
	before := time.Now()
	out, err := c.GetAuthorizationToken(context.Background(), &ecr.GetAuthorizationTokenInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.AuthorizationData) != 1 {
		t.Fatalf("%d authorization data, want 1", len(out.AuthorizationData))
	}
	d := out.AuthorizationData[0]
	raw, err := base64.StdEncoding.DecodeString(aws.ToString(d.AuthorizationToken))
	if err != nil {
		t.Fatal(err)
	}
	if user, pw, ok := strings.Cut(string(raw), ":"); !ok || user != ECRTokenUser || pw == "" {
		t.Errorf("token decodes to %q, want AWS:<password>", raw)
	}
	if d.ExpiresAt == nil || d.ExpiresAt.Before(before.Add(ECRTokenLifetime-time.Second)) || d.ExpiresAt.After(time.Now().Add(ECRTokenLifetime)) {
		t.Errorf("expiresAt %v, want about %v from now", d.ExpiresAt, ECRTokenLifetime)
	}
	if want := "https://" + srv.common.account + ".dkr.ecr.us-east-1.amazonaws.com"; aws.ToString(d.ProxyEndpoint) != want {
		t.Errorf("proxyEndpoint %q, want %q", aws.ToString(d.ProxyEndpoint), want)
	}
	two, err := c.GetAuthorizationToken(context.Background(), &ecr.GetAuthorizationTokenInput{RegistryIds: []string{"111122223333", "444455556666"}}) //nolint:staticcheck // SA1019: the emulator still answers the deprecated field as ECR does
	if err != nil {
		t.Fatal(err)
	}
	if len(two.AuthorizationData) != 2 || !strings.HasPrefix(aws.ToString(two.AuthorizationData[1].ProxyEndpoint), "https://444455556666.dkr.ecr.") {
		t.Errorf("two registries: %+v", two.AuthorizationData)
	}
	_, err = c.GetAuthorizationToken(context.Background(), &ecr.GetAuthorizationTokenInput{RegistryIds: []string{"12"}}) //nolint:staticcheck // SA1019: the emulator still validates the deprecated field as ECR does
	if apiCode(err) != "InvalidParameterException" {
		t.Errorf("bad registry ID: %v, want InvalidParameterException", err)
	}
	if n := srv.Calls("ecr", "GetAuthorizationToken"); n != 3 {
		t.Errorf("%d calls counted, want 3", n)
	}
}

// TestECRFaultsAndErrors: injected faults come back in the JSON error shape
// with the request ID the SDK reports; unknown targets and wrong content
// types are refused as AWS does.
func TestECRFaultsAndErrors(t *testing.T) {
	srv, url := demo(t)
	srv.InjectFault(Fault{Service: "ecr", Action: "GetAuthorizationToken", Code: "ServerException", HTTPStatus: http.StatusInternalServerError, Remaining: 3})
	_, err := ecrClient(t, url).GetAuthorizationToken(context.Background(), &ecr.GetAuthorizationTokenInput{})
	if apiCode(err) != "ServerException" {
		t.Fatalf("faulted call: %v, want ServerException", err)
	}
	var re *awshttp.ResponseError
	if !errors.As(err, &re) || !strings.HasPrefix(re.ServiceRequestID(), "a11ce5e0-") {
		t.Errorf("no request ID in %v", err)
	}
	if n := srv.Calls("ecr", "GetAuthorizationToken"); n != 3 {
		t.Errorf("%d attempts, want 3 (the SDK retries a 500)", n)
	}

	post := func(target, contentType, body string) (int, string) {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader([]byte(body)))
		req.Header.Set("X-Amz-Target", target)
		req.Header.Set("Content-Type", contentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct{ name, target, ct, body, want string }{
		{"unknown operation", "AmazonEC2ContainerRegistry_V20150921.PutImage", "application/x-amz-json-1.1", "{}", `"__type":"UnknownOperationException"`},
		{"unknown service", "AmazonSomething.GetAuthorizationToken", "application/x-amz-json-1.1", "{}", `"__type":"UnknownOperationException"`},
		{"wrong content type", "AmazonEC2ContainerRegistry_V20150921.GetAuthorizationToken", "application/json", "{}", `"__type":"SerializationException"`},
		{"unknown field", "AmazonEC2ContainerRegistry_V20150921.GetAuthorizationToken", "application/x-amz-json-1.1", `{"registryId":"x"}`, `"__type":"SerializationException"`},
	} {
		if status, body := post(c.target, c.ct, c.body); status != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s, want 400 with %s", c.name, status, body, c.want)
		}
	}
}

// TestEnforceECR: with IAM enforcement on, GetAuthorizationToken needs
// ecr:GetAuthorizationToken; a denial is AccessDeniedException naming the
// action, an unknown key UnrecognizedClientException.
func TestEnforceECR(t *testing.T) {
	srv, url := demo(t)
	if err := srv.AddPrincipal(Principal{AccessKeyID: "AKIDEXAMPLE", Policies: []string{
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:Describe*","Resource":"*"}]}`}}); err != nil {
		t.Fatal(err)
	}
	_, err := ecrClient(t, url).GetAuthorizationToken(context.Background(), &ecr.GetAuthorizationTokenInput{})
	if apiCode(err) != "AccessDeniedException" || !strings.Contains(err.Error(), "ecr:GetAuthorizationToken") {
		t.Errorf("denied call: %v, want AccessDeniedException naming ecr:GetAuthorizationToken", err)
	}
	if err := srv.AddPrincipal(Principal{AccessKeyID: "AKIDEXAMPLE", Policies: []string{
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ecr:GetAuthorizationToken","Resource":"*"}]}`}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ecrClient(t, url).GetAuthorizationToken(context.Background(), &ecr.GetAuthorizationTokenInput{}); err != nil {
		t.Errorf("allowed call: %v", err)
	}
	other := ecr.NewFromConfig(sdkConfig(t), func(o *ecr.Options) {
		o.BaseEndpoint = aws.String(url)
		o.HTTPClient = HTTPClient()
		o.Credentials = credentials.NewStaticCredentialsProvider("AKIDUNKNOWN", "secret", "")
	})
	if _, err := other.GetAuthorizationToken(context.Background(), &ecr.GetAuthorizationTokenInput{}); apiCode(err) != "UnrecognizedClientException" {
		t.Errorf("unknown key: %v, want UnrecognizedClientException", err)
	}
}
