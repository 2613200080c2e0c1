package realkubelet

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// Binary names in testbed.BinDir()/testbed.LegacyVersion/.
const (
	KubeletBinary = "kubelet"
	FakeCRIBinary = "fakecri"
)

// Binaries returns the paths of the kubelet and fakecri of
// testbed.LegacyVersion. Like testbed.Tool, it skips the test when they
// are missing, unless $CI is set: then the test fails.
func Binaries(t testing.TB) (kubelet, fakecri string) {
	t.Helper()
	kubelet = testbed.Tool(t, filepath.Join(testbed.LegacyVersion, KubeletBinary))
	fakecri = testbed.Tool(t, filepath.Join(testbed.LegacyVersion, FakeCRIBinary))
	return kubelet, fakecri
}

// Unsupported returns why this host cannot run a node ("" when it can):
// the kubelet runs in mount and UTS namespaces of its own with bind and
// overlay mounts, which takes root (CI runners that are not root skip).
func Unsupported(ctx context.Context) string {
	if os.Geteuid() != 0 {
		return "realkubelet: a node needs root (mount and UTS namespaces, bind mounts over /var/lib and /var/log)"
	}
	for _, prog := range []string{"unshare", "mount", "hostname"} {
		if _, err := exec.LookPath(prog); err != nil {
			return fmt.Sprintf("realkubelet: %s not found: %v", prog, err)
		}
	}
	b, err := os.ReadFile("/proc/filesystems")
	if err != nil || !strings.Contains(string(b), "\toverlay\n") {
		return "realkubelet: the kernel has no overlayfs (the node's /etc/kubernetes is laid over /etc)"
	}
	out, err := exec.CommandContext(ctx, "unshare", "--mount", "--uts", "true").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("realkubelet: unshare --mount --uts fails here: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return ""
}
