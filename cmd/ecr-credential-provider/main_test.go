package main

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	credv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"

	"github.com/awsccmctl/awsccmctl/internal/ecrcredential"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// binary is the ecr-credential-provider built once by TestMain, static as
// hack/build.sh builds it.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ecr-credential-provider-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, ecrcredential.BinaryName)
	build := exec.CommandContext(context.Background(), "go", "build", "-o", binary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// run runs the binary with stdin and env added to a clean environment.
func run(t *testing.T, stdin string, env awsemu.Env, args ...string) (stdout, stderr string, exitCode int) {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), binary, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env.List()...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		exitCode = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), exitCode
}

func request(image string) string {
	return `{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderRequest","image":"` + image + `"}`
}

// decodeResponse decodes stdout as the kubelet would, strictly: only a v1
// CredentialProviderResponse with v1's fields.
func decodeResponse(t *testing.T, stdout string) *credv1.CredentialProviderResponse {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := credv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	s := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{Strict: true})
	obj, gvk, err := s.Decode([]byte(stdout), nil, nil)
	if err != nil {
		t.Fatalf("stdout is not a strict v1 response: %v\n%s", err, stdout)
	}
	resp, ok := obj.(*credv1.CredentialProviderResponse)
	if !ok || gvk.GroupVersion() != credv1.SchemeGroupVersion {
		t.Fatalf("stdout decodes as %s %T", gvk, obj)
	}
	return resp
}

// TestRoundTripAgainstTheEmulator: the built binary, given the kubelet's
// request on stdin and the emulator through AWS_ENDPOINT_URL, prints a v1
// response keyed by the registry host with the token's user and password,
// cached per registry for half the token's 12 hours, as upstream; it
// makes one GetAuthorizationToken call and logs no credential. FIPS and
// dual-stack hosts work too: the configured endpoint wins over their
// endpoint variants.
func TestRoundTripAgainstTheEmulator(t *testing.T) {
	emu := awsemu.StartT(t, awsemu.DemoFixture())
	for _, host := range []string{
		"123456789012.dkr.ecr.us-west-2.amazonaws.com",
		"123456789012.dkr.ecr-fips.us-east-1.amazonaws.com",
		"123456789012.dkr-ecr.eu-west-1.on.aws",
		"123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn",
	} {
		t.Run(host, func(t *testing.T) {
			emu.ResetCalls()
			before := time.Now()
			stdout, stderr, code := run(t, request(host+"/team/app:v1"), emu.Env(), "--v=4")
			if code != 0 {
				t.Fatalf("exit %d\nstderr: %s", code, stderr)
			}
			resp := decodeResponse(t, stdout)
			if resp.CacheKeyType != credv1.RegistryPluginCacheKeyType {
				t.Errorf("cacheKeyType %q, want Registry", resp.CacheKeyType)
			}
			auth, ok := resp.Auth[host]
			if !ok || len(resp.Auth) != 1 {
				t.Fatalf("auth %v, want one entry keyed %s", resp.Auth, host)
			}
			if auth.Username != awsemu.ECRTokenUser || !strings.HasPrefix(auth.Password, "awsemu-ecr-password-") {
				t.Errorf("username %q password %q", auth.Username, auth.Password)
			}
			elapsed := time.Since(before)
			want := awsemu.ECRTokenLifetime / 2
			if d := resp.CacheDuration; d == nil || d.Duration > want || d.Duration < want-elapsed-2*time.Second {
				t.Errorf("cacheDuration %v, want %v less at most the run's %v", d, want, elapsed)
			}
			if n := emu.Calls("ecr", "GetAuthorizationToken"); n != 1 {
				t.Errorf("%d GetAuthorizationToken calls, want 1", n)
			}
			if strings.Contains(stderr, auth.Password) || strings.Contains(stderr, base64.StdEncoding.EncodeToString([]byte("AWS:"+auth.Password))) {
				t.Errorf("stderr holds the credential:\n%s", stderr)
			}
			if !strings.Contains(stderr, "Getting an ECR authorization token") {
				t.Errorf("no log at --v=4:\n%s", stderr)
			}
		})
	}
}

// TestServiceAccountTokenRoundTrip: the built binary, given the request
// a kubelet with tokenAttributes sends (the Pod's service-account token and
// the eks.amazonaws.com/ecr-role-arn annotation) and positional arguments
// from the config's args, assumes the annotated role with the token and
// gets the token as that role: the node's own key may not call ECR. The
// service-account token is never logged.
func TestServiceAccountTokenRoundTrip(t *testing.T) {
	const issuer, subject = "https://oidc.example.test/id/CLUSTER1", "system:serviceaccount:team:puller"
	f := awsemu.DemoFixture()
	f.IAM.Roles = append(f.IAM.Roles, awsemu.IAMRole{Name: "ecr-puller",
		AssumeRolePolicy: awsemu.PolicyDocument(awsemu.WebIdentityTrustPolicy(f.Account, issuer, "sts.amazonaws.com", subject)),
		InlinePolicies: map[string]awsemu.PolicyDocument{"pull": awsemu.PolicyDocument(
			`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ecr:GetAuthorizationToken","Resource":"*"}]}`)}})
	emu := awsemu.StartT(t, f)
	if err := emu.AddPrincipal(awsemu.Principal{AccessKeyID: awsemu.DefaultAccessKeyID,
		Policies: []string{`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:DescribeInstances","Resource":"*"}]}`}}); err != nil {
		t.Fatal(err)
	}
	const host = "123456789012.dkr.ecr.us-west-2.amazonaws.com"
	token := awsemu.WebIdentityToken(issuer, subject, []string{"sts.amazonaws.com"}, time.Now().Add(time.Hour))
	stdin := strings.TrimSuffix(request(host+"/team/app:v1"), "}") + `,"serviceAccountToken":"` + token +
		`","serviceAccountAnnotations":{"` + ecrcredential.RoleARNAnnotation + `":"arn:aws:iam::123456789012:role/ecr-puller"}}`
	stdout, stderr, code := run(t, stdin, emu.Env(), "get-credentials", "--v=4")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	if a := decodeResponse(t, stdout).Auth[host]; a.Username != awsemu.ECRTokenUser || a.Password == "" {
		t.Errorf("response %s", stdout)
	}
	if n := emu.Calls("sts", "AssumeRoleWithWebIdentity"); n != 1 {
		t.Errorf("%d AssumeRoleWithWebIdentity calls, want 1", n)
	}
	if strings.Contains(stderr, token) || !strings.Contains(stderr, "Assuming the service account's role") {
		t.Errorf("stderr holds the token, or no log at --v=4:\n%s", stderr)
	}
	// The same request without the token: the node's key, denied.
	if _, stderr, code := run(t, request(host+"/team/app:v1"), emu.Env()); code != 1 || !strings.Contains(stderr, "to the node's instance role") {
		t.Errorf("without the token: exit %d, %s", code, stderr)
	}
}

