package realkubelet

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/cli/migratecmd"
	"github.com/awsccmctl/awsccmctl/internal/kubeletrun"
	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/procwatch"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// statusSyncWait outlasts the kubelet's node status loop
// (nodeStatusUpdateFrequency, 10 s by default): after it, whatever the new
// kubelet would change on its Node has been changed.
const statusSyncWait = 12 * time.Second

// testNode is one node of the test and what it expects.
type testNode struct {
	id, hostname string
	// byCommand switches the node with `awsccmctl migrate-from-intree
	// node --phase kubelet-external` run on its root, which works out
	// --hostname-override and the kubernetes.io/hostname label to keep
	// itself and restarts the kubelet with the node's systemctl found in
	// PATH. Otherwise the test edits the flags file itself the plain way,
	// --cloud-provider=external --hostname-override=<private DNS name>
	// without the label, and restarts it with kubeletrun.Restart: the
	// kubelet then relabels its Node with the override (G5).
	byCommand bool

	in     awsemu.Instance
	n      *Node
	before *corev1.Node
	old    *kubeletrun.Running
	ep     kubeletrun.Endpoint
	unit   string
}

// TestInTreeToExternalKeepsTheNode runs two real v1.26.13 kubelets at once
// with --cloud-provider=aws on Ubuntu-style hosts (short host names), each
// on its own instance's IMDS, then moves each to --cloud-provider=external
// and restarts it with the node's systemctl: one by the node command
// (migrate-from-intree node --phase kubelet-external), the other by hand
// with only --hostname-override=<private DNS name>. The node command's
// Node keeps every address, label, taint and its providerID; the hand
// edit's changes its kubernetes.io/hostname label from the OS host name to
// the override: G5 of the research note, reproduced, and what the node
// command's --node-labels prevents.
func TestInTreeToExternalKeepsTheNode(t *testing.T) {
	ctx := context.Background()
	Binaries(t)
	apiserver := testbed.Tool(t, filepath.Join(testbed.LegacyVersion, testbed.APIServerBinary))
	if why := Unsupported(ctx); why != "" {
		t.Skip(why)
	}
	begin := time.Now()
	cp, err := testbed.Start(ctx, testbed.Options{APIServerBinary: apiserver})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	kube, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	emu := awsemu.StartT(t, awsemu.DemoFixture())

	nodes := []*testNode{
		{id: "i-0a1b2c3d4e5f60001", hostname: "ip-10-0-1-10", byCommand: true},
		{id: "i-0a1b2c3d4e5f60002", hostname: "ip-10-0-2-20"},
	}
	for _, tn := range nodes {
		var ok bool
		if tn.in, ok = emu.Instance(tn.id); !ok {
			t.Fatalf("no instance %s in the demo fixture", tn.id)
		}
		imds, err := emu.IMDSFor(tn.id)
		if err != nil {
			t.Fatal(err)
		}
		env := awsemu.IMDSEnvFor(emu.URL)
		env["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = imds
		tn.n = Start(t, Options{
			ControlPlane: cp, NodeName: tn.in.PrivateDNSName, Hostname: tn.hostname, Env: env.List(),
			CloudConfig: InTreeCloudConfig("demo", emu.Region(), emu.URL),
		})
	}

	// In-tree: the Node as the v1.26 provider makes it, from its instance.
	for _, tn := range nodes {
		tn.before = waitNode(t, kube, tn.in.PrivateDNSName, func(n *corev1.Node) string { return inTreeMismatch(n, tn.in, tn.hostname) })
		if tn.ep, tn.unit, tn.old = observe(t, tn.n, "aws"); tn.old.PID != tn.n.PID() || !tn.old.Healthy() {
			t.Fatalf("%s: kubeletrun sees %+v, want the node's kubelet (pid %d) running --cloud-provider=aws, healthy", tn.n.Name, tn.old, tn.n.PID())
		}
	}
	t.Logf("two in-tree nodes registered %s after the test began", time.Since(begin).Round(time.Millisecond))

	// The switch, on both nodes at once.
	cut := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(nodes))
	for i, tn := range nodes {
		if tn.byCommand {
			// The node command finds systemctl in PATH, as on a node.
			t.Setenv("PATH", tn.n.SystemctlDir+string(os.PathListSeparator)+os.Getenv("PATH"))
		} else {
			setCloudFlags(t, tn.n, []string{"--cloud-provider=external", "--hostname-override=" + tn.in.PrivateDNSName})
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = switchToExternal(ctx, tn)
		}()
	}
	wg.Wait()
	for i, tn := range nodes {
		if errs[i] != nil {
			t.Fatalf("%s: %v", tn.n.Name, errs[i])
		}
		_, _, r := observe(t, tn.n, "external")
		if r.PID == tn.old.PID || r.PID != tn.n.PID() || r.HostnameOverride != tn.in.PrivateDNSName || !r.Healthy() {
			t.Fatalf("%s: after the restart kubeletrun sees %+v; want a new, healthy kubelet (pid %d, not %d) with --cloud-provider=external --hostname-override=%s",
				tn.n.Name, r, tn.n.PID(), tn.old.PID, tn.in.PrivateDNSName)
		}
		if b, err := os.ReadFile(tn.n.SystemctlLog); err != nil || !strings.HasSuffix(string(b), "restart kubelet.service\n") || strings.Count(string(b), "restart") != 1 {
			t.Errorf("%s: systemctl calls %q, %v; want one restart of kubelet.service", tn.n.Name, b, err)
		}
	}
	t.Logf("restarted both kubelets as external in %s", time.Since(cut).Round(time.Millisecond))

	// The new kubelets find their Nodes registered, then run their status
	// loop; nothing of the Node changes but the hostname label without the
	// fix.
	for _, tn := range nodes {
		waitLog(t, tn.n, "Successfully registered node", 2)
	}
	time.Sleep(statusSyncWait)
	for _, tn := range nodes {
		after, err := kube.CoreV1().Nodes().Get(ctx, tn.in.PrivateDNSName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := tn.before.DeepCopy()
		if !tn.byCommand {
			want.Labels["kubernetes.io/hostname"] = tn.in.PrivateDNSName
		}
		if diff := nodeDiff(want, after); diff != "" {
			t.Errorf("%s after the switch to external (by the node command: %t):\n%s", tn.n.Name, tn.byCommand, diff)
		}
		if !tn.byCommand && tn.before.Labels["kubernetes.io/hostname"] == after.Labels["kubernetes.io/hostname"] {
			t.Errorf("%s: the hostname label stayed %q without --node-labels: G5 is not reproduced", tn.n.Name, after.Labels["kubernetes.io/hostname"])
		}
	}
	// No kubelet registered another Node (one without --hostname-override
	// would, named after its host).
	list, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != len(nodes) {
		var names []string
		for _, n := range list.Items {
			names = append(names, n.Name)
		}
		t.Errorf("Nodes after the switch: %v, want only the %d registered in-tree", names, len(nodes))
	}
	// The external kubelet asks AWS nothing.
	for _, c := range emu.CallLog() {
		if c.Time.After(cut) {
			t.Errorf("an AWS call after the switch to external: %+v", c)
		}
	}
	for _, tn := range nodes {
		t.Logf("%s: kubelet pid %d, %s", tn.n.Name, tn.n.PID(), rss(tn.n.PID()))
	}
	t.Logf("the whole test took %s", time.Since(begin).Round(time.Millisecond))
}

// rss returns a process's resident set size as /proc shows it.
func rss(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err.Error()
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return "RSS " + strings.Join(strings.Fields(v), " ")
		}
	}
	return "no VmRSS"
}

