package clusterchecks

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	cloudproviderapi "k8s.io/cloud-provider/api"
	"k8s.io/utils/ptr"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// testLabel marks every object a test seeds; its value names the test, and
// cleanup deletes by it.
const testLabel = "awsccmctl.io/clusterchecks-test"

// seed creates a test's objects in the real apiserver and deletes them when
// the test ends.
type seed struct {
	t   testing.TB
	cs  kubernetes.Interface
	run string
}

func newSeed(t testing.TB, cs kubernetes.Interface) *seed {
	s := &seed{t: t, cs: cs, run: fmt.Sprintf("t%d", time.Now().UnixNano())}
	t.Cleanup(s.cleanup)
	return s
}

func (s *seed) meta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{testLabel: s.run}}
}

func (s *seed) cleanup() {
	ctx := context.Background()
	sel := metav1.ListOptions{LabelSelector: testLabel + "=" + s.run}
	now := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
	errs := []error{
		s.cs.CoreV1().Nodes().DeleteCollection(ctx, now, sel),
		s.cs.CoordinationV1().Leases(kubeSystem).DeleteCollection(ctx, now, sel),
		s.cs.CoreV1().ConfigMaps(kubeSystem).DeleteCollection(ctx, now, sel),
		// PersistentVolumes lose their pv-protection finalizer first (see
		// seed.pv), or they would stay, terminating, for the next test.
		s.cs.CoreV1().PersistentVolumes().DeleteCollection(ctx, now, sel),
		s.cs.StorageV1().StorageClasses().DeleteCollection(ctx, now, sel),
		s.cs.StorageV1().CSIDrivers().DeleteCollection(ctx, now, sel),
		s.cs.StorageV1().CSINodes().DeleteCollection(ctx, now, sel),
	}
	for _, ns := range []string{kubeSystem, metav1.NamespaceDefault} {
		errs = append(errs, s.cs.CoreV1().Pods(ns).DeleteCollection(ctx, now, sel),
			s.cs.CoreV1().ServiceAccounts(ns).DeleteCollection(ctx, now, sel))
	}
	for _, err := range errs {
		if err != nil {
			s.t.Errorf("cleanup: %v", err)
		}
	}
}

// nodeSpec describes a seeded Node.
type nodeSpec struct {
	name, kubelet, providerID, hostname string
	// uninitialized adds the CCM's taint; a zero time leaves TimeAdded unset.
	uninitialized *time.Time
	// kubelet says how the Node's kubelet answers /configz; nil: with the
	// Node's own providerID.
	kubeletAnswer *kubeletSpec
	// noCloudLabels leaves out the labels a CCM sets on a Node with a
	// providerID (zone, region, instance type).
	noCloudLabels bool
}

// addCloudLabels labels node as the CCM does when it initialises it.
func addCloudLabels(node *corev1.Node) {
	zone := "us-east-1a"
	if i := strings.LastIndex(node.Spec.ProviderID, "/"); i > 0 {
		if z := node.Spec.ProviderID[strings.LastIndex(node.Spec.ProviderID[:i], "/")+1 : i]; z != "" {
			zone = z
		}
	}
	node.Labels[corev1.LabelTopologyZone] = zone
	node.Labels[corev1.LabelTopologyRegion] = "us-east-1"
	node.Labels[corev1.LabelInstanceTypeStable] = "m6i.large"
}

func (s *seed) node(n nodeSpec) {
	s.t.Helper()
	node := &corev1.Node{ObjectMeta: s.meta("", n.name), Spec: corev1.NodeSpec{ProviderID: n.providerID},
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: n.kubelet}}}
	if n.hostname != "" {
		node.Labels[corev1.LabelHostname] = n.hostname
	}
	if n.uninitialized != nil {
		taint := corev1.Taint{Key: cloudproviderapi.TaintExternalCloudProvider, Value: "true", Effect: corev1.TaintEffectNoSchedule}
		if !n.uninitialized.IsZero() {
			taint.TimeAdded = ptr.To(metav1.NewTime(*n.uninitialized))
		}
		node.Spec.Taints = append(node.Spec.Taints, taint)
	}
	if n.providerID != "" && !n.noCloudLabels {
		addCloudLabels(node)
	}
	answer := kubeletSpec{providerID: n.providerID}
	if n.kubeletAnswer != nil {
		answer = *n.kubeletAnswer
	}
	sharedKubelets().attach(s.t, node, answer)
	created, err := s.cs.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{})
	if err != nil {
		s.t.Fatalf("create node %s: %v", n.name, err)
	}
	if created.Status.NodeInfo.KubeletVersion != n.kubelet || len(created.Status.Addresses) == 0 {
		created.Status.NodeInfo.KubeletVersion = n.kubelet
		created.Status.Addresses, created.Status.DaemonEndpoints = node.Status.Addresses, node.Status.DaemonEndpoints
		if _, err := s.cs.CoreV1().Nodes().UpdateStatus(context.Background(), created, metav1.UpdateOptions{}); err != nil {
			s.t.Fatalf("set status of node %s: %v", n.name, err)
		}
	}
}

