package kubeadmconfig

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

const nodeName = "ip-10-0-1-10.ec2.internal"

func readMergeFixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "merge", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// documents splits a stream as Merge does, for comparisons.
func documents(t *testing.T, data []byte) []*document {
	t.Helper()
	docs, err := splitDocuments(data)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// TestMergeKeepsTheUsersFile: every document survives, the ones Merge has
// no business with byte for byte; the user's extraArgs and other settings
// stay; ours are added in the shape of the file's API version.
func TestMergeKeepsTheUsersFile(t *testing.T) {
	for _, c := range []struct {
		file      string
		keep      []string // lines of the user's that must survive
		untouched []string // kinds kept byte for byte
	}{
		{"valid-v1beta4-init.yaml", []string{"# kubeadm init --config for the first control-plane node.", "      value: tier=control-plane",
			"criSocket: unix:///run/containerd/containerd.sock", "podSubnet: 10.244.0.0/16 # Calico's default is 192.168.0.0/16",
			"      value: 0.0.0.0", "      value: \"30\"", "clusterName: prod", "kubernetesVersion: v1.37.1"},
			[]string{"KubeletConfiguration", "KubeProxyConfiguration"}},
		{"valid-v1beta3-init.yaml", []string{"    node-labels: tier=control-plane", "    bind-address: 0.0.0.0", "kubernetesVersion: v1.35.4"},
			[]string{"KubeletConfiguration", "KubeProxyConfiguration"}},
		{"valid-v1beta4-join.yaml", []string{"    apiServerEndpoint: 10.0.0.10:6443", "      value: tier=worker"}, nil},
		{"valid-unknown-kind.yaml", nil, []string{"SomethingElse"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			in := readMergeFixture(t, c.file)
			o := Options{ProviderID: providerID, NodeName: nodeName}
			out, err := Merge(in, o)
			if err != nil {
				t.Fatal(err)
			}
			if err := Check(out, o); err != nil {
				t.Errorf("Check: %v\n%s", err, out)
			}
			for _, l := range c.keep {
				if !bytes.Contains(out, []byte(l+"\n")) {
					t.Errorf("lost %q:\n%s", l, out)
				}
			}
			before, after := documents(t, in), documents(t, out)
			if len(after) < len(before) {
				t.Fatalf("%d documents in, %d out", len(before), len(after))
			}
			for i, d := range before {
				if after[i].kind != d.kind || after[i].apiVersion != d.apiVersion {
					t.Errorf("document %d: %s %s became %s %s", i+1, d.apiVersion, d.kind, after[i].apiVersion, after[i].kind)
				}
				for _, k := range c.untouched {
					if d.kind == k && !bytes.Equal(after[i].raw, d.raw) {
						t.Errorf("%s changed:\n%s\nwas:\n%s", k, after[i].raw, d.raw)
					}
				}
			}
		})
	}
}

// TestMergeAddsAClusterConfiguration: an init file without one gets one,
// or kube-controller-manager would keep the cloud loops.
func TestMergeAddsAClusterConfiguration(t *testing.T) {
	out, err := Merge(readMergeFixture(t, "valid-unknown-kind.yaml"), Options{KubernetesVersion: "1.37"})
	if err != nil {
		t.Fatal(err)
	}
	docs := documents(t, out)
	last := docs[len(docs)-1]
	if last.kind != kindCluster || last.apiVersion != V1beta4 || !bytes.Contains(last.raw, []byte("kubernetesVersion: v1.37.0")) {
		t.Errorf("last document %s %s:\n%s", last.apiVersion, last.kind, out)
	}
	// A join file gets none: kubeadm join does not read it.
	out, err = Merge(readMergeFixture(t, "valid-v1beta4-join.yaml"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(kindCluster)) {
		t.Errorf("a ClusterConfiguration added to a join file:\n%s", out)
	}
}

// TestMergeIsIdempotent: merging the merged file changes nothing.
func TestMergeIsIdempotent(t *testing.T) {
	o := Options{ProviderID: providerID, NodeName: nodeName}
	once, err := Merge(readMergeFixture(t, "valid-v1beta4-init.yaml"), o)
	if err != nil {
		t.Fatal(err)
	}
	twice, err := Merge(once, o)
	if err != nil || !bytes.Equal(once, twice) {
		t.Errorf("second merge: %v\n%s\nfirst:\n%s", err, twice, once)
	}
}

func TestMergeRefuses(t *testing.T) {
	v1beta4 := readMergeFixture(t, "valid-v1beta4-init.yaml")
	for _, c := range []struct {
		name string
		data []byte
		o    Options
		want []string
	}{
		{"cloud-provider=aws", readMergeFixture(t, "invalid-cloud-provider-aws.yaml"), Options{}, []string{
			`document 1 (ClusterConfiguration): controllerManager.extraArgs cloud-provider is "aws", but the external CCM needs "external"`,
			`document 2 (InitConfiguration): nodeRegistration.kubeletExtraArgs cloud-provider is "aws", but the external CCM needs "external"`}},
		{"v1beta3 with list extraArgs", readMergeFixture(t, "invalid-v1beta3-list-args.yaml"), Options{},
			[]string{"document 1 (ClusterConfiguration): controllerManager.extraArgs: kubeadm.k8s.io/v1beta3 wants a map (key: value lines) here, not a list"}},
		{"no kubeadm document", readMergeFixture(t, "invalid-no-kubeadm.yaml"), Options{}, []string{"nothing to merge into"}},
		{"another version asked for", v1beta4, Options{KubernetesVersion: "v1.36.0"},
			[]string{`ClusterConfiguration kubernetesVersion is "v1.37.1", but the Kubernetes version asked for is v1.36.0`}},
		{"another API version asked for", v1beta4, Options{APIVersion: V1beta3}, []string{"the file is kubeadm.k8s.io/v1beta4"}},
		{"v1beta3 file for kubeadm 1.37", readMergeFixture(t, "invalid-v1beta3-list-args.yaml"), Options{KubernetesVersion: "v1.37.1"},
			[]string{"kubeadm 1.37 does not read it"}},
		{"other provider ID", []byte("apiVersion: kubeadm.k8s.io/v1beta4\nkind: JoinConfiguration\nnodeRegistration:\n  name: other\n  kubeletExtraArgs:\n  - name: provider-id\n    value: aws:///us-east-1b/i-0a1b2c3d4e5f60002\n---\napiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nproviderID: aws:///us-east-1b/i-0a1b2c3d4e5f60002\n"),
			Options{ProviderID: providerID, NodeName: nodeName}, []string{
				`document 1 (JoinConfiguration): nodeRegistration.name is "other"`,
				`document 1 (JoinConfiguration): nodeRegistration.kubeletExtraArgs provider-id is "aws:///us-east-1b/i-0a1b2c3d4e5f60002"`,
				`document 2 (KubeletConfiguration): providerID is "aws:///us-east-1b/i-0a1b2c3d4e5f60002"`}},
		{"v1beta2", []byte("apiVersion: kubeadm.k8s.io/v1beta2\nkind: InitConfiguration\n"), Options{}, []string{"apiVersion kubeadm.k8s.io/v1beta2: want"}},
		{"not YAML", []byte("apiVersion: [\n"), Options{}, []string{"document 1: not YAML"}},
		{"bad provider ID", v1beta4, Options{ProviderID: "i-123"}, []string{`provider ID: providerID "i-123"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := Merge(c.data, c.o)
			if err == nil {
				t.Fatalf("merged:\n%s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
	var ce *ConflictError
	if _, err := Merge(readMergeFixture(t, "invalid-cloud-provider-aws.yaml"), Options{}); !errors.As(err, &ce) || len(ce.Problems) != 2 {
		t.Errorf("want a ConflictError with both problems, got %v", err)
	}
}

// kubeadmValidate runs `kubeadm config validate` on content.
func kubeadmValidate(t *testing.T, kubeadm, content string) (string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeadm.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := exec.CommandContext(context.Background(), kubeadm, "config", "validate", "--config", path).CombinedOutput()
	return string(b), err
}

// TestRealKubeadmAcceptsTheMergedFile: the merged v1beta4 files pass
// kubeadm 1.37's config validate, the v1beta3 one kubeadm 1.35's (the last
// that reads v1beta3; 1.37 refuses it).
func TestRealKubeadmAcceptsTheMergedFile(t *testing.T) {
	o := Options{ProviderID: providerID, NodeName: nodeName}
	for _, c := range []struct {
		file    string
		kubeadm func(testing.TB) string
	}{
		{"valid-v1beta4-init.yaml", func(t testing.TB) string { return testbed.Tool(t, testbed.KubeadmBinary) }},
		{"valid-v1beta4-join.yaml", func(t testing.TB) string { return testbed.Tool(t, testbed.KubeadmBinary) }},
		{"valid-v1beta3-init.yaml", testbed.KubeadmV1beta3},
	} {
		t.Run(c.file, func(t *testing.T) {
			kubeadm := c.kubeadm(t)
			out, err := Merge(readMergeFixture(t, c.file), o)
			if err != nil {
				t.Fatal(err)
			}
			if msg, err := kubeadmValidate(t, kubeadm, string(out)); err != nil {
				t.Errorf("kubeadm config validate: %v\n%s\n%s", err, msg, out)
			}
		})
	}
}

// TestRealKubeadmV1beta3 validates Render's v1beta3 output (with the ECR
// credential provider's kubelet flags, map-style) with kubeadm 1.35, and shows why that kubeadm is needed: 1.37 refuses the same file.
func TestRealKubeadmV1beta3(t *testing.T) {
	old := testbed.KubeadmV1beta3(t)
	current := testbed.Tool(t, testbed.KubeadmBinary)
	out, err := Render(Options{KubernetesVersion: testbed.KubeadmV1beta3Version, APIVersion: V1beta3, NodeName: nodeName, ProviderID: providerID,
		CredentialProvider: defaultCredentialProvider()})
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(out), "---\n")
	initFile := docs[0] + "---\n" + docs[1]
	if msg, err := kubeadmValidate(t, old, initFile); err != nil {
		t.Errorf("kubeadm %s refused v1beta3: %v\n%s\n%s", testbed.KubeadmV1beta3Version, err, msg, initFile)
	}
	if msg, err := kubeadmValidate(t, current, initFile); err == nil {
		t.Errorf("kubeadm of the test bed accepted v1beta3 (so the older one is not needed):\n%s", msg)
	}
}
