package migration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/migrate"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// The HA control plane: cpA and two more nodes, one per zone, each with a
// kube-controller-manager v1.26.13 under its own host name and a CCM Pod.
var (
	cpB = cpSpec{Node: "ip-10-0-2-40.ec2.internal", ID: "i-0a1b2c3d4e5f60021", IP: "10.0.2.40", Zone: "us-east-1b", Hostname: "ip-10-0-2-40"}
	cpC = cpSpec{Node: "ip-10-0-3-40.ec2.internal", ID: "i-0a1b2c3d4e5f60031", IP: "10.0.3.40", Zone: "us-east-1c", Hostname: "ip-10-0-3-40"}
)

// haInstances are cpB's and cpC's instances, added to the demo fixture.
func haInstances() []awsemu.Instance {
	var out []awsemu.Instance
	for _, c := range []struct {
		spec   cpSpec
		subnet string
	}{{cpB, "subnet-0demo00000000000b"}, {cpC, "subnet-0demo00000000000c"}} {
		out = append(out, awsemu.Instance{
			ID: c.spec.ID, Type: "m5.large", SubnetID: c.subnet, PrivateIP: c.spec.IP,
			SecurityGroupIDs: []string{"sg-0demo000000000001"}, LaunchTime: time.Date(2026, 1, 15, 9, 0, 0, 0, time.UTC),
			Tags: map[string]string{"Name": "demo-control-plane", "kubernetes.io/cluster/" + clusterID: "owned"},
		})
	}
	return out
}

// The operator's pace: the control-plane node steps one node at a time,
// 20 s apart (more than the 15 s after which the old cut-over gate called
// the legitimate holder's renewals trap C); the kubelet steps a second
// apart; a rollback 5 s apart.
func operatorPace(reverse bool, rollingBack *atomic.Bool, mark func(string)) *pacing {
	return &pacing{Reverse: reverse, Delay: func(phase string) time.Duration {
		switch {
		case phase == migrate.PhaseKubeletExternal:
			return time.Second
		case rollingBack.Load():
			return 5 * time.Second
		}
		return 20 * time.Second
	}, OnRun: mark}
}

// haCluster is the three-node control plane and its worker.
type haCluster struct {
	dir      string
	cps      []*controlPlane
	ccms     []*ccmKubelet
	roots    map[string]string
	planPath string
	plan     *migrate.MigrationPlan
}

func TestMigrateHA(t *testing.T) {
	skipWithoutTestBed(t)
	ctx := context.Background()
	h := &haCluster{dir: t.TempDir(), roots: map[string]string{}}
	// A new cluster on the shared control plane: no journal of another
	// plan, the single-node cases' Nodes kept (cpA joins this control
	// plane), two more control-plane Nodes registered by in-tree kubelets.
	forgetMigration(t)
	ensureInTreeNode(t, cpA, true)
	ensureInTreeNode(t, cpSpec{Node: workNode, ID: workID, IP: "10.0.2.20", Zone: "us-east-1b"}, false)
	t.Cleanup(func() { removeNodes(t, cpB.Node, cpC.Node) })
	for _, c := range []cpSpec{cpB, cpC} {
		ensureInTreeNode(t, c, true)
	}
	ensureKubeadmConfig(t)
	for _, c := range []cpSpec{cpA, cpB, cpC} {
		cp := startControlPlaneNodeFor(t, c)
		h.cps = append(h.cps, cp)
		h.roots[c.Node] = cp.root
	}
	h.roots[workNode] = nodeRoot(t, "kubeadm-worker", nil)
	waitFor(t, 2*time.Minute, "a kube-controller-manager to lead", func(ctx context.Context) (bool, error) {
		hold := kcmLeaseHolder(ctx)
		return strings.HasPrefix(hold, "ip-10-0-"), nil
	})
	h.planPath = filepath.Join(h.dir, "plan.yaml")
	cc := filepath.Join(h.dir, "ccm-cloud.conf")
	writeFile(t, cc, []byte("[Global]\nRegion = us-east-1\nVPC = vpc-0demo000000000001\nKubernetesClusterID = demo\n"))
	out, err := ctl(ctx, "migrate-from-intree", "plan", "-f", h.planPath, "--kubeconfig", env.cp.KubeconfigPath,
		"--image", "registry.example.com/aws-cloud-controller-manager:v0.0.0-e2e", "--cloud-config", cc, "--node-step-timeout", "5m")
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	data, err := os.ReadFile(h.planPath)
	if err != nil {
		t.Fatal(err)
	}
	if h.plan, err = migrate.DecodePlan(data); err != nil {
		t.Fatal(err)
	}
	if got, want := h.plan.Spec.Cluster.ControlPlaneNodes, []string{cpA.Node, cpB.Node, cpC.Node}; !slices.Equal(got, want) {
		t.Fatalf("plan's control plane: %v, want %v", got, want)
	}
	for _, c := range []cpSpec{cpA, cpB, cpC} {
		h.ccms = append(h.ccms, startCCMKubeletOn(t, c))
	}
	t.Run("in the order apply prints, 20 s apart", func(t *testing.T) { h.migrateAndRollBack(t, false) })
	t.Run("in the other order, 20 s apart", func(t *testing.T) { h.migrateAndRollBack(t, true) })
	t.Run("node steps as Pods, at most 2 at once", func(t *testing.T) { h.migrateAndRollBackWithPods(t) })
}

