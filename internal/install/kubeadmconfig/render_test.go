package kubeadmconfig

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/ecrcredential"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const providerID = "aws:///us-east-1a/i-0a1b2c3d4e5f60001"

func TestAPIVersionFollowsKubeadm(t *testing.T) {
	cases := map[string]string{"v1.22.0": V1beta3, "v1.26.15": V1beta3, "v1.30.99": V1beta3, "1.30": V1beta3, "v1.31.0": V1beta4, "1.31": V1beta4, "v1.37.1": V1beta4, "v1.40.0-alpha.1": V1beta4}
	for version, want := range cases {
		if got, errs := (Options{KubernetesVersion: version}).resolve(); len(errs) > 0 || got.apiVersion != want {
			t.Errorf("%s: %s, %v; want %s", version, got.apiVersion, errs, want)
		}
	}
	// An explicit API version wins when that kubeadm reads it: 1.31 to
	// 1.35 read both.
	for _, c := range []struct{ kv, api string }{{"v1.35.4", V1beta3}, {"v1.31.0", V1beta3}, {"v1.34.0", V1beta4}, {"", V1beta3}} {
		if got, errs := (Options{KubernetesVersion: c.kv, APIVersion: c.api}).resolve(); len(errs) > 0 || got.apiVersion != c.api {
			t.Errorf("%s with --api-version %s: %s, %v", c.kv, c.api, got.apiVersion, errs)
		}
	}
}

// TestAPIVersionTheKubeadmCannotRead: kubeadm 1.36 removed v1beta3, and
// only 1.31 and later read v1beta4; before 1.22 neither exists.
func TestAPIVersionTheKubeadmCannotRead(t *testing.T) {
	for _, c := range []struct{ kv, api, want string }{
		{"v1.37.1", V1beta3, "kubeadm API version kubeadm.k8s.io/v1beta3: kubeadm 1.37 does not read it (kubeadm 1.22 to 1.35 read it)"},
		{"1.36", V1beta3, "kubeadm 1.36 does not read it"},
		{"v1.30.2", V1beta4, "kubeadm API version kubeadm.k8s.io/v1beta4: kubeadm 1.30 does not read it (kubeadm 1.31 and later read it)"},
		{"v1.21.0", "", "kubernetes version v1.21.0: kubeadm 1.21 reads neither"},
	} {
		err := Options{KubernetesVersion: c.kv, APIVersion: c.api}.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %q", c.kv, c.api, err, c.want)
		}
	}
}

func TestNormalizeVersion(t *testing.T) {
	for in, want := range map[string]string{"1.31": "v1.31.0", "v1.31": "v1.31.0", "1.31.2": "v1.31.2", "v1.37.1": "v1.37.1", "v1.40.0-alpha.1": "v1.40.0-alpha.1"} {
		if got, err := NormalizeVersion(in); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "stable", "stable-1.31", "1", "v1.31.x", "1.31.0.1", " 1.31"} {
		if got, err := NormalizeVersion(in); err == nil {
			t.Errorf("%q accepted as %q", in, got)
		}
	}
}

// TestRenderWritesTheNormalisedVersion: kubeadm refuses kubernetesVersion
// "1.31"; Render writes v1.31.0.
func TestRenderWritesTheNormalisedVersion(t *testing.T) {
	out, err := Render(Options{KubernetesVersion: "1.31"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "kubernetesVersion: v1.31.0\n") {
		t.Errorf("kubernetesVersion not normalised:\n%s", out)
	}
}

// TestProviderIDOneRule: a bare instance ID, a short one and a zone-less
// providerID are refused with the same message shape.
func TestProviderIDOneRule(t *testing.T) {
	for _, id := range []string{"i-123", "i-0123456789abcdef0", "aws:////i-0123456789abcdef0", "aws:///us-east-1a/i-123"} {
		err := Options{KubernetesVersion: "v1.37.1", ProviderID: id}.Validate()
		want := `provider ID: providerID "` + id + `": want aws:///<zone>/<instance-id>, e.g. aws:///us-east-1a/i-0123456789abcdef0: `
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v\nwant the prefix %s", id, err, want)
		}
	}
}

