package ecrcredential

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	credv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// Tests of the plugin as the binary runs it (NewCommand with its real
// clients) against the in-process emulator, through AWS_ENDPOINT_URL.

const (
	privateImage = "123456789012.dkr.ecr.us-west-2.amazonaws.com/team/app:v1"
	issuer       = "https://oidc.example.test/id/CLUSTER1"
	subject      = "system:serviceaccount:team:puller"
	audience     = "sts.amazonaws.com"
	roleArn      = "arn:aws:iam::123456789012:role/"
)

// emulator starts the demo with two roles tokens of issuer for audience
// and subject may assume: "ecr-puller", allowed ecr:GetAuthorizationToken
// and ECR Public's token, and "no-ecr", allowed nothing of ECR. The
// process's AWS environment points at it.
func emulator(t *testing.T) *awsemu.Emulator {
	t.Helper()
	f := awsemu.DemoFixture()
	trust := awsemu.PolicyDocument(awsemu.WebIdentityTrustPolicy(f.Account, issuer, audience, subject))
	pull := awsemu.PolicyDocument(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ecr:GetAuthorizationToken","ecr-public:GetAuthorizationToken","sts:GetServiceBearerToken"],"Resource":"*"}]}`)
	other := awsemu.PolicyDocument(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:DescribeInstances","Resource":"*"}]}`)
	f.IAM.Roles = append(f.IAM.Roles,
		awsemu.IAMRole{Name: "ecr-puller", AssumeRolePolicy: trust, InlinePolicies: map[string]awsemu.PolicyDocument{"pull": pull}},
		awsemu.IAMRole{Name: "no-ecr", AssumeRolePolicy: trust, InlinePolicies: map[string]awsemu.PolicyDocument{"other": other}})
	emu := awsemu.StartT(t, f)
	emu.Env().Set(t)
	t.Setenv(RoleARNEnv, "")
	return emu
}

// nodePolicy puts the node's credentials (the emulator's default key)
// under policy.
func nodePolicy(t *testing.T, emu *awsemu.Emulator, policy string) {
	t.Helper()
	if err := emu.AddPrincipal(awsemu.Principal{AccessKeyID: awsemu.DefaultAccessKeyID,
		Arn: "arn:aws:sts::123456789012:assumed-role/nodes/i-0a1b2c3d4e5f60001", Policies: []string{policy}}); err != nil {
		t.Fatal(err)
	}
}

const (
	allowPrivate = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ecr:GetAuthorizationToken","Resource":"*"}]}`
	allowNothing = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:DescribeInstances","Resource":"*"}]}`
)

// request is the kubelet's request for image, with a service-account
// token and annotations when token is set.
func request(t *testing.T, image, token string, annotations map[string]string) string {
	t.Helper()
	req := map[string]any{"apiVersion": "credentialprovider.kubelet.k8s.io/v1", "kind": "CredentialProviderRequest", "image": image}
	if token != "" {
		req["serviceAccountToken"] = token
	}
	if annotations != nil {
		req["serviceAccountAnnotations"] = annotations
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// saToken is a current projected token of the test's service account.
func saToken(sub string) string {
	return awsemu.WebIdentityToken(issuer, sub, []string{audience}, time.Now().Add(time.Hour))
}

// plugin runs the command as the kubelet runs the binary, with args; it
// returns the decoded response, or the error and stderr.
func plugin(t *testing.T, stdin string, args ...string) (*credv1.CredentialProviderResponse, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := NewCommand(Streams{In: strings.NewReader(stdin), Out: &out, Err: &errb}, CommandOptions{})
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		if out.Len() != 0 {
			t.Errorf("stdout on error: %s", out.String())
		}
		return nil, errb.String(), err
	}
	scheme := runtime.NewScheme()
	if err := credv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	obj, _, err := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{Strict: true}).Decode(out.Bytes(), nil, nil)
	if err != nil {
		t.Fatalf("stdout is not a strict v1 response: %v\n%s", err, out.String())
	}
	return obj.(*credv1.CredentialProviderResponse), errb.String(), nil
}

// TestCacheDurationIsHalfTheTokensLifetime: a 12-hour ECR token is cached
// for 6 hours, as upstream's provider returns, not 11h30m.
func TestCacheDurationIsHalfTheTokensLifetime(t *testing.T) {
	emulator(t)
	before := time.Now()
	resp, _, err := plugin(t, request(t, privateImage, "", nil))
	if err != nil {
		t.Fatal(err)
	}
	want := awsemu.ECRTokenLifetime / 2
	slack := time.Since(before)/2 + time.Second
	if d := resp.CacheDuration; d == nil || d.Duration > want || d.Duration < want-slack {
		t.Errorf("cacheDuration %v, want %v (less at most %v)", d, want, slack)
	}
}

// TestPositionalArgumentsAreIgnored: arguments the CredentialProviderConfig
// passes (Kubernetes' own example has `args: [get-credentials]`) do not
// fail the pull, as upstream ignores them.
func TestPositionalArgumentsAreIgnored(t *testing.T) {
	emulator(t)
	for _, args := range [][]string{{"get-credentials"}, {"get-credentials", "extra"}} {
		resp, stderr, err := plugin(t, request(t, privateImage, "", nil), args...)
		if err != nil {
			t.Fatalf("args %v: %v\n%s", args, err, stderr)
		}
		if _, ok := resp.Auth["123456789012.dkr.ecr.us-west-2.amazonaws.com"]; !ok {
			t.Errorf("args %v: auth %v", args, resp.Auth)
		}
	}
}

// TestServiceAccountToken: with the kubelet's service-account token, the
// token comes from the role the service account's annotation (or else
// AWS_ECR_ROLE_ARN) names, assumed with AssumeRoleWithWebIdentity, so
// that role's policy decides, not the node's; without a role, or without
// a token, the node's credentials are used, as upstream does.
func TestServiceAccountToken(t *testing.T) {
	puller := map[string]string{RoleARNAnnotation: roleArn + "ecr-puller"}
	noECR := map[string]string{RoleARNAnnotation: roleArn + "no-ecr"}
	for _, c := range []struct {
		name        string
		node        string // the node's policy
		env         string // AWS_ECR_ROLE_ARN
		token       string
		annotations map[string]string
		assumes     int    // AssumeRoleWithWebIdentity calls
		wantErr     string // "" = success
	}{
		{"the annotated role pulls where the node may not", allowNothing, "", saToken(subject), puller, 1, ""},
		{"the annotated role's policy denies although the node may", allowPrivate, "", saToken(subject), noECR, 1,
			"assumed-role/no-ecr/ecr-credential-provider is not authorized to perform: ecr:GetAuthorizationToken"},
		{"the denial names the role to fix", allowPrivate, "", saToken(subject), noECR, 1,
			"allow ecr:GetAuthorizationToken to the role the service account names (eks.amazonaws.com/ecr-role-arn)"},
		{"AWS_ECR_ROLE_ARN without the annotation", allowPrivate, roleArn + "no-ecr", saToken(subject), map[string]string{}, 1, "assumed-role/no-ecr/"},
		{"the annotation wins over AWS_ECR_ROLE_ARN", allowNothing, roleArn + "no-ecr", saToken(subject), puller, 1, ""},
		{"a token and no role: the node's credentials", allowPrivate, "", saToken(subject), nil, 0, ""},
		{"an empty annotation: the node's credentials", allowPrivate, roleArn + "no-ecr", saToken(subject), map[string]string{RoleARNAnnotation: ""}, 0, ""},
		{"no token: the node's credentials", allowPrivate, roleArn + "no-ecr", "", puller, 0, ""},
		{"a service account the trust policy refuses", allowPrivate, "", saToken("system:serviceaccount:team:other"), puller, 1,
			`role arn:aws:iam::123456789012:role/ecr-puller (from the service account's annotation eks.amazonaws.com/ecr-role-arn): STS AssumeRoleWithWebIdentity in us-west-2 failed: AccessDenied`},
		{"an expired token", allowPrivate, "", awsemu.WebIdentityToken(issuer, subject, []string{audience}, time.Now().Add(-time.Minute)), puller, 1, "ExpiredTokenException"},
		{"an annotation that is no role ARN", allowPrivate, "", saToken(subject), map[string]string{RoleARNAnnotation: "ecr-puller"}, 0,
			`the service account's annotation eks.amazonaws.com/ecr-role-arn is "ecr-puller", not an IAM role ARN (arn:aws:iam::<account>:role/<name>)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			emu := emulator(t)
			nodePolicy(t, emu, c.node)
			t.Setenv(RoleARNEnv, c.env)
			resp, stderr, err := plugin(t, request(t, privateImage, c.token, c.annotations), "--v=2")
			if n := emu.Calls("sts", "AssumeRoleWithWebIdentity"); n != c.assumes {
				t.Errorf("%d AssumeRoleWithWebIdentity calls, want %d", n, c.assumes)
			}
			if c.token != "" && strings.Contains(stderr+errString(err), c.token) {
				t.Errorf("the service-account token is in the output:\n%s %v", stderr, err)
			}
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), privateImage) {
					t.Fatalf("error %v, want one naming the image with %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			if resp.CacheKeyType != credv1.RegistryPluginCacheKeyType {
				t.Errorf("cacheKeyType %q: the kubelet adds the service account to a Registry key itself", resp.CacheKeyType)
			}
			if a := resp.Auth["123456789012.dkr.ecr.us-west-2.amazonaws.com"]; a.Username != awsemu.ECRTokenUser || a.Password == "" {
				t.Errorf("auth %v", resp.Auth)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestECRPublic: public.ecr.aws and ecr-public.aws.com images get ECR
// Public's token from us-east-1 whatever the node's region, keyed by their
// host, with the generated node policy
// (iam/node-policy.json) as the node's; without sts:GetServiceBearerToken
// AWS refuses and the error says which permissions the node lacks. With a
// service-account token the annotated role gets it.
func TestECRPublic(t *testing.T) {
	node, err := awsapi.NodePolicy().JSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range PublicHosts {
		t.Run(host, func(t *testing.T) {
			emu := emulator(t)
			nodePolicy(t, emu, string(node))
			// A node in another region still asks us-east-1: the
			// emulator's ECR Public answers nowhere else.
			t.Setenv("AWS_REGION", "eu-west-1")
			before := time.Now()
			resp, stderr, err := plugin(t, request(t, host+"/eks-distro/kubernetes/pause:3.10", "", nil))
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			a, ok := resp.Auth[host]
			if !ok || len(resp.Auth) != 1 || a.Username != awsemu.ECRTokenUser || !strings.HasPrefix(a.Password, "awsemu-ecr-public-password-") {
				t.Errorf("auth %v, want ECR Public's token keyed %s", resp.Auth, host)
			}
			want := awsemu.ECRTokenLifetime / 2
			if d := resp.CacheDuration; d == nil || d.Duration > want || d.Duration < want-time.Since(before)-time.Second {
				t.Errorf("cacheDuration %v, want about %v", d, want)
			}
			if n, m := emu.Calls("ecr-public", "GetAuthorizationToken"), emu.Calls("ecr", "GetAuthorizationToken"); n != 1 || m != 0 {
				t.Errorf("%d ECR Public and %d ECR calls, want 1 and 0", n, m)
			}
		})
	}
	t.Run("no bearer-token permission", func(t *testing.T) {
		emu := emulator(t)
		nodePolicy(t, emu, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ecr-public:GetAuthorizationToken","Resource":"*"}]}`)
		_, _, err := plugin(t, request(t, "public.ecr.aws/nginx/nginx:1.27", "", nil))
		for _, want := range []string{`image "public.ecr.aws/nginx/nginx:1.27": ECR Public GetAuthorizationToken in us-east-1 failed: AccessDeniedException`,
			"not authorized to perform: sts:GetServiceBearerToken",
			"allow ecr-public:GetAuthorizationToken and sts:GetServiceBearerToken to the node's instance role (iam/node-policy.json)"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v, want %q", err, want)
			}
		}
	})
	t.Run("service-account role", func(t *testing.T) {
		emu := emulator(t)
		nodePolicy(t, emu, allowNothing)
		_, stderr, err := plugin(t, request(t, "public.ecr.aws/nginx/nginx:1.27", saToken(subject), map[string]string{RoleARNAnnotation: roleArn + "ecr-puller"}))
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		if n := emu.Calls("sts", "AssumeRoleWithWebIdentity"); n != 1 {
			t.Errorf("%d AssumeRoleWithWebIdentity calls, want 1", n)
		}
	})
}
