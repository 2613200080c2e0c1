package migration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/migrate"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// kubeadmClusterConfiguration is kube-system/kubeadm-config as kubeadm 1.26
// wrote it for this control plane.
const kubeadmClusterConfiguration = `apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v1.26.13
clusterName: kubernetes
controlPlaneEndpoint: 10.0.1.10:6443
apiServer:
  extraArgs:
    cloud-config: /etc/kubernetes/cloud.conf
    cloud-provider: aws
    enable-admission-plugins: NodeRestriction,PersistentVolumeLabel
  extraVolumes:
  - hostPath: /etc/kubernetes/cloud.conf
    mountPath: /etc/kubernetes/cloud.conf
    name: cloud-config
    pathType: FileOrCreate
    readOnly: true
controllerManager:
  extraArgs:
    allocate-node-cidrs: "true"
    cloud-config: /etc/kubernetes/cloud.conf
    cloud-provider: aws
    cluster-name: demo
    configure-cloud-routes: "true"
  extraVolumes:
  - hostPath: /etc/kubernetes/cloud.conf
    mountPath: /etc/kubernetes/cloud.conf
    name: cloud-config
    pathType: FileOrCreate
    readOnly: true
networking:
  podSubnet: 10.244.0.0/16
  serviceSubnet: 10.96.0.0/12
`

// scenario is the migrated cluster, shared by the steps of the test.
type scenario struct {
	dir        string
	cp         *controlPlane
	workerRoot string
	// workerPath, when the worker runs a real kubelet (realWorker), is the
	// PATH under which its node step finds the node's systemctl.
	workerPath string
	realWorker bool
	planPath   string
	plan       *migrate.MigrationPlan
	originals  map[string]map[string]string // root -> file -> bytes
	hostnames  map[string]string
	lbs        string
	routes     []string // the in-tree route controller's routes
	routesMade time.Time
	transcript strings.Builder
}

func TestMigrateFromInTree(t *testing.T) {
	skipWithoutTestBed(t)
	s := &scenario{dir: t.TempDir()}
	ctx := context.Background()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("transcript:\n%s", s.transcript.String())
		}
	})

	t.Log("an in-tree kubeadm 1.26 cluster: kube-controller-manager --cloud-provider=aws from its manifest")
	registerInTreeNode(t, cpNode, "us-east-1a", cpID, cpIP, true)
	s.startWorker(t)
	_, err := env.kube.CoreV1().ConfigMaps("kube-system").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeadm-config", Namespace: "kube-system"},
		Data:       map[string]string{"ClusterConfiguration": kubeadmClusterConfiguration},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.cp = startControlPlaneNode(t)
	// The control-plane host is named as its Node (Amazon Linux); the
	// worker's is short (Ubuntu): see startWorker.
	writeFile(t, filepath.Join(s.cp.root, "etc", "hostname"), []byte(cpNode+"\n"))
	s.originals = map[string]map[string]string{s.cp.root: readTree(t, s.cp.root), s.workerRoot: readTree(t, s.workerRoot)}
	waitFor(t, 90*time.Second, "kube-controller-manager to lead", func(ctx context.Context) (bool, error) {
		h := kcmLeaseHolder(ctx)
		return h != "", nil
	})

	t.Log("a Classic ELB and an NLB made by the in-tree service controller")
	createLBService(t, "web-classic", nil, 30080)
	createLBService(t, "web-nlb", map[string]string{"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"}, 30081)
	s.hostnames = map[string]string{}
	for _, svc := range []string{"web-classic", "web-nlb"} {
		waitFor(t, 90*time.Second, svc+"'s load balancer", func(context.Context) (bool, error) { return hostname(t, svc) != "", nil })
		s.hostnames[svc] = hostname(t, svc)
	}
	s.lbs = lbInventory()

	t.Log("cloud routes: the in-tree route controller routes each Node's pod CIDR to its instance")
	s.routes = waitForInTreeRoutes(t)
	s.routesMade = time.Now()
	t.Logf("in-tree routes: %v", s.routes)
	inTreeCalls := countCalls(env.aws.CallLog(), time.Time{}, time.Now(), awsemu.Call.SDKv1)
	if inTreeCalls == 0 {
		t.Fatal("the in-tree provider made no AWS call: the emulator is not its endpoint")
	}

	t.Run("plan", s.testPlan)
	t.Run("apply, killed mid-way, then resume", s.testApplyKillResume)
	t.Run("rollback to in-tree", s.testRollback)
	t.Run("trap C fails the cut-over gate", s.testTrapC)
	if dir := os.Getenv("MIGRATION_TRANSCRIPT_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "transcript.txt"), []byte(s.transcript.String()), 0o644)
	}
}

