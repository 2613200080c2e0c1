package kubeletrun

import (
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestChrootSystemctlNeedsTheHostsSystemctl: with Root set, systemctl is
// the host's, found under Root; a Root without one (the host's file system
// not mounted there) is said plainly, before anything runs.
func TestChrootSystemctlNeedsTheHostsSystemctl(t *testing.T) {
	root := t.TempDir()
	err := Systemd{Unit: "kubelet.service", Root: root}.run(context.Background(), "restart", "kubelet.service")
	if err == nil || !strings.Contains(err.Error(), "no systemctl under "+root+" (looked for /usr/bin/systemctl, /bin/systemctl)") {
		t.Fatalf("err = %v", err)
	}
	// Found under the root: the command runs that path, chrooted there.
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bin", "systemctl"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := osexec.CommandContext(context.Background(), "systemctl", "restart", "kubelet.service")
	if err := (Systemd{Root: root}).chroot(cmd); err != nil {
		t.Fatal(err)
	}
	if cmd.Path != "/bin/systemctl" || cmd.SysProcAttr == nil || cmd.SysProcAttr.Chroot != root || cmd.Dir != "/" {
		t.Errorf("path %s, chroot %+v, dir %s", cmd.Path, cmd.SysProcAttr, cmd.Dir)
	}
}
