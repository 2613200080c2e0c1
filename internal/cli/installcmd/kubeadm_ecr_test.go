package installcmd

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	kubeletv1 "k8s.io/kubelet/config/v1"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/ecrcredential"
)

// TestKubeadmECRCredentialProvider: --ecr-credential-provider puts the
// kubelet's credential provider flags in Init- and JoinConfiguration, at the
// default paths or the ones given; --merge adds them to a user's file.
func TestKubeadmECRCredentialProvider(t *testing.T) {
	out, err := runKubeadm(t, kubeadmDeps{}, "--kubernetes-version", "v1.37.1", "--ecr-credential-provider")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  - name: image-credential-provider-config\n    value: " + ecrcredential.DefaultConfigPath + "\n",
		"  - name: image-credential-provider-bin-dir\n    value: " + ecrcredential.DefaultBinDir + "\n",
	} {
		if strings.Count(out, want) != 2 {
			t.Errorf("Init and Join lack %q:\n%s", want, out)
		}
	}
	out, err = runKubeadm(t, kubeadmDeps{}, "--kubernetes-version", "v1.30.4", "--ecr-credential-provider",
		"--credential-provider-config", "/opt/ecr/config.yaml", "--credential-provider-bin-dir", "/opt/ecr/bin")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "    image-credential-provider-config: /opt/ecr/config.yaml\n") != 2 || strings.Count(out, "    image-credential-provider-bin-dir: /opt/ecr/bin\n") != 2 {
		t.Errorf("v1beta3 map form with the given paths missing:\n%s", out)
	}
	merged, err := runKubeadm(t, kubeadmDeps{}, "--merge", filepath.Join("..", "..", "install", "kubeadmconfig", "testdata", "merge", "valid-v1beta4-join.yaml"), "--ecr-credential-provider")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(merged, "- name: image-credential-provider-config\n") || !strings.Contains(merged, "- name: image-credential-provider-bin-dir\n") {
		t.Errorf("merged file lacks the kubelet flags:\n%s", merged)
	}
}

// TestKubeadmPrintCredentialProviderConfig: the printed file is a
// kubelet.config.k8s.io/v1 CredentialProviderConfig, decoded strictly, that
// runs ecr-credential-provider over v1 for every ECR host form.
func TestKubeadmPrintCredentialProviderConfig(t *testing.T) {
	out, err := runKubeadm(t, kubeadmDeps{}, "--print-credential-provider-config")
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := kubeletv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	yamlSerializer := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{Yaml: true, Strict: true})
	obj, gvk, err := yamlSerializer.Decode([]byte(out), nil, nil)
	if err != nil {
		t.Fatalf("not a strict CredentialProviderConfig: %v\n%s", err, out)
	}
	cfg, ok := obj.(*kubeletv1.CredentialProviderConfig)
	if !ok || gvk.GroupVersion() != kubeletv1.SchemeGroupVersion {
		t.Fatalf("decoded %s %T", gvk, obj)
	}
	if len(cfg.Providers) != 1 {
		t.Fatalf("%d providers, want 1", len(cfg.Providers))
	}
	p := cfg.Providers[0]
	if p.Name != ecrcredential.BinaryName || p.APIVersion != "credentialprovider.kubelet.k8s.io/v1" ||
		p.DefaultCacheDuration == nil || p.DefaultCacheDuration.Duration != 12*time.Hour || !slices.Equal(p.MatchImages, ecrcredential.MatchImages()) {
		t.Errorf("provider %+v", p)
	}
	for _, want := range []string{"*.dkr.ecr.*.amazonaws.com", "*.dkr-ecr.*.on.aws", "*.dkr.ecr.*.amazonaws.com.cn", "*.dkr.ecr-fips.*.amazonaws.com", "*.dkr.ecr.*.amazonaws.eu", "*.dkr.ecr.*.c2s.ic.gov"} {
		if !slices.Contains(p.MatchImages, want) {
			t.Errorf("matchImages lacks %s", want)
		}
	}
}