func (s *scenario) adminArgs(args ...string) []string {
	return append(args, "--kubeconfig", env.cp.KubeconfigPath)
}

func (s *scenario) testPlan(t *testing.T) {
	s.planPath = filepath.Join(s.dir, "plan.yaml")
	cc := filepath.Join(s.dir, "ccm-cloud.conf")
	writeFile(t, cc, []byte("[Global]\nRegion = us-east-1\nVPC = vpc-0demo000000000001\nKubernetesClusterID = demo\n"))
	out, err := ctl(context.Background(), s.adminArgs("migrate-from-intree", "plan", "-f", s.planPath,
		"--image", "registry.example.com/aws-cloud-controller-manager:v0.0.0-e2e", "--cloud-config", cc, "--node-step-timeout", "3m")...)
	s.transcript.WriteString("$ awsccmctl migrate-from-intree plan\n" + out + "\n")
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	data, err := os.ReadFile(s.planPath)
	if err != nil {
		t.Fatal(err)
	}
	s.transcript.WriteString("--- plan.yaml ---\n" + string(data) + "\n")
	if s.plan, err = migrate.DecodePlan(data); err != nil {
		t.Fatal(err)
	}
	if got := s.plan.Spec.Cluster; got.KubernetesVersion != "v1.26.13" || got.Distribution != migrate.DistributionKubeadm ||
		!slices.Equal(got.ControlPlaneNodes, []string{cpNode}) || got.ClusterName != "demo" {
		t.Errorf("plan's cluster: %+v", got)
	}
	if len(s.plan.Spec.LoadBalancers) != 2 {
		t.Errorf("plan's load balancers: %+v", s.plan.Spec.LoadBalancers)
	}
}

