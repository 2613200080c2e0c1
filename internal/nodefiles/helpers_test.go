package nodefiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree writes files (node path -> content) under a new root. A content
// starting with "symlink:" makes a symbolic link to the rest.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		host := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "symlink:"); ok {
			if err := os.Symlink(target, host); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(host, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func mustRead(t *testing.T, root string) *Node {
	t.Helper()
	n, err := Read(root)
	if err != nil {
		t.Fatalf("Read(%s): %v", root, err)
	}
	return n
}

// problemsContain checks that each want is a substring of some problem, and
// that there are no other problems.
func problemsContain(t *testing.T, n *Node, want ...string) {
	t.Helper()
	if len(n.Problems) != len(want) {
		t.Fatalf("problems = %q, want %d matching %q", n.Problems, len(want), want)
	}
	for i, w := range want {
		if !strings.Contains(n.Problems[i], w) {
			t.Errorf("problem %d = %q, want it to contain %q", i, n.Problems[i], w)
		}
	}
}

func flagOf(t *testing.T, f Flags, name string) string {
	t.Helper()
	v, ok := f.Get(name)
	if !ok {
		t.Fatalf("flag --%s missing from %s", name, f)
	}
	return v
}

const kubeletUnit = "[Unit]\nDescription=kubelet\n[Service]\nExecStart=/usr/bin/kubelet\nRestart=always\n"

const kubeadmDropIn = `[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--kubeconfig=/etc/kubernetes/kubelet.conf"
Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
EnvironmentFile=-/etc/default/kubelet
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
`