// nodeSteps runs the node steps: the operator's agent, or the nodes' Pods.
type nodeSteps interface {
	Runs() []string
	Stop()
}

// migrateAndRollBackWithPods is migrateAndRollBack with apply and rollback
// running every node step as Pods (--node-runner=pods) on the static-Pod
// runner's nodes and the worker.
func (h *haCluster) migrateAndRollBackWithPods(t *testing.T) {
	pods := startPodNodes(t, h.roots)
	h.migrateAndRollBackBy(t, false, pods, pods.flags())
	pods.check(t, []string{
		migrate.PhaseControlPlaneLeaderMigration, migrate.PhaseControlPlaneExternal, migrate.PhaseKubeletExternal,
		migrate.PhaseRestore + "/" + migrate.ScopeKubelet, migrate.PhaseRestore + "/" + migrate.ScopeControlPlane,
	})
}

// targets are the monitor's view: every kube-controller-manager and CCM.
func (h *haCluster) targets() []managerTarget {
	var out []managerTarget
	for _, cp := range h.cps {
		out = append(out, managerTarget{Name: "kcm/" + cp.spec.Node, Kind: kindKCM, Hostname: cp.spec.Hostname,
			Healthz:  healthzOverHTTPS("https://127.0.0.1:" + strconv.Itoa(cp.port)),
			External: processRunsExternal(cp.runner)})
	}
	for _, k := range h.ccms {
		out = append(out, managerTarget{Name: "ccm/" + k.node, Kind: kindCCM, Healthz: k.healthz})
	}
	return out
}

// migrateAndRollBack runs apply to the end with the node steps at an
// operator's pace, then rollback, watching both with the monitor.
func (h *haCluster) migrateAndRollBack(t *testing.T, reverse bool) {
	h.migrateAndRollBackBy(t, reverse, nil, nil)
}