// observe reads the node's files as the node command does and what
// kubeletrun sees running on its healthz port; both must say
// --cloud-provider=provider.
func observe(t *testing.T, n *Node, provider string) (kubeletrun.Endpoint, string, *kubeletrun.Running) {
	t.Helper()
	files, err := nodefiles.Read(n.Root)
	if err != nil || files.Kubelet == nil {
		t.Fatalf("%s: nodefiles.Read(%s) = %+v, %v", n.Name, n.Root, files, err)
	}
	if got, _ := files.Kubelet.Flags.Get("cloud-provider"); got != provider {
		t.Errorf("%s: the node's files say --cloud-provider=%q to nodefiles, want %s", n.Name, got, provider)
	}
	ep, err := kubeletrun.EndpointOf(files.Kubelet)
	if err != nil || ep.Port != n.HealthzPort {
		t.Fatalf("%s: kubeletrun.EndpointOf = %v, %v; want port %d", n.Name, ep, err, n.HealthzPort)
	}
	fs, err := procwatch.New("")
	if err != nil {
		t.Fatal(err)
	}
	r, err := kubeletrun.Observe(context.Background(), fs, ep)
	if err != nil || r.CloudProvider != provider {
		t.Fatalf("%s: kubeletrun.Observe = %+v, %v; want a kubelet running --cloud-provider=%s", n.Name, r, err, provider)
	}
	return ep, kubeletrun.UnitOf(files.Kubelet.Unit), r
}

