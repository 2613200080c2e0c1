package nodefiles

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const ecrHost = "123456789012.dkr.ecr.us-east-1.amazonaws.com"

// TestMatchImage pins the kubelet's matchImages semantics
// (k8s.io/kubernetes pkg/credentialprovider URLsMatchStr).
func TestMatchImage(t *testing.T) {
	cases := []struct {
		name, pattern, image string
		want                 bool
		err                  bool
	}{
		{name: "ECR wildcard matches a registry", pattern: "*.dkr.ecr.*.amazonaws.com", image: ecrHost, want: true},
		{name: "ECR wildcard matches an image with path, tag and digest", pattern: "*.dkr.ecr.*.amazonaws.com", image: ecrHost + "/team/app:v1@sha256:0123", want: true},
		{name: "a star is one label: China needs its own pattern", pattern: "*.dkr.ecr.*.amazonaws.com", image: "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/app"},
		{name: "China pattern", pattern: "*.dkr.ecr.*.amazonaws.com.cn", image: "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/app", want: true},
		{name: "FIPS host is another label", pattern: "*.dkr.ecr.*.amazonaws.com", image: "123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com/app"},
		{name: "FIPS pattern", pattern: "*.dkr.ecr-fips.*.amazonaws.com", image: "123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com/app", want: true},
		{name: "a star never spans labels", pattern: "*.amazonaws.com", image: ecrHost},
		{name: "one star per label", pattern: "*.*.*.*.amazonaws.com", image: ecrHost, want: true},
		{name: "bare star matches a one-label host only", pattern: "*", image: "gcr.io/app"},
		{name: "star dot star", pattern: "*.*", image: "gcr.io/app", want: true},
		{name: "partial labels", pattern: "1234*.dkr.ecr.us-*-1.amazonaws.com", image: ecrHost, want: true},
		{name: "a question mark starts the URL query", pattern: "registry-?.io", image: "registry-.io"},
		{name: "brackets are not valid in a host", pattern: "registry-[0-9].io", image: "registry-7.io", err: true},
		{name: "labels are case-sensitive", pattern: "*.DKR.ecr.*.amazonaws.com", image: ecrHost},
		{name: "port must match", pattern: "registry.io:5000", image: "registry.io:5000/app", want: true},
		{name: "pattern without port", pattern: "registry.io", image: "registry.io:5000/app"},
		{name: "pattern with port", pattern: "registry.io:5000", image: "registry.io/app"},
		{name: "path is a prefix", pattern: "registry.io/team", image: "registry.io/team/app:v1", want: true},
		{name: "path prefix is a string prefix", pattern: "registry.io/team", image: "registry.io/teams/app", want: true},
		{name: "other path", pattern: "registry.io/team", image: "registry.io/other/app"},
		{name: "no glob in the path", pattern: "registry.io/*", image: "registry.io/app"},
		{name: "bad pattern", pattern: "[.io", image: "x.io", err: true},
		{name: "bad port", pattern: "registry.io:port", image: "registry.io", err: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MatchImage(tc.pattern, tc.image)
			if got != tc.want || (err != nil) != tc.err {
				t.Errorf("MatchImage(%q, %q) = %t, %v; want %t, error %t", tc.pattern, tc.image, got, err, tc.want, tc.err)
			}
		})
	}
}

const validV1 = `apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
- name: ecr-credential-provider
  matchImages: ["*.dkr.ecr.*.amazonaws.com"]
  defaultCacheDuration: 12h
  apiVersion: credentialprovider.kubelet.k8s.io/v1
  args: [get-credentials]
  env:
  - name: AWS_PROFILE
    value: nodes
  tokenAttributes:
    serviceAccountTokenAudience: sts.amazonaws.com
    cacheType: ServiceAccount
    requireServiceAccount: false
`

