package installcmd_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/cli/root"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// cluster returns a kubeconfig for the shared control plane and a fresh
// namespace. The install's ClusterRole and bindings have fixed names, so
// each test uninstalls what it installed.
func cluster(t *testing.T) (kubeconfig, ns string) {
	t.Helper()
	cp := testbed.Get(t)
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, cp.Config); err != nil {
		t.Fatal(err)
	}
	ns = fmt.Sprintf("ccm-%d", time.Now().UnixNano()%1e9)
	cs := kubernetes.NewForConfigOrDie(cp.Config)
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, ns
}

// uninstallAtEnd removes the install at the end of the test.
func uninstallAtEnd(t *testing.T, flags []string) {
	t.Cleanup(func() {
		if _, _, err := run(t, append([]string{"install", "uninstall"}, flags...)...); err != nil {
			t.Errorf("uninstall: %v", err)
		}
	})
}

// TestApplyDiffExitCodes: --diff with a dry run exits 1 when the cluster
// differs (kubectl diff's convention) and 0 when it does not; a real apply
// exits 0 whatever the diff showed.
func TestApplyDiffExitCodes(t *testing.T) {
	kubeconfig, ns := cluster(t)
	flags := []string{"--kubeconfig", kubeconfig, "--namespace", ns, "--no-detect"}
	uninstallAtEnd(t, flags[:4])

	out, _, err := run(t, append([]string{"install", "apply", "--diff", "--dry-run=server"}, flags...)...)
	if code := exitcode.Of(err); code != exitcode.Failed || !strings.Contains(out, "+++ applied/DaemonSet/"+ns+"/aws-cloud-controller-manager") {
		t.Fatalf("diff of a new install: exit %d (%v), want 1\n%s", code, err, out)
	}
	out, _, err = run(t, append([]string{"install", "apply", "--diff"}, flags...)...)
	if code := exitcode.Of(err); code != exitcode.OK || !strings.Contains(out, "+++ applied/") {
		t.Fatalf("apply with --diff: exit %d (%v), want 0\n%s", code, err, out)
	}
	for _, dryRun := range []string{"--dry-run=server", "--dry-run=client"} {
		out, _, err = run(t, append([]string{"install", "apply", "--diff", dryRun}, flags...)...)
		if code := exitcode.Of(err); code != exitcode.OK || !strings.HasPrefix(out, "no differences\n") {
			t.Fatalf("diff %s of an applied install: exit %d (%v), want 0\n%s", dryRun, code, err, out)
		}
	}
	out, _, err = run(t, append([]string{"install", "apply", "--diff", "--dry-run=server", "--verbosity=4"}, flags...)...)
	if code := exitcode.Of(err); code != exitcode.Failed || !strings.Contains(out, "+        - --v=4") {
		t.Fatalf("diff of a changed value: exit %d (%v), want 1\n%s", code, err, out)
	}
}

// TestUninstallOtherNamespaceExitsEight: the namespace given to uninstall
// is not the install's: exit 8, the install's namespace named, nothing
// deleted (the next uninstall with the right namespace deletes everything).
func TestUninstallOtherNamespaceExitsEight(t *testing.T) {
	kubeconfig, ns := cluster(t)
	flags := []string{"--kubeconfig", kubeconfig, "--no-detect"}
	if _, _, err := run(t, append([]string{"install", "apply", "--namespace", ns}, flags...)...); err != nil {
		t.Fatal(err)
	}
	_, _, err := run(t, append([]string{"install", "uninstall", "--namespace", "kube-system"}, flags[:2]...)...)
	if code := exitcode.Of(err); code != exitcode.Mismatch || !strings.Contains(err.Error(), "--namespace "+ns) {
		t.Errorf("uninstall of another namespace: exit %d (%v), want %d naming %s", code, err, exitcode.Mismatch, ns)
	}
	out, _, err := run(t, append([]string{"install", "uninstall", "--namespace", ns}, flags[:2]...)...)
	if err != nil || !strings.Contains(out, "6 deleted") {
		t.Errorf("uninstall of the install: %v\n%s", err, out)
	}
}

// TestApplyWaitInterrupted: Ctrl-C during --wait (the test bed runs no
// DaemonSet controller, so the rollout never comes) exits 130 with
// "interrupted", at once, not "not ready after" the timeout. The interrupt
// comes once the wait has begun, however long the apply took on a busy
// machine.
func TestApplyWaitInterrupted(t *testing.T) {
	kubeconfig, ns := cluster(t)
	flags := []string{"--kubeconfig", kubeconfig, "--namespace", ns, "--no-detect"}
	uninstallAtEnd(t, flags[:4])
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	progress := &cancelOnText{text: "waiting for the rollout", cancel: cancel}
	// Should the wait never begin, the test still ends (and fails below).
	time.AfterFunc(2*time.Minute, cancel)
	var out bytes.Buffer
	began := time.Now()
	err := root.Execute(ctx, root.Streams{Out: &out, Err: progress}, append([]string{"install", "apply", "--wait", "--timeout=5m"}, flags...))
	if code := exitcode.Of(err); code != exitcode.Interrupted || err.Error() != "interrupted" {
		t.Fatalf("exit %d (%v), want 130 interrupted\n%s", code, err, progress.String())
	}
	if d := time.Since(progress.cancelled); progress.cancelled.IsZero() || d > 10*time.Second {
		t.Errorf("took %s after the interrupt to stop (%s in all)", d, time.Since(began))
	}
}

// cancelOnText is a writer that calls cancel, once, when text is written.
type cancelOnText struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	text      string
	cancel    context.CancelFunc
	cancelled time.Time
}

func (w *cancelOnText) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if w.cancelled.IsZero() && strings.Contains(w.buf.String(), w.text) {
		w.cancelled = time.Now()
		w.cancel()
	}
	return n, err
}

func (w *cancelOnText) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
