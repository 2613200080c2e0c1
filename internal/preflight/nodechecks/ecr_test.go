package nodechecks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

func TestECRRegistry(t *testing.T) {
	cases := map[string]string{
		"123456789012.dkr.ecr.us-east-1.amazonaws.com/app:v1":                 "123456789012.dkr.ecr.us-east-1.amazonaws.com",
		"123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com/a/b@sha256:00": "123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com",
		"123456789012.dkr.ecr.cn-northwest-1.amazonaws.com.cn/app":            "123456789012.dkr.ecr.cn-northwest-1.amazonaws.com.cn",
		"123456789012.dkr.ecr.us-east-1.amazonaws.com":                        "", // no repository: not an image
		"12345678901.dkr.ecr.us-east-1.amazonaws.com/app":                     "", // 11 digits
		"public.ecr.aws/eks-distro/kubernetes/pause:3.10":                     "", // public ECR needs no credentials
		"registry.example.com/123456789012.dkr.ecr.us-east-1.amazonaws.com/a": "",
		"123456789012.dkr.ecr.us-east-1.amazonaws.com.evil.example/app":       "",
		"123456789012.dkr.ecr.us-east-1.amazonaws.com:443/app":                "",
		"nginx": "",
		"123456789012.dkr.ecr.us-iso-east-1.c2s.ic.gov/app":                      "", // never served by the in-tree provider
		"123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/app:v2@sha256:0f0f0f": "123456789012.dkr.ecr.eu-west-1.amazonaws.com",
	}
	for image, want := range cases {
		host, ok := ECRRegistry(image)
		if host != want || ok != (want != "") {
			t.Errorf("ECRRegistry(%q) = %q, %t; want %q", image, host, ok, want)
		}
	}
}

// TestECRProviderFixtures pins the finding on the two kubeadm node fixtures,
// with and without the provider.
func TestECRProviderFixtures(t *testing.T) {
	const flags = "--image-credential-provider-config=/etc/kubernetes/image-credential-provider-config.yaml --image-credential-provider-bin-dir=/usr/libexec/kubernetes/kubelet-plugins/credential-provider/exec"
	cases := []struct {
		fixture, message string
		status           preflight.Status
		fix              []string
	}{
		{fixture: "kubeadm-external-node", status: warn,
			message: "kubelet has no --image-credential-provider-config and no --image-credential-provider-bin-dir: without the in-tree AWS provider (removed in 1.27) it has no credentials " +
				"for private ECR registries, so it cannot pull an ECR image it has not cached (cluster mode's images-ecr-credential-provider lists the Pods that use them)",
			fix: []string{"put ecr-credential-provider (awsccmctl's release, or the CCM image: `awsccmctl install manifests --ecr-credential-provider` renders a DaemonSet that copies it onto every node; docs/ecr-credential-provider.md)",
				"`awsccmctl install kubeadm --print-credential-provider-config` prints it", `matchImages: ["*.dkr.ecr.*.amazonaws.com", "*.dkr.ecr-fips.*.amazonaws.com", "*.dkr-ecr.*.on.aws", `,
				"; then add " + flags + " in KUBELET_KUBEADM_ARGS in /var/lib/kubelet/kubeadm-flags.env, then `systemctl restart kubelet`", "nodeRegistration.kubeletExtraArgs"}},
		{fixture: "kubeadm-external-node-ecr", status: pass,
			message: "credential provider ecr-credential-provider (matchImages *.dkr.ecr.*.amazonaws.com, *.dkr.ecr.*.amazonaws.com.cn, *.dkr.ecr-fips.*.amazonaws.com) " +
				"in /etc/kubernetes/image-credential-provider-config.yaml serves ECR registries such as 123456789012.dkr.ecr.us-east-1.amazonaws.com; " +
				"executable /usr/libexec/kubernetes/kubelet-plugins/credential-provider/exec/ecr-credential-provider"},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			n, err := nodefiles.Read(filepath.Join("..", "..", "nodefiles", "testdata", tc.fixture))
			if err != nil {
				t.Fatal(err)
			}
			for _, mode := range []preflight.Mode{pre, migrate, post} {
				f := run(t, Input{Node: n, Mode: mode})[IDKubeletECRProvider]
				if f.Status != tc.status || f.Message != tc.message {
					t.Errorf("%s: %s = %s\n  %s\nwant %s\n  %s", mode, f.ID, f.Status, f.Message, tc.status, tc.message)
				}
				for _, w := range tc.fix {
					if !strings.Contains(f.Remediation, w) {
						t.Errorf("remediation lacks %q: %s", w, f.Remediation)
					}
				}
				if tc.fix == nil && f.Remediation != "" {
					t.Errorf("remediation on pass: %s", f.Remediation)
				}
			}
		})
	}
}

