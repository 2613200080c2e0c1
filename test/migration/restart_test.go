package migration

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/migrate"
)

// TestMigrateRestartMode: `plan --mode restart` on a single control-plane
// node. kube-controller-manager stops running the cloud loops, then the
// CCM starts them: a gap by design, never two managers at once; rollback
// ends with a kube-controller-manager running them again.
func TestMigrateRestartMode(t *testing.T) {
	skipWithoutTestBed(t)
	ctx := context.Background()
	forgetMigration(t)
	ensureInTreeNode(t, cpA, true)
	ensureInTreeNode(t, cpSpec{Node: workNode, ID: workID, IP: "10.0.2.20", Zone: "us-east-1b"}, false)
	ensureKubeadmConfig(t)
	cp := startControlPlaneNode(t)
	roots := map[string]string{cpNode: cp.root, workNode: nodeRoot(t, "kubeadm-worker", nil)}
	kcmHealthz := healthzOverHTTPS("https://127.0.0.1:" + strconv.Itoa(cp.port))
	// The node's kube-controller-manager runs the loops before the move
	// (the Lease of an earlier case's process expires first).
	waitFor(t, 3*time.Minute, "kube-controller-manager to lead and run the cloud loops", func(ctx context.Context) (bool, error) {
		checks, err := kcmHealthz(ctx)
		return strings.HasPrefix(kcmLeaseHolder(ctx), cpA.Hostname+"_") && len(leadermigration.Running(checks, leadermigration.KCMNames())) > 0, err
	})
	dir := t.TempDir()
	planPath := filepath.Join(dir, "plan.yaml")
	cc := filepath.Join(dir, "ccm-cloud.conf")
	writeFile(t, cc, []byte("[Global]\nRegion = us-east-1\nVPC = vpc-0demo000000000001\nKubernetesClusterID = demo\n"))
	admin := []string{"--kubeconfig", env.cp.KubeconfigPath}
	out, err := ctl(ctx, append([]string{"migrate-from-intree", "plan", "--mode", "restart", "-f", planPath,
		"--image", "registry.example.com/aws-cloud-controller-manager:v0.0.0-e2e", "--cloud-config", cc, "--node-step-timeout", "3m"}, admin...)...)
	if err != nil {
		t.Fatalf("plan --mode restart: %v\n%s", err, out)
	}
	data, err := os.ReadFile(planPath)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := migrate.DecodePlan(data)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Spec.Mode != migrate.ModeRestart {
		t.Fatalf("plan mode %s", plan.Spec.Mode)
	}
	ccm := startCCMKubelet(t)
	mon := startMonitor(t, 250*time.Millisecond, func() []managerTarget {
		return []managerTarget{
			{Name: "kcm/" + cpNode, Kind: kindKCM, Hostname: cpA.Hostname, Healthz: kcmHealthz, External: processRunsExternal(cp.runner)},
			{Name: "ccm/" + cpNode, Kind: kindCCM, Healthz: ccm.healthz},
		}
	})
	agent := startPacedNodeAgent(t, plan, roots, &pacing{Delay: func(string) time.Duration { return 5 * time.Second }, OnRun: mon.Mark})
	start := time.Now()
	out, err = ctl(ctx, append([]string{"migrate-from-intree", "apply", "--plan", planPath, "--approve", "--poll-interval", "250ms"}, admin...)...)
	mon.Mark("apply exited")
	if err != nil {
		t.Fatalf("apply: exit %d\n%s\nnode steps: %v", exitCode(err), out, agent.Runs())
	}
	t.Logf("apply took %s; node steps %v", time.Since(start).Round(time.Second), agent.Runs())
	if checks, err := ccm.healthz(ctx); err != nil || len(leadermigration.Running(checks, leadermigration.CCMNames())) < 2 {
		t.Errorf("after apply the CCM runs %v (%v), want the migrated controllers", checks, err)
	}
	if checks, err := kcmHealthz(ctx); err != nil || len(leadermigration.Running(checks, leadermigration.KCMNames())) > 0 {
		t.Errorf("after apply kube-controller-manager lists %v (%v), want none of the migrated controllers", checks, err)
	}

	mon.Mark("rollback started")
	out, err = ctl(ctx, append([]string{"migrate-from-intree", "rollback", "--plan", planPath, "--approve", "--poll-interval", "250ms"}, admin...)...)
	checks, herr := kcmHealthz(ctx)
	mon.Mark("rollback exited")
	rep := mon.Stop()
	t.Logf("monitor:\n%s", rep)
	if err != nil {
		t.Fatalf("rollback: exit %d\n%s", exitCode(err), out)
	}
	if herr != nil || len(leadermigration.Running(checks, leadermigration.KCMNames())) == 0 {
		t.Errorf("when rollback exited kube-controller-manager listed %v (%v), want the cloud loops", checks, herr)
	}
	if len(rep.SplitBrain) > 0 {
		t.Errorf("split brain in %d samples: %v", len(rep.SplitBrain), rep.SplitBrain)
	}
}