// TestCredentialProviderPaths: the kubelet's credential provider paths must
// be absolute and clean; both are reported.
func TestCredentialProviderPaths(t *testing.T) {
	err := Options{KubernetesVersion: "v1.37.1", CredentialProvider: &CredentialProvider{ConfigPath: "etc/creds.yaml", BinDir: "/usr/libexec/../bin/"}}.Validate()
	for _, want := range []string{`credential provider config "etc/creds.yaml": want an absolute, clean path on the node, e.g. /etc/kubernetes/image-credential-provider-config.yaml`,
		`credential provider bin dir "/usr/libexec/../bin/": want an absolute, clean path`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	err := Options{KubernetesVersion: "latest", ProviderID: "aws:////i-0a1b2c3d4e5f60001"}.Validate()
	for _, want := range []string{`kubernetes version "latest"`, `provider ID: providerID "aws:////i-0a1b2c3d4e5f60001": want aws:///<zone>/<instance-id>`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	if err := (Options{APIVersion: "kubeadm.k8s.io/v1", KubernetesVersion: "v1.37.1"}).Validate(); err == nil || !strings.Contains(err.Error(), "want kubeadm.k8s.io/v1beta3 or kubeadm.k8s.io/v1beta4") {
		t.Errorf("experimental v1 accepted: %v", err)
	}
	if _, err := Render(Options{KubernetesVersion: "v1.37.1", ProviderID: "i-123"}); err == nil {
		t.Error("Render rendered invalid options")
	}
}

func TestGolden(t *testing.T) {
	cases := map[string]Options{
		"v1beta3-cluster.yaml": {KubernetesVersion: "v1.30.4"},
		"v1beta4-cluster.yaml": {KubernetesVersion: "v1.37.1"},
		"v1beta4-node.yaml":    {KubernetesVersion: "v1.37.1", NodeName: "ip-10-0-1-10.ec2.internal", ProviderID: providerID},
		"v1beta4-node-ecr.yaml": {KubernetesVersion: "v1.37.1", NodeName: "ip-10-0-1-10.ec2.internal", ProviderID: providerID,
			CredentialProvider: defaultCredentialProvider()},
		"v1beta3-cluster-ecr.yaml": {KubernetesVersion: "v1.30.4", CredentialProvider: defaultCredentialProvider()},
	}
	for name, o := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Render(o)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("output differs from %s (go test -update to accept):\n%s", path, got)
			}
		})
	}
}

// TestRealKubeadmAcceptsIt runs `kubeadm config validate` (v1.37.1, built by
// hack/build-testbed.sh) on what Render writes for a 1.37 cluster with the
// ECR credential provider's kubelet flags: the documents as they are, and the JoinConfiguration with the discovery a real
// join config has. kubeadm 1.37 refuses v1beta3, which is why Render picks
// v1beta4 from 1.31 on.
func TestRealKubeadmAcceptsIt(t *testing.T) {
	kubeadm := testbed.Tool(t, testbed.KubeadmBinary)
	out, err := Render(Options{KubernetesVersion: "v1.37.1", NodeName: "ip-10-0-1-10.ec2.internal", ProviderID: providerID,
		CredentialProvider: defaultCredentialProvider()})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  - name: image-credential-provider-config\n    value: /etc/kubernetes/image-credential-provider-config.yaml\n",
		"  - name: image-credential-provider-bin-dir\n    value: /usr/libexec/kubernetes/kubelet-plugins/credential-provider/exec\n"} {
		if strings.Count(string(out), want) != 2 {
			t.Errorf("Init and Join lack %q:\n%s", want, out)
		}
	}
	docs := strings.Split(string(out), "---\n")
	if len(docs) != 3 {
		t.Fatalf("want 3 documents, got %d", len(docs))
	}
	discovery := "discovery:\n  bootstrapToken:\n    token: abcdef.0123456789abcdef\n    apiServerEndpoint: 10.0.0.10:6443\n    unsafeSkipCAVerification: true\n"
	validate := func(name, content string) (string, error) {
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := exec.CommandContext(context.Background(), kubeadm, "config", "validate", "--config", path).CombinedOutput()
		return string(b), err
	}
	if msg, err := validate("init.yaml", docs[0]+"---\n"+docs[1]); err != nil {
		t.Errorf("kubeadm refused ClusterConfiguration + InitConfiguration: %v\n%s\n%s", err, msg, docs[0]+docs[1])
	}
	if msg, err := validate("join.yaml", docs[2]+discovery); err != nil {
		t.Errorf("kubeadm refused JoinConfiguration: %v\n%s\n%s", err, msg, docs[2])
	}
	// The negative control: v1beta3 is gone in kubeadm 1.37 (Render
	// refuses it with a 1.37 version, so none is given here).
	old, err := Render(Options{APIVersion: V1beta3})
	if err != nil {
		t.Fatal(err)
	}
	if msg, err := validate("old.yaml", strings.Split(string(old), "---\n")[0]); err == nil || !strings.Contains(msg, "old API spec") {
		t.Errorf("kubeadm 1.37 accepted v1beta3 (%v): %s", err, msg)
	}
}

// defaultCredentialProvider is the kubelet's credential provider at the
// paths the ECR DaemonSet installs to by default.
func defaultCredentialProvider() *CredentialProvider {
	return &CredentialProvider{ConfigPath: ecrcredential.DefaultConfigPath, BinDir: ecrcredential.DefaultBinDir}
}