// switchToExternal restarts the node's kubelet as external: by the node
// command, or (its flags file already edited) by kubeletrun.Restart with the
// node's systemctl. It runs in its own goroutine: it returns errors.
func switchToExternal(ctx context.Context, tn *testNode) error {
	if !tn.byCommand {
		fs, err := procwatch.New("")
		if err != nil {
			return err
		}
		_, err = kubeletrun.Restart(ctx, fs, tn.ep, kubeletrun.Systemd{Systemctl: tn.n.Systemctl, Unit: tn.unit}, true, tn.old, 30*time.Second)
		return err
	}
	var out bytes.Buffer
	cmd := migratecmd.NewCommand(migratecmd.Streams{Out: &out, Err: &out, Output: func() (string, error) { return "text", nil }})
	cmd.SetArgs([]string{"node", "--root", tn.n.Root, "--phase", "kubelet-external", "--node-name", tn.n.Name, "--wait", "30s"})
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	if err := cmd.ExecuteContext(ctx); err != nil {
		return fmt.Errorf("migrate-from-intree node --phase kubelet-external: %w\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "restarted the kubelet") {
		return fmt.Errorf("migrate-from-intree node --phase kubelet-external did not restart the kubelet:\n%s", out.String())
	}
	return nil
}

// setCloudFlags replaces the cloud provider's flags in the node's
// KUBELET_KUBEADM_ARGS with flags, as the kubelet-external phase does.
func setCloudFlags(t *testing.T, n *Node, flags []string) {
	t.Helper()
	b, err := os.ReadFile(n.KubeadmFlagsFile)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(string(b)), `KUBELET_KUBEADM_ARGS="`)
	if !ok {
		t.Fatalf("%s: %s", n.KubeadmFlagsFile, b)
	}
	var args []string
	for _, a := range strings.Fields(strings.TrimSuffix(v, `"`)) {
		if !strings.HasPrefix(a, "--cloud-provider=") && !strings.HasPrefix(a, "--cloud-config=") {
			args = append(args, a)
		}
	}
	args = append(args, flags...)
	if err := os.WriteFile(n.KubeadmFlagsFile, []byte(`KUBELET_KUBEADM_ARGS="`+strings.Join(args, " ")+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// inTreeMismatch says how n differs from what the in-tree kubelet on in
// with OS host name hostname registers ("" when it does not).
func inTreeMismatch(n *corev1.Node, in awsemu.Instance, hostname string) string {
	region := strings.TrimRight(in.AvailabilityZone, "abcdef")
	var bad []string
	if want := "aws:///" + in.AvailabilityZone + "/" + in.ID; n.Spec.ProviderID != want {
		bad = append(bad, fmt.Sprintf("providerID %q, want %q", n.Spec.ProviderID, want))
	}
	for k, v := range map[string]string{
		"kubernetes.io/hostname":                   hostname,
		"topology.kubernetes.io/zone":              in.AvailabilityZone,
		"topology.kubernetes.io/region":            region,
		"failure-domain.beta.kubernetes.io/zone":   in.AvailabilityZone,
		"failure-domain.beta.kubernetes.io/region": region,
		"node.kubernetes.io/instance-type":         in.Type,
		"beta.kubernetes.io/instance-type":         in.Type,
	} {
		if n.Labels[k] != v {
			bad = append(bad, fmt.Sprintf("label %s=%q, want %q", k, n.Labels[k], v))
		}
	}
	want := []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: in.PrivateIP},
		{Type: corev1.NodeHostName, Address: in.PrivateDNSName},
		{Type: corev1.NodeInternalDNS, Address: in.PrivateDNSName},
	}
	if in.PublicIP != "" {
		want = append(want, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: in.PublicIP})
	}
	for _, a := range want {
		if !slices.Contains(n.Status.Addresses, a) {
			bad = append(bad, fmt.Sprintf("no address %s %s in %v", a.Type, a.Address, n.Status.Addresses))
		}
	}
	for _, taint := range n.Spec.Taints {
		if taint.Key == "node.cloudprovider.kubernetes.io/uninitialized" {
			bad = append(bad, "the uninitialized taint")
		}
	}
	return strings.Join(bad, "; ")
}

// waitNode waits for the Node to match (mismatch returns "") and returns
// it.
func waitNode(t *testing.T, kube kubernetes.Interface, name string, mismatch func(*corev1.Node) string) *corev1.Node {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	last := "not registered"
	for time.Now().Before(deadline) {
		n, err := kube.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			if last = mismatch(n); last == "" {
				return n
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("Node %s: %s", name, last)
	return nil
}

// waitLog waits for the node's kubelet log to hold line count times.
func waitLog(t *testing.T, n *Node, line string, count int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if log, _ := n.Log(); strings.Count(log, line) >= count {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: the kubelet's log does not hold %q %d times", n.Name, line, count)
}

// nodeDiff lists the fields a migration must not change that differ.
func nodeDiff(want, got *corev1.Node) string {
	var d []string
	if want.Spec.ProviderID != got.Spec.ProviderID {
		d = append(d, fmt.Sprintf("providerID %q -> %q", want.Spec.ProviderID, got.Spec.ProviderID))
	}
	if !maps.Equal(want.Labels, got.Labels) {
		d = append(d, fmt.Sprintf("labels %v -> %v", want.Labels, got.Labels))
	}
	if !reflect.DeepEqual(want.Spec.Taints, got.Spec.Taints) {
		d = append(d, fmt.Sprintf("taints %v -> %v", want.Spec.Taints, got.Spec.Taints))
	}
	if !reflect.DeepEqual(want.Status.Addresses, got.Status.Addresses) {
		d = append(d, fmt.Sprintf("addresses %v -> %v", want.Status.Addresses, got.Status.Addresses))
	}
	return strings.Join(d, "\n")
}