// TestErrors: each failure exits 1 with nothing on stdout and one message
// on stderr that names the image (or the request) and the reason: not an
// ECR image, a partition the host does not belong to, an AWS error with its
// code and request ID, and requests the kubelet would never send.
func TestErrors(t *testing.T) {
	emu := awsemu.StartT(t, awsemu.DemoFixture())
	const image = "123456789012.dkr.ecr.us-west-2.amazonaws.com/app:v1"
	cases := []struct {
		name, stdin string
		setup       func(t *testing.T)
		want        []string
	}{
		{"not an ECR image", request("docker.io/library/nginx:1.27"), nil,
			[]string{`ecr-credential-provider: image "docker.io/library/nginx:1.27" is not an ECR image: host "docker.io" is not <12-digit account>.dkr.ecr.<region>.<AWS domain>, public.ecr.aws or ecr-public.aws.com`}},
		{"region of another partition", request("123456789012.dkr.ecr.cn-north-1.amazonaws.com/app"), nil,
			[]string{"region cn-north-1 is not in the aws partition that amazonaws.com serves; its registries are under amazonaws.com.cn"}},
		{"AWS denies", request(image), func(t *testing.T) {
			if err := emu.AddPrincipal(awsemu.Principal{AccessKeyID: awsemu.DefaultAccessKeyID,
				Policies: []string{`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:DescribeInstances","Resource":"*"}]}`}}); err != nil {
				t.Fatal(err)
			}
		}, []string{`image "` + image + `": ECR GetAuthorizationToken in us-west-2 failed: AccessDeniedException (request ID a11ce5e0-`,
			"not authorized to perform: ecr:GetAuthorizationToken", "allow ecr:GetAuthorizationToken to the node's instance role (iam/node-policy.json)"}},
		{"v1beta1 request", strings.Replace(request(image), "/v1", "/v1beta1", 1), nil,
			[]string{"this plugin reads only apiVersion credentialprovider.kubelet.k8s.io/v1 kind CredentialProviderRequest"}},
		{"unknown field", strings.Replace(request(image), `"image"`, `"imag":"x","image"`, 1), nil,
			[]string{`request on stdin: strict decoding error: unknown field "imag"`}},
		{"no request", "", nil, []string{"request on stdin: not a JSON CredentialProviderRequest"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.setup != nil {
				c.setup(t)
			}
			stdout, stderr, code := run(t, c.stdin, emu.Env())
			if code != 1 || stdout != "" {
				t.Errorf("exit %d, stdout %q; want exit 1 and nothing on stdout", code, stdout)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestInstallSubcommand: `install --dir` copies the binary itself, mode
// 0755; a second run leaves it alone; a missing directory is an error
// saying what to mount.
func TestInstallSubcommand(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := run(t, "", nil, "install", "--dir", dir)
	target := filepath.Join(dir, ecrcredential.BinaryName)
	if code != 0 || !strings.Contains(stdout, target+": installed") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	want, _ := os.ReadFile(binary)
	got, err := os.ReadFile(target)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("installed file differs from the binary (%v)", err)
	}
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o755 {
		t.Errorf("mode %v, want 0755", st.Mode())
	}
	if stdout, _, code := run(t, "", nil, "install", "--dir", dir); code != 0 || !strings.Contains(stdout, "already up to date") {
		t.Errorf("second install: exit %d %s", code, stdout)
	}
	if _, stderr, code := run(t, "", nil, "install", "--dir", filepath.Join(dir, "missing")); code != 1 || !strings.Contains(stderr, "mount the kubelet's --image-credential-provider-bin-dir there") {
		t.Errorf("missing dir: exit %d %s", code, stderr)
	}
}

// TestWaitEndsOnSIGTERM: `install --wait`, the DaemonSet's command, keeps
// running after installing and exits 0 when the kubelet stops the Pod.
func TestWaitEndsOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.CommandContext(context.Background(), binary, "install", "--dir", dir, "--wait")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, ecrcredential.BinaryName)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(target); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("not installed after 30s: %s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("exited before SIGTERM: %v\n%s", err, out.String())
	case <-time.After(300 * time.Millisecond):
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after the signal: %v\n%s", err, out.String())
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("still running 10s after the signal")
	}
}

// TestStatic: the binary runs on any node's host: statically linked.
func TestStatic(t *testing.T) {
	f, err := elf.Open(binary)
	if err != nil {
		t.Fatalf("not an ELF binary: %v", err)
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("dynamically linked: build with CGO_ENABLED=0")
		}
	}
}
