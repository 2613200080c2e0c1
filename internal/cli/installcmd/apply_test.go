package installcmd_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
)

func TestApplyUsageErrors(t *testing.T) {
	_, _, err := run(t, "install", "apply", "--dry-run=maybe", "--kubeconfig", os.DevNull)
	if code := exitcode.Of(err); code != exitcode.Usage || !strings.Contains(err.Error(), `--dry-run "maybe": want client or server`) {
		t.Errorf("bad --dry-run: exit %d, %v", code, err)
	}
	_, _, err = run(t, "install", "uninstall", "--workload=statefulset", "--kubeconfig", os.DevNull)
	if code := exitcode.Of(err); code != exitcode.Usage || !strings.Contains(err.Error(), "--workload") {
		t.Errorf("bad --workload: exit %d, %v", code, err)
	}
}

// TestApplyUnreachableClusterExitsThree: nothing listens where the
// kubeconfig points.
func TestApplyUnreachableClusterExitsThree(t *testing.T) {
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	content := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://%s\", insecure-skip-tls-verify: true}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: t}\n", addr)
	if err := os.WriteFile(kubeconfig, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"apply", "uninstall"} {
		_, _, err := run(t, "install", sub, "--kubeconfig", kubeconfig, "--request-timeout=5s")
		if code := exitcode.Of(err); code != exitcode.Unreachable {
			t.Errorf("%s against a closed port: exit %d (%v), want %d", sub, code, err, exitcode.Unreachable)
		}
	}
}