func TestDecodeCredentialProviderConfig(t *testing.T) {
	cases := []struct {
		name, data string
		providers  int
		err        string
	}{
		{name: "valid-v1", data: validV1, providers: 1},
		{name: "valid-v1beta1-json", data: `{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "CredentialProviderConfig", "providers": [
			{"name": "a", "matchImages": ["*.io"], "defaultCacheDuration": "0s", "apiVersion": "credentialprovider.kubelet.k8s.io/v1beta1"},
			{"name": "b", "matchImages": ["*.com"], "defaultCacheDuration": "1m", "apiVersion": "credentialprovider.kubelet.k8s.io/v1alpha1"}]}`, providers: 2},
		{name: "valid-v1alpha1-no-providers", data: "apiVersion: kubelet.config.k8s.io/v1alpha1\nkind: CredentialProviderConfig\n"},
		{name: "invalid-kind", data: "apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n", err: `apiVersion "kubelet.config.k8s.io/v1" kind "KubeletConfiguration", want kubelet.config.k8s.io/v1, kubelet.config.k8s.io/v1beta1, kubelet.config.k8s.io/v1alpha1 CredentialProviderConfig`},
		{name: "invalid-apiVersion", data: "apiVersion: kubelet.config.k8s.io/v2\nkind: CredentialProviderConfig\n", err: `apiVersion "kubelet.config.k8s.io/v2"`},
		{name: "invalid-unknown-field", data: strings.Replace(validV1, "  args:", "  arguments:", 1), err: `unknown field "providers[0].arguments"`},
		{name: "invalid-field-case", data: strings.Replace(validV1, "matchImages:", "MatchImages:", 1), err: `unknown field "providers[0].MatchImages"`},
		{name: "invalid-duplicate-key", data: validV1 + "kind: CredentialProviderConfig\n", err: `key "kind" already set in map`},
		{name: "invalid-tokenAttributes-before-v1", data: strings.Replace(validV1, "kubelet.config.k8s.io/v1\n", "kubelet.config.k8s.io/v1beta1\n", 1), err: `unknown field "providers[0].tokenAttributes" (only in kubelet.config.k8s.io/v1)`},
		{name: "invalid-duration", data: strings.Replace(validV1, "12h", "12 hours", 1), err: `time: unknown unit " hours"`},
		{name: "invalid-yaml", data: "apiVersion: [", err: "not valid YAML"},
		{name: "invalid-list", data: "- a\n", err: "not a CredentialProviderConfig"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := DecodeCredentialProviderConfig([]byte(tc.data))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Providers) != tc.providers {
				t.Errorf("%d providers, want %d", len(cfg.Providers), tc.providers)
			}
		})
	}
	cfg, err := DecodeCredentialProviderConfig([]byte(validV1))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Providers[0]
	if p.Name != "ecr-credential-provider" || p.DefaultCacheDuration.Duration.String() != "12h0m0s" || p.Env[0].Value != "nodes" ||
		p.TokenAttributes == nil || *p.TokenAttributes.RequireServiceAccount {
		t.Errorf("decoded %+v", p)
	}
	if problems := ValidateCredentialProviders(cfg.Providers); len(problems) > 0 {
		t.Errorf("valid-v1 does not validate: %q", problems)
	}
}