// nodes seeds Nodes with the same kubelet, each with a providerID and the
// hostname label equal to its name.
func (s *seed) nodes(kubelet string, names ...string) {
	for i, n := range names {
		s.node(nodeSpec{name: n, kubelet: kubelet, hostname: n, providerID: fmt.Sprintf("aws:///us-east-1a/i-0a1b2c3d4e5f6%04d", i)})
	}
}

// pod creates p (labelled for cleanup); a Pod that is not a mirror Pod runs
// as its own ServiceAccount, created here, since no controller creates
// "default" in the test bed.
func (s *seed) pod(p *corev1.Pod) {
	s.t.Helper()
	ctx := context.Background()
	p.Labels[testLabel] = s.run
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; !mirror {
		sa := &corev1.ServiceAccount{ObjectMeta: s.meta(p.Namespace, p.Name)}
		if _, err := s.cs.CoreV1().ServiceAccounts(p.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			s.t.Fatalf("create service account: %v", err)
		}
		p.Spec.ServiceAccountName, p.Spec.AutomountServiceAccountToken = p.Name, ptr.To(false)
	}
	if _, err := s.cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create pod %s/%s: %v", p.Namespace, p.Name, err)
	}
}

// controlPlanePods seeds a kube-apiserver and a kube-controller-manager
// mirror Pod on node, kubeadm-style, with the given command lines.
func (s *seed) controlPlanePods(node, tag string, api, kcmArgs []string) {
	s.pod(mirrorPod(apiServer+"-"+node, node, labelKubeadm, apiServer, "registry.k8s.io/kube-apiserver:"+tag, append([]string{apiServer}, api...)))
	s.pod(mirrorPod(kcm+"-"+node, node, labelKubeadm, kcm, "registry.k8s.io/kube-controller-manager:"+tag, append([]string{kcm}, kcmArgs...)))
}

// workload is an ordinary Pod running image.
func workload(ns, name, node, image string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: image}}}}
}

func (s *seed) lease(name, holder string, renewedAgo time.Duration) {
	const seconds = int32(15) // kube-controller-manager's and the CCM's --leader-elect-lease-duration
	s.t.Helper()
	l := &coordinationv1.Lease{ObjectMeta: s.meta(kubeSystem, name), Spec: coordinationv1.LeaseSpec{
		HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To(seconds),
		AcquireTime: ptr.To(metav1.NewMicroTime(time.Now().Add(-renewedAgo - time.Hour))),
		RenewTime:   ptr.To(metav1.NewMicroTime(time.Now().Add(-renewedAgo))),
	}}
	if _, err := s.cs.CoordinationV1().Leases(kubeSystem).Create(context.Background(), l, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create lease %s: %v", name, err)
	}
}

func (s *seed) kubeadmConfig(clusterConfiguration string) {
	s.t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: s.meta(kubeSystem, kubeadmConfigMap), Data: map[string]string{clusterConfigKey: clusterConfiguration}}
	if _, err := s.cs.CoreV1().ConfigMaps(kubeSystem).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create kubeadm-config: %v", err)
	}
}

// withServerVersion makes /version report gitVersion, still asking the real
// server (so reachability stays real): the test bed runs one Kubernetes
// version, and the in-tree scenarios need a 1.26 control plane.
type withServerVersion struct {
	kubernetes.Interface
	gitVersion string
}

func (w withServerVersion) Discovery() discovery.DiscoveryInterfaces {
	return versionDiscovery{w.Interface.Discovery(), w.gitVersion}
}

type versionDiscovery struct {
	discovery.DiscoveryInterfaces
	gitVersion string
}

func (d versionDiscovery) ServerVersion() (*version.Info, error) {
	return d.ServerVersionWithContext(context.Background())
}

func (d versionDiscovery) ServerVersionWithContext(ctx context.Context) (*version.Info, error) {
	v, err := d.DiscoveryInterfaces.ServerVersionWithContext(ctx)
	if err != nil {
		return nil, err
	}
	v.GitVersion = d.gitVersion
	return v, nil
}

// quietClient is an admin client that drops the server's warnings (mirror
// Pods are named after their Node, dots included, as the kubelet names them).
func quietClient(c *rest.Config) kubernetes.Interface {
	c = rest.CopyConfig(c)
	c.WarningHandler = rest.NoWarnings{}
	return kubernetes.NewForConfigOrDie(c)
}

// table renders a report as a Markdown table for the test log.
func table(r preflight.Report) string {
	var b strings.Builder
	b.WriteString("| check | status | message |\n|---|---|---|\n")
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", f.ID, f.Status, strings.ReplaceAll(f.Message, "|", `\|`))
	}
	return b.String()
}
