//go:build linux

package migrationbench

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/migrate"
)

// skippedSteps are the control-plane steps the bench marks done instead of
// running: their cost does not grow with the Nodes (they read mirror Pods,
// Leases and the CCM's workload), and running them needs real
// kube-controller-managers and a CCM (test/migration runs them).
var skippedSteps = []string{migrate.StepKCMLeaderMigration, migrate.StepInstallCCM, migrate.StepCutOver, migrate.StepKubeadmConfig}

// TestMigrationAtScale runs plan and an apply through every
// kubelet-external step over BENCH_MIGRATION_NODES Nodes and reports what
// the CLI cost; it fails when plan or apply fails or a gate does not pass.
func TestMigrationAtScale(t *testing.T) {
	skipWithoutTestBed(t)
	n, err := nodeCount()
	if err != nil {
		t.Fatal(err)
	}
	rate, err := reportRate()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	dir := t.TempDir()
	var report strings.Builder
	logf := func(format string, a ...any) {
		line := fmt.Sprintf(format, a...)
		t.Log(line)
		report.WriteString(line + "\n")
	}
	defer func() {
		path := filepath.Join(env.outDir, fmt.Sprintf("migration-%d.txt", n))
		if err := os.WriteFile(path, []byte(report.String()), 0o644); err == nil {
			t.Logf("figures written to %s", path)
		}
	}()

	nodes := clusterNodes(n)
	services := max(50, n/10)
	start := time.Now()
	if err := addInstances(nodes); err != nil {
		t.Fatal(err)
	}
	if err := seedNodes(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	if err := seedControlPlane(ctx, nodes[:3]); err != nil {
		t.Fatal(err)
	}
	lbs, err := seedServices(ctx, services)
	if err != nil {
		t.Fatal(err)
	}
	size, err := nodeListBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	logf("cluster: %d Nodes (3 control-plane), %d Services (%d LoadBalancer), kube-apiserver v1.26.13; one LIST of every Node is %s as JSON; seeded in %s",
		n, services, lbs, mib(size), time.Since(start).Round(time.Second))

	proxy, err := startProxy(ctx, env.cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.close()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := proxy.writeKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}

	// plan, with its pre-migrate preflight's AWS checks against the
	// emulator.
	planPath := filepath.Join(dir, "plan.yaml")
	cc := filepath.Join(dir, "ccm-cloud.conf")
	if err := os.WriteFile(cc, []byte("[Global]\nRegion = us-east-1\nVPC = vpc-0demo000000000001\nKubernetesClusterID = demo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sizes0 := responseSizes(t)
	calls0 := env.aws.CallCounts()
	plan := runCLI(ctx, t, proxy, []string{"migrate-from-intree", "plan", "-f", planPath, "--kubeconfig", kubeconfig,
		"--image", "registry.example.com/aws-cloud-controller-manager:v0.0.0-bench", "--cloud-config", cc,
		"--ignore-checks", "aws-load-balancers"}, nil)
	if plan.Err != nil {
		t.Fatalf("plan: %v\n%s", plan.Err, plan.Output)
	}
	logf("plan: %s", plan.summary(false))
	logf("plan: requests by kind: %s", plan.Traffic)
	logf("plan: AWS calls (the emulator's count): %s", callsSince(calls0))
	logf("plan: the apiserver's LIST responses meanwhile, all clients (apiserver_response_sizes_sum, as written: compressed): %s", responseSizes(t).since(sizes0))
	data, err := os.ReadFile(planPath)
	if err != nil {
		t.Fatal(err)
	}
	p, err := migrate.DecodePlan(data)
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.Cluster.Nodes != n || len(p.Spec.Cluster.ControlPlaneNodes) != 3 || len(p.Spec.LoadBalancers) != lbs {
		t.Fatalf("plan saw %d Nodes, control plane %v, %d load balancers; want %d, 3, %d", p.Spec.Cluster.Nodes, p.Spec.Cluster.ControlPlaneNodes, len(p.Spec.LoadBalancers), n, lbs)
	}
	var kubeletSteps []*migrate.Step
	for i := range p.Spec.Steps {
		if p.Spec.Steps[i].Phase == migrate.PhaseKubeletExternal {
			kubeletSteps = append(kubeletSteps, &p.Spec.Steps[i])
		}
	}
	if len(kubeletSteps) == 0 {
		t.Fatalf("the plan has no %s step", migrate.StepKubeletExternal)
	}
	logf("plan: %d bytes of YAML; kubelet steps: %s", len(data), stepSizes(kubeletSteps))

	// apply's first steps: verify-cluster takes the guards' baseline (one
	// list of every Node), migration-rbac makes the reports' ConfigMaps.
	first := runCLI(ctx, t, proxy, []string{"migrate-from-intree", "apply", "--plan", planPath, "--kubeconfig", kubeconfig, "--approve",
		"--until", migrate.StepMigrationRBAC}, nil)
	if first.Err != nil {
		t.Fatalf("apply --until %s: %v\n%s", migrate.StepMigrationRBAC, first.Err, first.Output)
	}
	logf("apply --until %s: %s", migrate.StepMigrationRBAC, first.summary(false))
	store := &migrate.Store{Client: env.kube}
	started, err := store.Update(ctx, func(j *migrate.Journal) error {
		now := metav1.Now()
		for _, name := range skippedSteps {
			if r := j.Record(name); r != nil {
				r.State, r.Started, r.Finished, r.Message = migrate.StateDone, &now, &now, "not run: the bench starts at the kubelet steps"
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ref := started.BaselineRef
	if ref == nil || ref.Nodes != n {
		t.Fatalf("journal's baseline: %+v, want one of %d Nodes", ref, n)
	}
	journal, err := env.kube.CoreV1().ConfigMaps(migrate.Namespace).Get(ctx, migrate.JournalName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	logf("journal: %d bytes; the guards' baseline of %d Nodes beside it: %d bytes gzipped in %d ConfigMaps (one holds at most 1 MiB)",
		len(journal.Data[migrate.JournalKey]), n, ref.Bytes, ref.Pieces)

	// apply through the last kubelet step, the nodes played by their
	// reports, while every Node's kubelet posts its status every 5 min.
	last := kubeletSteps[len(kubeletSteps)-1].Name
	names := make([]string, len(nodes))
	for i, nd := range nodes {
		names[i] = nd.Name
	}
	hbCtx, hbStop := context.WithCancel(ctx)
	hbDone := make(chan int64, 1)
	go func() { hbDone <- heartbeats(hbCtx, names, float64(n)/300) }()
	exited := make(chan struct{})
	var lastReport time.Time
	var playErr error
	var playTook []string
	sizes0 = responseSizes(t)
	playCtx, playCancel := context.WithCancel(ctx)
	defer playCancel()
	apply := runCLI(ctx, t, proxy, []string{"migrate-from-intree", "apply", "--plan", planPath, "--kubeconfig", kubeconfig, "--approve", "--until", last}, func() {
		go func() {
			defer close(exited)
			for _, s := range kubeletSteps {
				if _, err := waitStepStarted(playCtx, s.Name); err != nil {
					playErr = err
					return
				}
				began := time.Now()
				var writes []time.Duration
				if lastReport, writes, playErr = playNodes(playCtx, s.Nodes, rate); playErr != nil {
					return
				}
				playTook = append(playTook, fmt.Sprintf("%s: %d reports in %s (each write %s)", s.Name, len(s.Nodes), lastReport.Sub(began).Round(100*time.Millisecond), latencies(writes)))
			}
		}()
	})
	hbStop()
	beats := <-hbDone
	if apply.Err != nil {
		playCancel() // the nodes wait for a step that will not begin
	}
	<-exited
	if apply.Err != nil || playErr != nil {
		t.Fatalf("apply --until %s: %v (nodes: %v)\n%s", last, apply.Err, playErr, apply.Output)
	}
	logf("apply --until %s (from %s): %s", last, kubeletSteps[0].Name, apply.summary(true))
	logf("apply: requests by kind: %s", apply.Traffic)
	logf("apply: the apiserver's LIST responses meanwhile, all clients (apiserver_response_sizes_sum, as written: compressed): %s", responseSizes(t).since(sizes0))
	logf("nodes: %s, at %.0f reports/s; %d Node status heartbeats meanwhile (N/300 a second)", strings.Join(playTook, "; "), rate, beats)
	logf("the CLI's responses by media type, plan and apply: %s", proxy.mediaTypes())
	passedAt, err := gatePassed(apply.Output, last)
	if err != nil {
		t.Fatal(err)
	}
	logf("apply: the %s gate passed %s after the last report was written", last, passedAt.Sub(lastReport).Round(10*time.Millisecond))
	j, err := store.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range kubeletSteps {
		if r := j.Record(s.Name); r == nil || r.State != migrate.StateDone {
			t.Errorf("journal: step %s is %+v, want done", s.Name, r)
		}
	}
}

func stepSizes(steps []*migrate.Step) string {
	var parts []string
	for _, s := range steps {
		parts = append(parts, fmt.Sprintf("%s (%d nodes)", s.Name, len(s.Nodes)))
	}
	return strings.Join(parts, ", ")
}

// passLine is the CLI's line for a passed gate: "15:04:05.000 ✓ step <name> passed its gate after ...".
var passLine = regexp.MustCompile(`(?m)^(\d\d:\d\d:\d\d\.\d\d\d) ✓ step (\S+) passed its gate`)

// gatePassed is when the CLI printed that step's gate passed (its lines
// carry the UTC time of day).
func gatePassed(output, step string) (time.Time, error) {
	for _, m := range passLine.FindAllStringSubmatch(output, -1) {
		if m[2] != step {
			continue
		}
		tod, err := time.Parse("15:04:05.000", m[1])
		if err != nil {
			return time.Time{}, err
		}
		now := time.Now().UTC()
		at := time.Date(now.Year(), now.Month(), now.Day(), tod.Hour(), tod.Minute(), tod.Second(), tod.Nanosecond(), time.UTC)
		if at.After(now) { // the run crossed midnight
			at = at.AddDate(0, 0, -1)
		}
		return at, nil
	}
	return time.Time{}, fmt.Errorf("apply's output has no line saying step %s passed its gate:\n%s", step, output)
}

// nodeListBytes is the size of one JSON list of every Node.
func nodeListBytes(ctx context.Context) (int64, error) {
	raw, err := env.admin.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes").Param("resourceVersion", "0").DoRaw(ctx)
	return int64(len(raw)), err
}

// callsSince lists the AWS calls the emulator served after before.
func callsSince(before map[string]int) string {
	now := env.aws.CallCounts()
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(now)) {
		if d := now[k] - before[k]; d > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, d))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}