// TestECRProviderProblems: a setup the kubelet refuses, and one that serves
// no ECR registry.
func TestECRProviderProblems(t *testing.T) {
	const (
		unit = "/etc/systemd/system/kubelet.service"
		cfg  = "/etc/kubernetes/cp.yaml"
		bin  = "/opt/cp"
	)
	exec := "[Service]\nExecStart=/usr/bin/kubelet --cloud-provider=external --image-credential-provider-config=" + cfg + " --image-credential-provider-bin-dir=" + bin + "\n"
	gcp := "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n- name: gcp-credential-provider\n  matchImages: [gcr.io, \"*.gcr.io\", \"*.pkg.dev\"]\n" +
		"  defaultCacheDuration: 1m\n  apiVersion: credentialprovider.kubelet.k8s.io/v1\n"
	cases := []struct {
		name    string
		files   map[string]string
		message string
		fix     string
	}{
		{name: "config does not parse",
			files: map[string]string{unit: exec, cfg: strings.Replace(gcp, "matchImages", "matchImage", 1), bin + "/gcp-credential-provider": ""},
			message: `the kubelet exits at start ("Failed to register CRI auth plugins") with this credential provider setup: ` +
				`/etc/kubernetes/cp.yaml: strict decoding: unknown field "providers[0].matchImage"`,
			fix: "fix each problem listed (the kubelet does not start until then), then `systemctl restart kubelet`"},
		{name: "no executable",
			files: map[string]string{unit: exec, cfg: gcp, bin + "/README": ""},
			message: `the kubelet exits at start ("Failed to register CRI auth plugins") with this credential provider setup: ` +
				"/opt/cp/gcp-credential-provider: executable of provider gcp-credential-provider: does not exist",
			fix: "fix each problem listed"},
		{name: "no provider for ECR",
			files: map[string]string{unit: exec, cfg: gcp, bin + "/gcp-credential-provider": "#!/bin/sh\n"},
			message: "no credential provider in /etc/kubernetes/cp.yaml matches the ECR registry 123456789012.dkr.ecr.us-east-1.amazonaws.com, " +
				"so the kubelet pulls private ECR images without credentials; providers: gcp-credential-provider (matchImages gcr.io, *.gcr.io, *.pkg.dev)",
			fix: "add the provider {name: ecr-credential-provider, " + `matchImages: ["*.dkr.ecr.*.amazonaws.com", "*.dkr.ecr-fips.*.amazonaws.com", "*.dkr-ecr.*.on.aws", ` +
				`"*.dkr-ecr-fips.*.on.aws", "*.dkr.ecr.*.amazonaws.com.cn", "*.dkr.ecr-fips.*.amazonaws.com.cn", "*.dkr-ecr.*.on.amazonwebservices.com.cn", ` +
				`"*.dkr-ecr-fips.*.on.amazonwebservices.com.cn", "*.dkr.ecr.*.amazonaws.eu", "*.dkr.ecr-fips.*.amazonaws.eu", "*.dkr.ecr.*.c2s.ic.gov", ` +
				`"*.dkr.ecr-fips.*.c2s.ic.gov", "*.dkr.ecr.*.sc2s.sgov.gov", "*.dkr.ecr-fips.*.sc2s.sgov.gov", "*.dkr.ecr.*.cloud.adc-e.uk", ` +
				`"*.dkr.ecr-fips.*.cloud.adc-e.uk", "*.dkr.ecr.*.csp.hci.ic.gov", "*.dkr.ecr-fips.*.csp.hci.ic.gov", "public.ecr.aws", "ecr-public.aws.com"], ` +
				"defaultCacheDuration: 12h, apiVersion: credentialprovider.kubelet.k8s.io/v1} to /etc/kubernetes/cp.yaml, put the ecr-credential-provider executable in /opt/cp"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for p, content := range tc.files {
				host := filepath.Join(root, filepath.FromSlash(p))
				if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(host, []byte(content), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			n, err := nodefiles.Read(root)
			if err != nil {
				t.Fatal(err)
			}
			f := run(t, Input{Node: n, Mode: pre})[IDKubeletECRProvider]
			if f.Status != warn || f.Message != tc.message || !strings.Contains(f.Remediation, tc.fix) {
				t.Errorf("%s = %s\n  %s\n  | %s\nwant warn\n  %s\n  | …%s…", f.ID, f.Status, f.Message, f.Remediation, tc.message, tc.fix)
			}
			if files := run(t, Input{Node: n, Mode: pre})[IDNodeFilesReadable]; files.Status != pass {
				t.Errorf("%s = %s: %s", files.ID, files.Status, files.Message)
			}
		})
	}
}
