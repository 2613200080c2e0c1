package migration

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/migrate"
	"github.com/awsccmctl/awsccmctl/internal/testbed/staticpod"
)

// TestStalledHolderIsNotReported: the node step reports a Lease holder gone
// (on which apply releases its Leases) only once the process has exited. A
// kube-controller-manager that leads, stopped with SIGSTOP after the node
// step identified it, is alive: nothing is reported while it is stopped,
// and the departure comes with the SIGKILL that ends it. The test plays
// the kubelet's kill itself (the static-Pod runner polls once an hour
// here), so the stop always comes first.
func TestStalledHolderIsNotReported(t *testing.T) {
	skipWithoutTestBed(t)
	ctx := context.Background()
	forgetMigration(t)
	_, err := env.kube.CoreV1().ConfigMaps(migrate.Namespace).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: migrate.ReportsName, Namespace: migrate.Namespace}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ensureInTreeNode(t, cpA, true)
	cp := startControlPlaneNodeWith(t, cpA, func(o *staticpod.Options) { o.PollInterval = time.Hour })
	kcm := healthzOverHTTPS("https://127.0.0.1:" + strconv.Itoa(cp.port))
	waitFor(t, 3*time.Minute, "the node's kube-controller-manager to lead and list its controllers", func(ctx context.Context) (bool, error) {
		h := kcmLeaseHolder(ctx)
		checks, err := kcm(ctx)
		return strings.HasPrefix(h, cpA.Hostname+"_") && len(checks) > 5, err
	})
	pid, _, _, ok := cp.runner.Process("kube-controller-manager")
	if !ok {
		t.Fatal("no kube-controller-manager runs")
	}

	cmd := exec.CommandContext(context.Background(), env.ctlBin, "migrate-from-intree", "node", "--root", cp.root, "--phase", migrate.PhaseControlPlaneLeaderMigration,
		"--node-name", cpNode, "--kubeconfig", env.cp.KubeconfigPath, "--wait", "40s", "-o", "json")
	cmd.Env = append(os.Environ(), awsEnv()...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	identified := make(chan string, 1)
	var lines []string
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if strings.Contains(sc.Text(), "holds") {
				identified <- sc.Text()
			}
		}
		close(identified)
	}()
	line, ok := <-identified
	if !ok {
		t.Fatalf("the node step did not identify the leading kube-controller-manager:\n%s", strings.Join(lines, "\n"))
	}
	t.Logf("node step: %s", line)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	// Stopped, it stays the holder and nothing says it left.
	for time.Since(stopped) < 6*time.Second {
		if r := nodeReport(t, cpNode); r != nil && r.Departed != nil {
			t.Fatalf("a stopped kube-controller-manager was reported gone: %+v", r.Departed)
		}
		time.Sleep(250 * time.Millisecond)
	}
	// The kubelet's SIGKILL after its grace period ends it.
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var r *migrate.NodeReport
	waitFor(t, 30*time.Second, "the node to report the holder gone", func(context.Context) (bool, error) {
		r = nodeReport(t, cpNode)
		return r != nil && r.Departed != nil, nil
	})
	d := r.Departed
	if d.PID != pid || d.ExitedAt.Time.Before(killed) || !strings.HasPrefix(d.Identity, cpA.Hostname+"_") {
		t.Errorf("departure %+v: want pid %d, exited after the SIGKILL at %s", d, pid, killed.UTC().Format(stampFormat))
	}
	t.Logf("stopped at %s, killed at %s, reported gone at %s (exited %s): %v", stopped.UTC().Format(stampFormat), killed.UTC().Format(stampFormat),
		r.Time.UTC().Format(stampFormat), d.ExitedAt.UTC().Format(stampFormat), d.Leases)
}

// nodeReport reads a node's report from the reports ConfigMap (nil when
// there is none).
func nodeReport(t *testing.T, node string) *migrate.NodeReport {
	t.Helper()
	reports, err := migrate.ReadNodeReportsOf(context.Background(), env.kube, []string{node})
	if err != nil {
		t.Fatalf("read the reports: %v", err)
	}
	r, ok := reports[node]
	if !ok {
		return nil
	}
	return &r
}