// migrateAndRollBackBy is migrateAndRollBack with the node steps run by
// steps (nil: the operator's agent at their pace) and flags added to apply
// and rollback.
func (h *haCluster) migrateAndRollBackBy(t *testing.T, reverse bool, steps nodeSteps, flags []string) {
	ctx := context.Background()
	before := clusterIdentity(t)
	targets := h.targets()
	mon := startMonitor(t, 250*time.Millisecond, func() []managerTarget { return targets })
	var rollingBack atomic.Bool
	agent := steps
	if agent == nil {
		agent = startPacedNodeAgent(t, h.plan, h.roots, operatorPace(reverse, &rollingBack, mon.Mark))
	}
	start := time.Now()
	out, err := ctl(ctx, append([]string{"migrate-from-intree", "apply", "--plan", h.planPath, "--approve", "--poll-interval", "250ms", "--kubeconfig", env.cp.KubeconfigPath}, flags...)...)
	applied := time.Now()
	mon.Mark("apply exited")
	if err != nil {
		t.Fatalf("apply: exit %d (resume must not be needed)\n%s\nnode steps: %v\nmonitor: %s", exitCode(err), out, agent.Runs(), mon.Stop())
	}
	t.Logf("apply took %s; node steps: %v\napply's output:\n%s", applied.Sub(start).Round(time.Second), agent.Runs(), out)
	st := h.status(t)
	if st.Handover == nil || st.Handover.CCMAcquired == nil {
		t.Fatalf("no hand-over recorded: %+v", st)
	}
	gap := st.Handover.Gap.Duration
	t.Logf("hand-over: %s (holder exited %v, KCM last renewal %v, CCM acquired %s)", gap, st.Handover.HolderExited, st.Handover.KCMLastRenew, st.Handover.CCMAcquired.UTC().Format(stampFormat))
	if st.Handover.HolderExited == nil {
		t.Errorf("the migration lease was not released on the holder's exit: %s", out)
	}
	if gap <= 0 || gap >= 5*time.Second {
		t.Errorf("hand-over %s, want under 5 s", gap)
	}
	for _, name := range []string{migrate.StepKCMLeaderMigration, migrate.StepCutOver} {
		if rec := journalRecord(t, name); rec == nil || len(rec.Order) != 3 {
			t.Errorf("step %s: no order recorded: %+v", name, rec)
		} else {
			t.Logf("step %s: order %v", name, rec.Order)
		}
	}
	if after := clusterIdentity(t); after != before {
		t.Errorf("Nodes' providerIDs or load balancers' hostnames changed during apply:\nbefore %s\nafter  %s", before, after)
	}
	cut := st.Handover.CCMAcquired.Time
	log := env.aws.CallLog()
	inTreeAfter := countCalls(log, cut, time.Now(), awsemu.Call.SDKv1)
	ccmMutating := countCalls(log, start, time.Now(), func(c awsemu.Call) bool { return c.SDKv2() && c.Mutating() })
	t.Logf("AWS calls: in-tree after the cut-over %d, CCM mutating %d\n%s", inTreeAfter, ccmMutating, summaryCalls(log, start, cut))
	if inTreeAfter != 0 {
		t.Errorf("%d in-tree calls after the CCM took the migration lease", inTreeAfter)
	}
	if ccmMutating != 0 {
		t.Errorf("the CCM made %d mutating AWS calls during the move", ccmMutating)
	}

	mon.Mark("rollback started")
	rollingBack.Store(true)
	rbStart := time.Now()
	out, err = ctl(ctx, append([]string{"migrate-from-intree", "rollback", "--plan", h.planPath, "--approve", "--poll-interval", "250ms", "--kubeconfig", env.cp.KubeconfigPath}, flags...)...)
	rbEnd := time.Now()
	// Done means as before: a kube-controller-manager runs the loops now.
	var running []string
	for _, cp := range h.cps {
		if checks, herr := healthzOverHTTPS("https://127.0.0.1:" + strconv.Itoa(cp.port))(ctx); herr == nil {
			if r := leadermigration.Running(checks, leadermigration.KCMNames()); len(r) > 0 {
				running = append(running, cp.spec.Node+" runs "+strings.Join(r, ","))
			}
		}
	}
	mon.Mark("rollback exited")
	rep := mon.Stop()
	agent.Stop()
	t.Logf("monitor (apply %s, rollback %s):\n%s", applied.Sub(start).Round(time.Second), rbEnd.Sub(rbStart).Round(time.Second), rep)
	t.Logf("rollback's output:\n%s", out)
	if err != nil {
		t.Fatalf("rollback: exit %d", exitCode(err))
	}
	if after := clusterIdentity(t); after != before {
		t.Errorf("Nodes' providerIDs or load balancers' hostnames changed by the rollback:\nbefore %s\nafter  %s", before, after)
	}
	if len(running) != 1 {
		t.Errorf("when rollback exited, kube-controller-managers running the cloud loops: %v, want exactly one", running)
	}
	if len(rep.SplitBrain) > 0 {
		t.Errorf("split brain in %d samples: %v", len(rep.SplitBrain), rep.SplitBrain)
	}
	if len(rep.ExternalKCMRenews) > 0 {
		t.Errorf("the migration lease was renewed by an external kube-controller-manager: %v", rep.ExternalKCMRenews)
	}
	// The hand-over: the gap that ends when the CCM took the migration
	// lease. (The CCM's own restarts, at finalize and in the rollback,
	// leave gaps of one lease duration: its Lease is not released; the
	// report lists them.)
	for _, g := range rep.Gaps {
		if !g.From.After(cut) && g.To.After(cut.Add(-10*time.Second)) && g.Duration() >= 5*time.Second {
			t.Errorf("no manager ran the cloud loops for %s from %s at the cut-over, want under 5 s", g.Duration(), g.From.UTC().Format(stampFormat))
		}
	}
}

