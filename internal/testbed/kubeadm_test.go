package testbed

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestKubeadmV1beta3VersionMatchesItsModule: the constant names the folder
// hack/build-testbed.sh builds into, from hack/tools/kubeadm135/go.mod.
func TestKubeadmV1beta3VersionMatchesItsModule(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "hack", "tools", "kubeadm135", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "\nrequire k8s.io/kubernetes " + KubeadmV1beta3Version + "\n"; !strings.Contains(string(mod), want) {
		t.Errorf("hack/tools/kubeadm135/go.mod does not require k8s.io/kubernetes %s", KubeadmV1beta3Version)
	}
}

// TestKubeadmV1beta3Binary runs the built kubeadm: it is the version it is
// stamped with, and it has `config validate`.
func TestKubeadmV1beta3Binary(t *testing.T) {
	kubeadm := KubeadmV1beta3(t)
	out, err := exec.CommandContext(context.Background(), kubeadm, "version", "-o", "short").Output()
	if err != nil || strings.TrimSpace(string(out)) != KubeadmV1beta3Version {
		t.Fatalf("kubeadm version: %q, %v; want %s", out, err, KubeadmV1beta3Version)
	}
	if out, err := exec.CommandContext(context.Background(), kubeadm, "config", "validate", "--help").CombinedOutput(); err != nil {
		t.Fatalf("kubeadm config validate --help: %v\n%s", err, out)
	}
}