func TestValidateCredentialProviders(t *testing.T) {
	decode := func(providers string) []CredentialProvider {
		t.Helper()
		cfg, err := DecodeCredentialProviderConfig([]byte("apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n" + providers))
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Providers
	}
	const ok = "  matchImages: [\"*.io\"]\n  defaultCacheDuration: 1h\n  apiVersion: credentialprovider.kubelet.k8s.io/v1\n"
	cases := []struct {
		name, providers string
		want            []string
	}{
		{name: "valid", providers: "- name: a\n" + ok},
		{name: "no providers", providers: "  []", want: []string{"providers: at least one provider is required"}},
		{name: "names", providers: "- name: a/b\n" + ok + "- name: ..\n" + ok + "- name: c\n" + ok + "- name: c\n" + ok + "- name: \"\"\n" + ok,
			want: []string{`providers[0].name: "a/b": must not contain '/' or spaces, nor be '.' or '..'`, `providers[1].name: "..": must not contain`,
				`providers[3].name: "c": duplicate provider name`, "providers[4].name: required"}},
		{name: "fields", providers: "- name: a\n  matchImages: [\"x.io:port\"]\n  defaultCacheDuration: -1s\n  apiVersion: credentialprovider.kubelet.k8s.io/v2\n- name: b\n",
			want: []string{`providers[0].apiVersion: "credentialprovider.kubelet.k8s.io/v2": want one of`, `providers[0].matchImages: "x.io:port": parse`,
				"providers[0].defaultCacheDuration: -1s: must not be negative", `providers[1].apiVersion: "": want one of`,
				"providers[1].matchImages: at least one image pattern is required", "providers[1].defaultCacheDuration: required"}},
		{name: "token attributes", providers: "- name: a\n  matchImages: [\"*.io\"]\n  defaultCacheDuration: 1h\n  apiVersion: credentialprovider.kubelet.k8s.io/v1beta1\n" +
			"  tokenAttributes:\n    cacheType: Forever\n    requireServiceAccount: false\n    requiredServiceAccountAnnotationKeys: [a.io/x, \"bad key\"]\n    optionalServiceAccountAnnotationKeys: [a.io/x]\n",
			want: []string{"providers[0].tokenAttributes.serviceAccountTokenAudience: required", "providers[0].tokenAttributes: only supported with apiVersion credentialprovider.kubelet.k8s.io/v1",
				`providers[0].tokenAttributes.cacheType: "Forever": want ServiceAccount or Token`, "providers[0].tokenAttributes.requiredServiceAccountAnnotationKeys: requireServiceAccount cannot be false",
				`providers[0].tokenAttributes.requiredServiceAccountAnnotationKeys: "bad key": name part must consist of`, `providers[0].tokenAttributes.optionalServiceAccountAnnotationKeys: "a.io/x": also in requiredServiceAccountAnnotationKeys`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ValidateCredentialProviders(decode(tc.providers))
			if len(got) != len(tc.want) {
				t.Fatalf("problems = %q, want %d: %q", got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("problem %d = %q, want prefix %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestCredentialProvidersFixtures reads the two kubeadm node fixtures.
func TestCredentialProvidersFixtures(t *testing.T) {
	if cp := mustRead(t, "testdata/kubeadm-external-node").CredentialProviders(); cp.Configured() || len(cp.Problems) > 0 || cp.Providers != nil {
		t.Errorf("kubeadm-external-node: %+v", cp)
	}
	cp := mustRead(t, "testdata/kubeadm-external-node-ecr").CredentialProviders()
	const bin = "/usr/libexec/kubernetes/kubelet-plugins/credential-provider/exec"
	if cp.ConfigPath != "/etc/kubernetes/image-credential-provider-config.yaml" || cp.BinDir != bin || len(cp.Problems) > 0 ||
		!reflect.DeepEqual(cp.Files, []string{cp.ConfigPath}) || !reflect.DeepEqual(cp.Executables, map[string]string{"ecr-credential-provider": bin + "/ecr-credential-provider"}) {
		t.Fatalf("kubeadm-external-node-ecr: %+v", cp)
	}
	for image, want := range map[string]bool{ecrHost: true, "210987654321.dkr.ecr.cn-north-1.amazonaws.com.cn/a": true, "public.ecr.aws/a/b": false} {
		if got := len(cp.Matching(image)) == 1; got != want {
			t.Errorf("Matching(%q) = %v", image, cp.Matching(image))
		}
	}
}

// TestCredentialProvidersProblems: everything that makes the kubelet exit
// at start is a problem naming its file.
func TestCredentialProvidersProblems(t *testing.T) {
	const (
		cfgPath = "/etc/kubernetes/credential-providers"
		bin     = "/opt/cp/bin"
	)
	provider := func(name string) string {
		return "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n- name: " + name +
			"\n  matchImages: [\"*.dkr.ecr.*.amazonaws.com\"]\n  defaultCacheDuration: 12h\n  apiVersion: credentialprovider.kubelet.k8s.io/v1\n"
	}
	flags := func(args string) string {
		return kubeletUnit + "[Service]\nExecStart=\nExecStart=/usr/bin/kubelet " + args + "\n"
	}
	both := flags("--image-credential-provider-config=" + cfgPath + " --image-credential-provider-bin-dir=" + bin)
	cases := []struct {
		name      string
		files     map[string]string
		exec      []string // files made executable
		providers []string // names, in order
		problems  []string // each a prefix of one problem, in order
	}{
		{name: "config without bin dir", files: map[string]string{"/etc/systemd/system/kubelet.service": flags("--image-credential-provider-config=/c.yaml"), "/c.yaml": provider("p")},
			providers: []string{"p"}, problems: []string{"--image-credential-provider-bin-dir: not set, but --image-credential-provider-config is"}},
		{name: "bin dir without config", files: map[string]string{"/etc/systemd/system/kubelet.service": flags("--image-credential-provider-bin-dir=/"), "/p": ""},
			problems: []string{"--image-credential-provider-config: not set, but --image-credential-provider-bin-dir is"}},
		{name: "nothing there", files: map[string]string{"/etc/systemd/system/kubelet.service": both},
			problems: []string{bin + ": plugin binary directory (--image-credential-provider-bin-dir): does not exist", cfgPath + ": credential provider configuration (--image-credential-provider-config): does not exist"}},
		{name: "directory of configs, merged in name order", exec: []string{bin + "/a", "/opt/cp/real-b"},
			files:     map[string]string{"/etc/systemd/system/kubelet.service": both, cfgPath + "/20-b.yml": provider("b"), cfgPath + "/10-a.json": provider("a"), cfgPath + "/README": "not read", bin + "/a": "", bin + "/b": "symlink:/opt/cp/real-b", "/opt/cp/real-b": ""},
			providers: []string{"a", "b"}},
		{name: "empty config directory", files: map[string]string{"/etc/systemd/system/kubelet.service": both, cfgPath + "/README": "", bin + "/x": ""},
			problems: []string{cfgPath + ": no *.json, *.yaml or *.yml configuration file in the directory"}},
		{name: "broken file", files: map[string]string{"/etc/systemd/system/kubelet.service": both, cfgPath + "/a.yaml": provider("a"), cfgPath + "/b.yaml": "kind: [", bin + "/a": ""},
			providers: []string{"a"}, problems: []string{cfgPath + "/b.yaml: not valid YAML"}},
		{name: "duplicate across files", files: map[string]string{"/etc/systemd/system/kubelet.service": both, cfgPath + "/a.yaml": provider("a"), cfgPath + "/b.yaml": provider("a"), bin + "/a": ""},
			exec: []string{bin + "/a"}, providers: []string{"a", "a"}, problems: []string{cfgPath + `: providers[1].name: "a": duplicate provider name`}},
		{name: "executables missing, not executable, a directory", exec: []string{bin + "/ok"},
			files: map[string]string{"/etc/systemd/system/kubelet.service": both, cfgPath + "/a.yaml": provider("missing") + strings.TrimPrefix(provider("plain"), "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n") +
				strings.TrimPrefix(provider("dir"), "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n") + strings.TrimPrefix(provider("ok"), "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n"),
				bin + "/plain": "", bin + "/dir/x": "", bin + "/ok": ""},
			providers: []string{"missing", "plain", "dir", "ok"},
			problems: []string{bin + "/missing: executable of provider missing: does not exist", bin + "/plain: executable of provider plain is not executable (mode -rw-r--r--): `chmod +x " + bin + "/plain`",
				bin + "/dir: executable of provider dir is a directory"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := writeTree(t, tc.files)
			for _, e := range tc.exec {
				if err := os.Chmod(filepath.Join(root, e), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			n := mustRead(t, root)
			problemsContain(t, n)
			cp := n.CredentialProviders()
			var names []string
			for _, p := range cp.Providers {
				names = append(names, p.Name)
			}
			if !reflect.DeepEqual(names, tc.providers) {
				t.Errorf("providers %q, want %q", names, tc.providers)
			}
			if len(cp.Problems) != len(tc.problems) {
				t.Fatalf("problems = %q, want %d: %q", cp.Problems, len(tc.problems), tc.problems)
			}
			for i := range cp.Problems {
				if !strings.HasPrefix(cp.Problems[i], tc.problems[i]) {
					t.Errorf("problem %d = %q, want prefix %q", i, cp.Problems[i], tc.problems[i])
				}
			}
		})
	}
}

func FuzzCredentialProviderConfig(f *testing.F) {
	addFixtures(f, "etc/kubernetes/image-credential-provider-config.yaml", "var/lib/kubelet/credential-provider.conf")
	f.Add(validV1)
	f.Add(`{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"CredentialProviderConfig","providers":[{"name":"a","matchImages":["[x","*.*:5000/p"],"defaultCacheDuration":"-1s","apiVersion":""}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := DecodeCredentialProviderConfig([]byte(s))
		if err != nil {
			return
		}
		for _, v := range ValidateCredentialProviders(cfg.Providers) {
			if !strings.HasPrefix(v, "providers") {
				t.Fatalf("problem %q does not name its field", v)
			}
		}
		for _, p := range cfg.Providers {
			for _, m := range p.MatchImages {
				_, _ = MatchImage(m, ecrHost)
			}
		}
		// Decoding what was decoded, written back as JSON, is stable.
		j, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeCredentialProviderConfig(j)
		if err != nil {
			t.Fatalf("%q decoded, but not when written back as %s: %v", s, j, err)
		}
		if j2, _ := json.Marshal(again); string(j2) != string(j) {
			t.Fatalf("unstable: %s -> %s", j, j2)
		}
	})
}

func FuzzMatchImage(f *testing.F) {
	f.Add("*.dkr.ecr.*.amazonaws.com", ecrHost+"/app:v1")
	f.Add("registry.io:5000/team", "registry.io:5000/team/app")
	f.Add("[a-", "b")
	f.Fuzz(func(t *testing.T, pattern, image string) {
		ok, err := MatchImage(pattern, image)
		if err != nil && ok {
			t.Fatalf("MatchImage(%q, %q) matched with an error: %v", pattern, image, err)
		}
		// Without glob characters, a parsable image matches itself.
		if strings.ContainsAny(image, `*?[\`) {
			return
		}
		if _, err := parseSchemeless(image); err != nil {
			return
		}
		if self, err := MatchImage(image, image); !self || err != nil {
			t.Fatalf("MatchImage(%q, itself) = %t, %v", image, self, err)
		}
	})
}
