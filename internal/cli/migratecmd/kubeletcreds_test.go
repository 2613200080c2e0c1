package migratecmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKubeletCredentialsReadUnderRoot: the kubeconfig the kubelet's flags
// name, and the files it names by absolute path, are read under the root
// (where a Pod sees the host); a relative path stays relative to the
// kubeconfig's own folder there.
func TestKubeletCredentialsReadUnderRoot(t *testing.T) {
	root := kubeletRoot(t, 10248)
	conf := `apiVersion: v1
kind: Config
clusters:
- name: default-cluster
  cluster: {certificate-authority: pki/ca.crt, server: "https://10.0.1.10:6443"}
contexts:
- name: default-context
  context: {cluster: default-cluster, namespace: default, user: default-auth}
current-context: default-context
users:
- name: default-auth
  user:
    client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem
    client-key: /var/lib/kubelet/pki/kubelet-client-current.pem
`
	if err := os.WriteFile(filepath.Join(root, "etc", "kubernetes", "kubelet.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	// The files exist only under the root: client-go's validation reads
	// them, so the configuration loads only if the paths moved there.
	for _, f := range []string{"var/lib/kubelet/pki/kubelet-client-current.pem", "etc/kubernetes/pki/ca.crt"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), []byte("pem"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, path, err := kubeletRESTConfig(root)
	if err != nil {
		t.Fatal(err)
	}
	if path != "/etc/kubernetes/kubelet.conf" || cfg.Host != "https://10.0.1.10:6443" {
		t.Errorf("kubeconfig %s, server %s", path, cfg.Host)
	}
	if want := filepath.Join(root, "var/lib/kubelet/pki/kubelet-client-current.pem"); cfg.CertFile != want || cfg.KeyFile != want {
		t.Errorf("client certificate %s, key %s; want both %s", cfg.CertFile, cfg.KeyFile, want)
	}
	if want := filepath.Join(root, "etc/kubernetes/pki/ca.crt"); cfg.CAFile != want {
		t.Errorf("CA %s, want %s", cfg.CAFile, want)
	}

	// The kubelet's flags name a kubeconfig that is not there.
	if err := os.Remove(filepath.Join(root, "etc", "kubernetes", "kubelet.conf")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := kubeletRESTConfig(root); err == nil || !strings.Contains(err.Error(), "the kubelet's kubeconfig /etc/kubernetes/kubelet.conf") {
		t.Errorf("missing kubeconfig: %v", err)
	}
}
