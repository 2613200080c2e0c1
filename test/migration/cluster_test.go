package migration

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/testbed/staticpod"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// nodeRoot copies a testdata layout into a fresh fake node root, filling
// the placeholders.
func nodeRoot(t *testing.T, layout string, vars map[string]string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	src := filepath.Join("testdata", layout)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(root, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if d.Name() == ".keep" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := string(data)
		for k, v := range vars {
			s = strings.ReplaceAll(s, "{{"+k+"}}", v)
		}
		return os.WriteFile(dst, []byte(s), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Each node's kubelet gets a healthz port of its own (startNodeKubelet
	// runs it there), from the start, so the node's files stay the
	// originals the tests compare with.
	cfg := filepath.Join(root, "var", "lib", "kubelet", "config.yaml")
	if data, err := os.ReadFile(cfg); err == nil {
		port, err := childproc.FreePort(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg, []byte(strings.Replace(string(data), "healthzPort: 10248", "healthzPort: "+strconv.Itoa(port), 1)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// inTreeCloudConfig points the in-tree provider's aws-sdk-go v1 clients at
// the emulator ([ServiceOverride]); with Zone, VPC, SubnetID and the cluster
// tag set it makes no AWS call at start.
func inTreeCloudConfig() []byte {
	return fmt.Appendf(nil, `[Global]
Zone = us-east-1a
VPC = vpc-0demo000000000001
SubnetID = subnet-0demo00000000000a
KubernetesClusterID = %s

[ServiceOverride "1"]
Service = ec2
Region = %s
URL = %s
SigningRegion = %s

[ServiceOverride "2"]
Service = elasticloadbalancing
Region = %s
URL = %s
SigningRegion = %s
`, clusterID, region, env.awsURL, region, region, env.awsURL, region)
}

// cpSpec is one control-plane node: its Node, instance and host name.
type cpSpec struct {
	Node, ID, IP, Zone string
	// Hostname is what the node's processes see as their host name, as on
	// EC2 (the first label of the private DNS name): their leader-election
	// identities (<hostname>_<uuid>) name the node.
	Hostname string
}

// cpA is the control-plane node of the single-node cases.
var cpA = cpSpec{Node: cpNode, ID: cpID, IP: cpIP, Zone: "us-east-1a", Hostname: "ip-10-0-1-10"}

// controlPlane is a fake control-plane node: its root, and the static-Pod
// runner playing its kubelet.
type controlPlane struct {
	spec   cpSpec
	root   string
	runner *staticpod.Runner
	port   int
}

// startControlPlaneNode lays out the kubeadm 1.26 control-plane node of the
// single-node cases.
func startControlPlaneNode(t *testing.T) *controlPlane {
	t.Helper()
	return startControlPlaneNodeFor(t, cpA)
}

// startControlPlaneNodeFor lays out a kubeadm 1.26 control-plane node
// running the in-tree provider and starts its kube-controller-manager from
// the manifest, with the client certificate of
// system:kube-controller-manager.
func startControlPlaneNodeFor(t *testing.T, spec cpSpec) *controlPlane {
	t.Helper()
	return startControlPlaneNodeWith(t, spec, nil)
}

// startControlPlaneNodeWith is startControlPlaneNodeFor with the static-Pod
// runner's options adjusted by tune (nil: as they are).
func startControlPlaneNodeWith(t *testing.T, spec cpSpec, tune func(*staticpod.Options)) *controlPlane {
	t.Helper()
	port, err := childproc.FreePort(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	root := nodeRoot(t, "kubeadm-control-plane", map[string]string{"SECURE_PORT": strconv.Itoa(port)})
	pki := filepath.Join(root, "etc", "kubernetes", "pki")
	for dst, src := range map[string]string{"ca.crt": env.cp.CACertFile, "sa.key": env.cp.ServiceAccountKeyFile} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(pki, dst), data)
	}
	if err := env.cp.ClientCertKubeconfig(filepath.Join(root, "etc", "kubernetes", "controller-manager.conf"), "system:kube-controller-manager", nil); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "etc", "kubernetes", "cloud.conf"), inTreeCloudConfig())
	opts := staticpod.Options{
		Root: root, NodeName: spec.Node, Client: env.kube, Hostname: spec.Hostname,
		Binaries: map[string]string{"kube-controller-manager": env.kcmBin},
		Env:      awsEnv(),
		Logf:     func(format string, args ...any) { t.Logf("kubelet(%s): "+format, append([]any{spec.Node}, args...)...) },
	}
	if tune != nil {
		tune(&opts)
	}
	runner, err := staticpod.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(runner.Stop)
	return &controlPlane{spec: spec, root: root, runner: runner, port: port}
}

// registerInTreeNode creates a Node as a kubelet on the in-tree provider
// registers it (legacy-cloud-providers v0.26 aws NodeAddresses and
// kubelet_node_status initialNode): providerID, the zone, region and
// instance-type labels in both spellings, no uninitialized taint, Ready,
// and the addresses from IMDS in its order: the private addresses by
// device, the public one, Hostname, InternalDNS, ExternalDNS. The instance
// is the fixture's (ip is used when it has none).
func registerInTreeNode(t *testing.T, name, zone, id, ip string, controlPlane bool) {
	t.Helper()
	ctx := context.Background()
	in := fixtureInstance(id)
	typ := in.Type
	if typ == "" {
		typ = "m5.large"
	}
	labels := map[string]string{
		"kubernetes.io/hostname": name, corev1.LabelTopologyZone: zone, corev1.LabelTopologyRegion: region,
		corev1.LabelFailureDomainBetaZone: zone, corev1.LabelFailureDomainBetaRegion: region,
		corev1.LabelInstanceTypeStable: typ, corev1.LabelInstanceType: typ,
	}
	if controlPlane {
		labels["node-role.kubernetes.io/control-plane"] = ""
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.NodeSpec{ProviderID: "aws:///" + zone + "/" + id}}
	if _, err := env.kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := env.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status.Addresses = inTreeAddresses(in, name, ip)
		cur.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		_, err = env.kube.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// fixtureInstance is the emulator fixture's instance id (zero when none).
func fixtureInstance(id string) awsemu.Instance {
	for _, in := range env.fixture.Instances {
		if in.ID == id {
			return in
		}
	}
	return awsemu.Instance{}
}

// inTreeAddresses are the addresses a kubelet on the in-tree provider
// reads from IMDS for in.
func inTreeAddresses(in awsemu.Instance, name, ip string) []corev1.NodeAddress {
	var out []corev1.NodeAddress
	enis := slices.SortedFunc(slices.Values(in.ENIs), func(a, b awsemu.ENI) int { return cmp.Compare(a.DeviceIndex, b.DeviceIndex) })
	for _, e := range enis {
		if e.Status != "" && e.Status != "in-use" {
			continue
		}
		for _, a := range e.PrivateIPs {
			out = append(out, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: a})
		}
	}
	if len(out) == 0 {
		out = append(out, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
	}
	if in.PublicIP != "" {
		out = append(out, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: in.PublicIP})
	}
	dns := in.PrivateDNSName
	if dns == "" {
		dns = name
	}
	out = append(out, corev1.NodeAddress{Type: corev1.NodeHostName, Address: dns}, corev1.NodeAddress{Type: corev1.NodeInternalDNS, Address: dns})
	if in.PublicDNSName != "" {
		out = append(out, corev1.NodeAddress{Type: corev1.NodeExternalDNS, Address: in.PublicDNSName})
	}
	return out
}

// createLBService creates a LoadBalancer Service with one TCP port.
func createLBService(t *testing.T, name string, annotations map[string]string, nodePort int32) {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: annotations},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), NodePort: nodePort, Protocol: corev1.ProtocolTCP}}},
	}
	if _, err := env.kube.CoreV1().Services("default").Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func hostname(t *testing.T, name string) string {
	t.Helper()
	s, err := env.kube.CoreV1().Services("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Status.LoadBalancer.Ingress) == 0 {
		return ""
	}
	return s.Status.LoadBalancer.Ingress[0].Hostname
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		ok, err := cond(ctx)
		if err == nil && ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// kcmLeaseHolder is the holder of kube-controller-manager's Lease ("" when
// none).
func kcmLeaseHolder(ctx context.Context) string {
	l, err := env.kube.CoordinationV1().Leases("kube-system").Get(ctx, leadermigration.KCMLeaseName, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// setHostnameLabel gives a Node the kubernetes.io/hostname label its
// kubelet sets from its host's name.
func setHostnameLabel(t *testing.T, node, value string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := env.kube.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Labels[corev1.LabelHostname] = value
		_, err = env.kube.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