func (s *scenario) testApplyKillResume(t *testing.T) {
	if s.plan == nil {
		t.Skip("no plan")
	}
	ccm := startCCMKubelet(t)
	agent := s.startAgent(t)
	nodeWatch := watchNodeChanges(t)
	start := time.Now()

	// apply, killed (SIGKILL: no chance to clean up) while it waits at
	// install-ccm's gate.
	applyLog := filepath.Join(s.dir, "apply.log")
	f, err := os.Create(applyLog)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), env.ctlBin, s.adminArgs("migrate-from-intree", "apply", "--plan", s.planPath, "--approve", "--poll-interval", "250ms")...)
	cmd.Env = append(os.Environ(), awsEnv()...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	store := &migrate.Store{Client: env.kube}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(applyLog)
			t.Logf("apply's output:\n%s", b)
		}
	})
	waitFor(t, 3*time.Minute, "apply to reach install-ccm", func(ctx context.Context) (bool, error) {
		if cmd.ProcessState != nil {
			return false, fmt.Errorf("apply exited")
		}
		j, err := store.Load(ctx)
		if err != nil {
			return false, err
		}
		r := j.Record(migrate.StepInstallCCM)
		return r != nil && r.State == migrate.StateRunning, nil
	})
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	_ = f.Close()
	applyOut, _ := os.ReadFile(applyLog)
	s.transcript.WriteString("$ awsccmctl migrate-from-intree apply --plan plan.yaml --approve   (killed with SIGKILL at install-ccm)\n" + string(applyOut) + "\n")

	out, err := ctl(context.Background(), s.adminArgs("migrate-from-intree", "status")...)
	s.transcript.WriteString("$ awsccmctl migrate-from-intree status\n" + out + "\n")
	if err != nil || !strings.Contains(out, "in progress at install-ccm") {
		t.Errorf("status after the kill: %v\n%s", err, out)
	}

	out, err = ctl(context.Background(), s.adminArgs("migrate-from-intree", "resume", "--plan", s.planPath, "--approve", "--poll-interval", "250ms")...)
	s.transcript.WriteString("$ awsccmctl migrate-from-intree resume --plan plan.yaml --approve\n" + out + "\n")
	if err != nil {
		t.Fatalf("resume: exit %d\n%s\nnode steps run: %v", exitCode(err), out, agent.Runs())
	}
	s.checkKubeletsSwitched(t, out, agent)
	t.Logf("apply + resume took %s; node steps: %v", time.Since(start).Round(time.Second), agent.Runs())

	out, err = ctl(context.Background(), s.adminArgs("migrate-from-intree", "status", "-o", "json")...)
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	var st migrate.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, out)
	}
	if !st.Done || st.Handover == nil || st.Handover.CCMAcquired == nil {
		t.Fatalf("status after resume: %s", out)
	}
	gap := st.Handover.Gap.Duration
	t.Logf("hand-over gap: %s", gap)
	s.transcript.WriteString("hand-over gap (CCM acquired - last kube-controller-manager renewal): " + gap.String() + "\n")
	if gap <= 0 || gap > s.plan.Spec.Handover.GateBound.Duration {
		t.Errorf("hand-over gap %s outside (0, %s]", gap, s.plan.Spec.Handover.GateBound.Duration)
	}

	// Calls by SDK around the cut-over: none from the in-tree provider
	// after the CCM took the lease; none that changed a load balancer from
	// the CCM.
	cut := st.Handover.CCMAcquired.Time
	log := env.aws.CallLog()
	before := countCalls(log, start, cut, awsemu.Call.SDKv1)
	after := countCalls(log, cut, time.Now(), awsemu.Call.SDKv1)
	v2 := countCalls(log, start, time.Now(), awsemu.Call.SDKv2)
	v2mut := countCalls(log, start, time.Now(), func(c awsemu.Call) bool { return c.SDKv2() && c.Mutating() })
	s.transcript.WriteString(summaryCalls(log, start, cut))
	if after != 0 {
		t.Errorf("%d in-tree (aws-sdk-go v1) calls after the cut-over", after)
	}
	if v2 == 0 {
		t.Error("the CCM made no AWS call")
	}
	if v2mut != 0 {
		t.Errorf("the CCM made %d mutating calls: %s", v2mut, summaryCalls(log, start, cut))
	}
	t.Logf("calls: in-tree before cut-over %d, after %d; CCM %d (mutating %d)", before, after, v2, v2mut)

	// Routes: the CCM's route controller owns the in-tree routes as they
	// are. It reads the table every reconciliation period (10 s); after
	// three reads since the hand-over, no route was deleted and created
	// again, by either manager, and the routes are the same.
	waitFor(t, 90*time.Second, "the CCM to read the route table three times since the hand-over", func(context.Context) (bool, error) {
		return countCalls(env.aws.CallLog(), cut, time.Now(), func(c awsemu.Call) bool { return c.SDKv2() && c.Action == "DescribeRouteTables" }) >= 3, nil
	})
	if n := routeCallsSince(cut, func(awsemu.Call) bool { return true }); len(n) > 0 {
		t.Errorf("route changes since the hand-over: %v", n)
	}
	if n := routeCallsSince(s.routesMade, awsemu.Call.SDKv2); len(n) > 0 {
		t.Errorf("the CCM changed routes during the move: %v", n)
	}
	if got := clusterRoutes(t); !slices.Equal(got, s.routes) {
		t.Errorf("routes after the move:\n  %v\nwant the in-tree ones:\n  %v", got, s.routes)
	}
	fmt.Fprintf(&s.transcript, "routes before and after the move: %v\n", s.routes)
	// And the CCM owns them now: a route deleted by hand comes back,
	// created by the CCM.
	mark := time.Now()
	deleteRouteAsOperator(t, podCIDR(t, workNode))
	waitFor(t, time.Minute, "the CCM to route the worker's pod CIDR again", func(context.Context) (bool, error) {
		return slices.Equal(clusterRoutes(t), s.routes), nil
	})
	if n := routeCallsSince(mark, awsemu.Call.SDKv1); len(n) > 0 {
		t.Errorf("the in-tree provider changed routes after the move: %v", n)
	}
	if n := routeCallsSince(mark, awsemu.Call.SDKv2); n["CreateRoute"] != 1 || n["ModifyInstanceAttribute"] != 0 {
		t.Errorf("the CCM's route changes after a route was deleted by hand: %v, want one CreateRoute (source/destination check already off)", n)
	}

	// Guards, checked independently of the gates.
	for svc, h := range s.hostnames {
		if got := hostname(t, svc); got != h {
			t.Errorf("Service %s's hostname changed: %s -> %s", svc, h, got)
		}
	}
	if got := lbInventory(); got != s.lbs {
		t.Errorf("load balancers changed:\nbefore %s\nafter  %s", s.lbs, got)
	}
	for _, n := range []string{cpNode, workNode} {
		node, err := env.kube.CoreV1().Nodes().Get(context.Background(), n, metav1.GetOptions{})
		if err != nil {
			t.Errorf("Node %s: %v", n, err)
			continue
		}
		if !strings.HasSuffix(node.Spec.ProviderID, "/"+map[string]string{cpNode: cpID, workNode: workID}[n]) {
			t.Errorf("Node %s providerID %s", n, node.Spec.ProviderID)
		}
	}
	// From apply's start to finalize no Node field changed value: the
	// CCM took over Nodes the in-tree provider and its kubelets made
	// without a write that changed anything, and the kubelets restarted
	// external kept their Nodes as they were.
	changes, writes := nodeWatch.Stop()
	fmt.Fprintf(&s.transcript, "Node writes from apply to finalize: %d; writes that changed a label, an address, the providerID or a taint, or a Node created or deleted: %d\n", writes, len(changes))
	for _, c := range changes {
		t.Errorf("a Node changed during the move: %s", c)
	}
	if writes == 0 {
		// The kubelets restarted and the CCM's status passes write Nodes:
		// a watch that saw none saw nothing, and its 0 proves nothing.
		t.Error("the Node watch saw no Node write from apply to finalize: it is not watching")
	}
	// Nodes stay Ready across their kubelet's restart: not Ready, if at
	// all, for less than the Ready guard's bound.
	notReady := nodeWatch.NotReady()
	fmt.Fprintf(&s.transcript, "Node not-Ready episodes from apply to finalize: %d %v\n", len(notReady), notReady)
	for _, e := range notReady {
		if e.To.Sub(e.From) >= 90*time.Second {
			t.Errorf("%s: longer than the Ready guard's 90 s", e)
		}
	}
	if _, err := env.kube.CoordinationV1().Leases("kube-system").Get(context.Background(), leadermigration.LeaseName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the migration lease is left: %v", err)
	}
	// finalize removed what the migration added.
	if _, err := env.kube.RbacV1().Roles("kube-system").Get(context.Background(), migrate.MigrationRoleName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Role %s is left after finalize: %v", migrate.MigrationRoleName, err)
	}
	for _, name := range migrate.ReportConfigMaps() {
		if _, err := env.kube.CoreV1().ConfigMaps("kube-system").Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("ConfigMap %s is left after finalize: %v", name, err)
		}
	}
	if ccm.Starts() < 2 {
		t.Errorf("the CCM was started %d times; finalize restarts it without leader migration", ccm.Starts())
	}
	// The node files pass the node preflight after the move.
	// The exit status is not the point: each finding's status is checked below.
	out, _ = ctl(context.Background(), "preflight", "--node", "--root", s.cp.root, "--mode", "post-install", "--aws=false", "-o", "json")
	for _, id := range []string{"control-plane-kcm-cloud-provider", "control-plane-apiserver-cloud-provider", "kubelet-cloud-provider"} {
		if !strings.Contains(out, `"id": "`+id+`"`) || findingStatus(out, id) != "pass" {
			t.Errorf("preflight --node: %s is %q\n%s", id, findingStatus(out, id), out)
		}
	}
	ds, err := env.kube.AppsV1().DaemonSets("kube-system").Get(context.Background(), install.AppName, metav1.GetOptions{})
	if err != nil || slices.ContainsFunc(ds.Spec.Template.Spec.Containers[0].Args, func(a string) bool { return strings.Contains(a, "leader-migration") }) {
		t.Errorf("the CCM's DaemonSet after finalize: %v", err)
	}
	// The migration recorded its install as `install apply` does, the
	// DaemonSet as created by it, so `install uninstall` can remove it.
	ac, err := apply.NewClient(env.cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := ac.ReadInventory(context.Background(), "kube-system")
	if err != nil || inv == nil {
		t.Fatalf("the migration's install record (ConfigMap kube-system/%s): %v", apply.InventoryName, err)
	}
	if !slices.ContainsFunc(inv.Members, func(m apply.Member) bool {
		return m.Kind == "DaemonSet" && m.Name == install.AppName && !m.Adopted
	}) {
		t.Errorf("the migration's install record does not hold the CCM's DaemonSet as created: %+v", inv.Members)
	}
}