// TestKubeadmPrintCredentialProviderConfigWithTokens: with an audience the
// printed configuration has the tokenAttributes stanza the kubelet
// validates (audience, cacheType, requireServiceAccount) passing the
// role annotation along, optional by default and required on request.
func TestKubeadmPrintCredentialProviderConfigWithTokens(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := kubeletv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	yamlSerializer := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{Yaml: true, Strict: true})
	for _, tc := range []struct {
		name     string
		args     []string
		require  bool
		required []string
		optional []string
	}{
		{"optional role", []string{"--credential-provider-service-account-token-audience", "sts.amazonaws.com"}, false, nil, []string{ecrcredential.RoleARNAnnotation}},
		{"required role", []string{"--credential-provider-service-account-token-audience", "sts.amazonaws.com", "--credential-provider-require-service-account-role"}, true, []string{ecrcredential.RoleARNAnnotation}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runKubeadm(t, kubeadmDeps{}, append([]string{"--print-credential-provider-config"}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			obj, _, err := yamlSerializer.Decode([]byte(out), nil, nil)
			if err != nil {
				t.Fatalf("not a strict CredentialProviderConfig: %v\n%s", err, out)
			}
			p := obj.(*kubeletv1.CredentialProviderConfig).Providers[0]
			a := p.TokenAttributes
			if a == nil || a.ServiceAccountTokenAudience != "sts.amazonaws.com" || a.CacheType != kubeletv1.ServiceAccountServiceAccountTokenCacheType ||
				a.RequireServiceAccount == nil || *a.RequireServiceAccount != tc.require ||
				!slices.Equal(a.RequiredServiceAccountAnnotationKeys, tc.required) || !slices.Equal(a.OptionalServiceAccountAnnotationKeys, tc.optional) {
				t.Errorf("tokenAttributes %+v\n%s", a, out)
			}
			if p.APIVersion != "credentialprovider.kubelet.k8s.io/v1" || !strings.Contains(out, "requireServiceAccount: "+fmt.Sprint(tc.require)) {
				t.Errorf("the kubelet takes tokenAttributes only with the v1 protocol and an explicit requireServiceAccount:\n%s", out)
			}
		})
	}
	out, err := runKubeadm(t, kubeadmDeps{}, "--print-credential-provider-config")
	if err != nil || strings.Contains(out, "tokenAttributes") {
		t.Errorf("without an audience: %v\n%s", err, out)
	}
}

func TestKubeadmECRUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"relative-paths", []string{"--kubernetes-version", "v1.37.1", "--ecr-credential-provider", "--credential-provider-config", "creds.yaml", "--credential-provider-bin-dir", "/a/../b"},
			[]string{`--credential-provider-config: credential provider config "creds.yaml": want an absolute, clean path`, `--credential-provider-bin-dir: credential provider bin dir "/a/../b"`}},
		{"paths-without-the-provider", []string{"--kubernetes-version", "v1.37.1", "--credential-provider-bin-dir", "/opt/bin"},
			[]string{"--credential-provider-config and --credential-provider-bin-dir need --ecr-credential-provider"}},
		{"print-with-other-flags", []string{"--print-credential-provider-config", "--kubernetes-version", "v1.37.1"},
			[]string{"--print-credential-provider-config prints only the CredentialProviderConfig: leave out --kubernetes-version"}},
		{"audience-without-print", []string{"--kubernetes-version", "v1.37.1", "--credential-provider-service-account-token-audience", "sts.amazonaws.com"},
			[]string{"--credential-provider-service-account-token-audience is part of the CredentialProviderConfig: use it with --print-credential-provider-config"}},
		{"require-without-audience", []string{"--print-credential-provider-config", "--credential-provider-require-service-account-role"},
			[]string{"--credential-provider-require-service-account-role needs --credential-provider-service-account-token-audience"}},
		{"bad-audience", []string{"--print-credential-provider-config", "--credential-provider-service-account-token-audience", "sts.amazonaws.com,other"},
			[]string{`service-account token audience "sts.amazonaws.com,other": want one audience without spaces or commas`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runKubeadm(t, kubeadmDeps{}, tc.args...)
			if code := exitcode.Of(err); code != exitcode.Usage || out != "" {
				t.Fatalf("exit code %d (%v), output %q; want %d and none", code, err, out, exitcode.Usage)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
		})
	}
}