func (h *haCluster) status(t *testing.T) migrate.Status {
	t.Helper()
	out, err := ctl(context.Background(), "migrate-from-intree", "status", "-o", "json", "--kubeconfig", env.cp.KubeconfigPath)
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	var st migrate.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, out)
	}
	return st
}

func journalRecord(t *testing.T, step string) *migrate.StepRecord {
	t.Helper()
	j, err := (&migrate.Store{Client: env.kube}).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return j.Record(step)
}

// ensureInTreeNode registers a Node as an in-tree kubelet does, unless it
// exists. Control-plane Nodes other than cpA carry kubeadm's label that
// keeps them out of load balancers, so the in-tree service controller
// leaves the single-node cases' load balancers as they are.
func ensureInTreeNode(t *testing.T, c cpSpec, controlPlane bool) {
	t.Helper()
	if _, err := env.kube.CoreV1().Nodes().Get(context.Background(), c.Node, metav1.GetOptions{}); err == nil {
		return
	}
	registerInTreeNode(t, c.Node, c.Zone, c.ID, c.IP, controlPlane)
	if c.Node == cpA.Node || !controlPlane {
		return
	}
	n, err := env.kube.CoreV1().Nodes().Get(context.Background(), c.Node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Labels[corev1.LabelNodeExcludeBalancers] = ""
	if _, err := env.kube.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// ensureKubeadmConfig writes kube-system/kubeadm-config unless it exists.
func ensureKubeadmConfig(t *testing.T) {
	t.Helper()
	_, err := env.kube.CoreV1().ConfigMaps("kube-system").Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeadm-config", Namespace: "kube-system"},
		Data:       map[string]string{"ClusterConfiguration": kubeadmClusterConfiguration},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// removeNodes deletes Nodes and their mirror Pods (a stopped static-Pod
// runner leaves them), so later cases see the control plane they expect.
func removeNodes(t *testing.T, names ...string) {
	ctx := context.Background()
	for _, n := range names {
		if err := env.kube.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete Node %s: %v", n, err)
		}
		pods, err := env.kube.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n})
		if err != nil {
			t.Errorf("list Pods of %s: %v", n, err)
			continue
		}
		for _, p := range pods.Items {
			_ = env.kube.CoreV1().Pods("kube-system").Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
		}
	}
}

// clusterIdentity is what the guards hold: every Node's providerID and
// every LoadBalancer Service's hostname, with the emulator's load balancers.
func clusterIdentity(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	nodes, err := env.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range nodes.Items {
		out = append(out, n.Name+"="+n.Spec.ProviderID)
	}
	svcs, err := env.kube.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range svcs.Items {
		if s.Spec.Type == corev1.ServiceTypeLoadBalancer && len(s.Status.LoadBalancer.Ingress) > 0 {
			out = append(out, s.Namespace+"/"+s.Name+"="+s.Status.LoadBalancer.Ingress[0].Hostname)
		}
	}
	slices.Sort(out)
	return strings.Join(out, " ") + "; " + lbInventory()
}

// forgetMigration deletes the journal and the reports of an earlier case:
// the shared control plane plays a new cluster, where another plan may run.
func forgetMigration(t *testing.T) {
	t.Helper()
	for _, name := range append([]string{migrate.JournalName}, migrate.ReportConfigMaps()...) {
		err := env.kube.CoreV1().ConfigMaps(migrate.Namespace).Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
}