func (s *scenario) testRollback(t *testing.T) {
	if s.plan == nil {
		t.Skip("no plan")
	}
	startCCMKubelet(t)
	s.startAgent(t)
	start := time.Now()
	out, err := ctl(context.Background(), s.adminArgs("migrate-from-intree", "rollback", "--plan", s.planPath, "--approve", "--poll-interval", "250ms")...)
	s.transcript.WriteString("$ awsccmctl migrate-from-intree rollback --plan plan.yaml --approve\n" + out + "\n")
	if err != nil {
		t.Fatalf("rollback: exit %d\n%s", exitCode(err), out)
	}
	t.Logf("rollback took %s", time.Since(start).Round(time.Second))
	for root, files := range s.originals {
		if got := readTree(t, root); !mapsEqual(got, files) {
			t.Errorf("node files under %s differ from the originals after rollback: %s", root, treeDiff(files, got))
		}
	}
	if _, err := env.kube.AppsV1().DaemonSets("kube-system").Get(context.Background(), install.AppName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the CCM's DaemonSet is left: %v", err)
	}
	if _, err := env.kube.CoreV1().ConfigMaps("kube-system").Get(context.Background(), apply.InventoryName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the install record ConfigMap %s is left after rollback: %v", apply.InventoryName, err)
	}
	if _, err := env.kube.RbacV1().RoleBindings("kube-system").Get(context.Background(), migrate.MigrationRoleName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("RoleBinding %s is left after rollback: %v", migrate.MigrationRoleName, err)
	}
	cm, err := env.kube.CoreV1().ConfigMaps("kube-system").Get(context.Background(), "kubeadm-config", metav1.GetOptions{})
	if err != nil || cm.Data["ClusterConfiguration"] != kubeadmClusterConfiguration {
		t.Errorf("kubeadm-config after rollback: %v\n%s", err, cm.Data["ClusterConfiguration"])
	}
	for svc, h := range s.hostnames {
		if got := hostname(t, svc); got != h {
			t.Errorf("Service %s's hostname changed: %s -> %s", svc, h, got)
		}
	}
	// The in-tree provider runs the loops again: touch a Service and see
	// its calls.
	mark := time.Now()
	svc, err := env.kube.CoreV1().Services("default").Get(context.Background(), "web-classic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Annotations = map[string]string{"service.beta.kubernetes.io/aws-load-balancer-connection-idle-timeout": "120"}
	if _, err := env.kube.CoreV1().Services("default").Update(context.Background(), svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "in-tree calls after the rollback", func(context.Context) (bool, error) {
		return countCalls(env.aws.CallLog(), mark, time.Now(), awsemu.Call.SDKv1) > 0, nil
	})
	if n := countCalls(env.aws.CallLog(), mark, time.Now(), awsemu.Call.SDKv2); n != 0 {
		t.Errorf("%d CCM calls after the rollback", n)
	}
	if got := clusterRoutes(t); !slices.Equal(got, s.routes) {
		t.Errorf("routes after the rollback: %v, want %v", got, s.routes)
	}
}

// testTrapC: a cut-over that leaves leader migration on in
// kube-controller-manager (the documented rolling procedure) must fail the
// gate loudly, not pass on timing luck.
func (s *scenario) testTrapC(t *testing.T) {
	if s.plan == nil {
		t.Skip("no plan")
	}
	startCCMKubelet(t)
	agent := s.startAgent(t)
	manifest := filepath.Join(s.cp.root, "etc", "kubernetes", "manifests", "kube-controller-manager.yaml")
	savedCh := make(chan []byte, 1)
	agent.setOverride(func(step, phase string) bool {
		if step != migrate.StepCutOver || phase != migrate.PhaseControlPlaneExternal {
			return false
		}
		// By hand, as the rolling procedure does: --cloud-provider=external
		// and leader migration kept.
		data, err := os.ReadFile(manifest)
		if err != nil {
			t.Error(err)
			return true
		}
		savedCh <- data
		edited := strings.Replace(string(data), "--cloud-provider=aws", "--cloud-provider=external", 1)
		if err := os.WriteFile(manifest, []byte(edited), 0o644); err != nil {
			t.Error(err)
		}
		return true
	})
	out, err := ctl(context.Background(), s.adminArgs("migrate-from-intree", "apply", "--plan", s.planPath, "--approve", "--poll-interval", "250ms")...)
	s.transcript.WriteString("$ awsccmctl migrate-from-intree apply (trap C: kube-controller-manager external with leader migration kept)\n" + out + "\n")
	if exitCode(err) != 6 || !strings.Contains(out, "trap C") {
		t.Errorf("apply with trap C: exit %d, want 6 and the trap named\n%s", exitCode(err), out)
	}
	select {
	case saved := <-savedCh:
		if err := os.WriteFile(manifest, saved, 0o644); err != nil {
			t.Fatal(err)
		}
	default:
	}
	agent.setOverride(nil)
	out, err = ctl(context.Background(), s.adminArgs("migrate-from-intree", "rollback", "--plan", s.planPath, "--approve", "--poll-interval", "250ms")...)
	if err != nil {
		t.Fatalf("rollback after trap C: exit %d\n%s", exitCode(err), out)
	}
	for root, files := range s.originals {
		if got := readTree(t, root); !mapsEqual(got, files) {
			t.Errorf("node files under %s differ from the originals: %s", root, treeDiff(files, got))
		}
	}
}
