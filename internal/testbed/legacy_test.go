package testbed

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// recordTB stands in for a test in Tool and Legacy: it records the first
// Skipf and Fatalf instead of ending the goroutine.
type recordTB struct {
	testing.TB
	skipped, failed string
}

func (r *recordTB) Helper() {}

func (r *recordTB) Skipf(format string, args ...any) {
	if r.skipped == "" {
		r.skipped = fmt.Sprintf(format, args...)
	}
}

func (r *recordTB) Fatalf(format string, args ...any) {
	if r.failed == "" {
		r.failed = fmt.Sprintf(format, args...)
	}
}

func TestLegacyBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("Tool and Legacy skip every caller under -short; this test checks what they do without it")
	}
	dir := t.TempDir()
	for _, name := range []string{APIServerBinary, EtcdBinary} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(EnvBinDir, dir)

	t.Setenv("CI", "")
	r := &recordTB{}
	Legacy(r)
	if !strings.Contains(r.skipped, filepath.Join(dir, LegacyVersion, APIServerBinary)) || r.failed != "" {
		t.Errorf("without the binaries and CI: skipped %q, failed %q", r.skipped, r.failed)
	}
	t.Setenv("CI", "true")
	r = &recordTB{}
	Legacy(r)
	if !strings.Contains(r.failed, "CI is set") {
		t.Errorf("without the binaries in CI: skipped %q, failed %q", r.skipped, r.failed)
	}

	if err := os.MkdirAll(filepath.Join(dir, LegacyVersion), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{APIServerBinary, KubeControllerManagerBinary} {
		if err := os.WriteFile(filepath.Join(dir, LegacyVersion, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r = &recordTB{}
	a, k := Legacy(r)
	if a != filepath.Join(dir, LegacyVersion, APIServerBinary) || k != filepath.Join(dir, LegacyVersion, KubeControllerManagerBinary) || r.failed != "" || r.skipped != "" {
		t.Errorf("Legacy = %q, %q (skipped %q, failed %q)", a, k, r.skipped, r.failed)
	}
}

// TestClientCertKubeconfig: a kubeconfig for a client certificate
// authenticates as its CN and groups, and RBAC applies to it.
func TestClientCertKubeconfig(t *testing.T) {
	cp := Get(t)
	ctx := ctxFor(t)
	path := filepath.Join(t.TempDir(), "controller-manager.conf")
	if err := cp.ClientCertKubeconfig(path, "system:kube-controller-manager", []string{"testbed:extra"}); err != nil {
		t.Fatal(err)
	}
	cs := kubeconfigClient(t, path)
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := review.Status.UserInfo; u.Username != "system:kube-controller-manager" || !slices.Contains(u.Groups, "testbed:extra") {
		t.Errorf("user = %s %v", u.Username, u.Groups)
	}
	checkKCMRBAC(ctx, t, cs, true)
}

// checkKCMRBAC asserts what the bootstrap policy grants the user
// system:kube-controller-manager on Leases in kube-system: create, get and
// update of its own Lease, never delete. Other Leases (such as leader
// migration's "cloud-provider-extraction-migration") differ by version:
// v1.26 grants get and update on "kube-controller-manager" only; newer
// versions' Role system::leader-locking-kube-controller-manager grants
// them on every Lease there (v1.37.1).
func checkKCMRBAC(ctx context.Context, t *testing.T, cs kubernetes.Interface, otherLeases bool) {
	t.Helper()
	for _, tc := range []struct {
		verb, name string
		allowed    bool
	}{
		{"create", "", true},
		{"update", "kube-controller-manager", true},
		{"update", "cloud-provider-extraction-migration", otherLeases},
		{"get", "cloud-provider-extraction-migration", otherLeases},
		{"delete", "kube-controller-manager", false},
	} {
		ssar, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: "kube-system", Verb: tc.verb, Group: "coordination.k8s.io", Resource: "leases", Name: tc.name,
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ssar.Status.Allowed != tc.allowed {
			t.Errorf("%s lease %q: allowed = %v, want %v (%s)", tc.verb, tc.name, ssar.Status.Allowed, tc.allowed, ssar.Status.Reason)
		}
	}
}

func kubeconfigClient(t *testing.T, path string) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	return clientset(t, cfg)
}

// TestLegacyAPIServer starts a control plane on kube-apiserver
// LegacyVersion, with the same flags (egress selector included), and checks
// its version and a client-certificate identity's RBAC there.
func TestLegacyAPIServer(t *testing.T) {
	apiserver, _ := Legacy(t)
	ctx := ctxFor(t)
	cp, err := Start(ctx, Options{APIServerBinary: apiserver})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	t.Logf("control plane on kube-apiserver %s ready in %s", LegacyVersion, cp.StartupTime)
	v, err := clientset(t, cp.Config).Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != LegacyVersion || v.Minor != "26" {
		t.Errorf("version = %s (minor %q), want %s", v.GitVersion, v.Minor, LegacyVersion)
	}
	if logContains(filepath.Join(cp.Dir, "kube-apiserver.log"), "unknown flag") {
		t.Error("kube-apiserver log mentions an unknown flag")
	}
	path := filepath.Join(t.TempDir(), "controller-manager.conf")
	if err := cp.ClientCertKubeconfig(path, "system:kube-controller-manager", nil); err != nil {
		t.Fatal(err)
	}
	checkKCMRBAC(ctx, t, kubeconfigClient(t, path), false)

	// The egress selector configuration works there too: nodes/proxy
	// reaches a kubelet played by ServeNode.
	cs := clientset(t, cp.Config)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-200-0-9.ec2.internal"}}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.200.0.9"}}
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = 10250
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.ServeNode("10.200.0.9:10250", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "kubelet says "+r.URL.Path) //nolint:gosec // G705: a fake kubelet echoing the test's own request to the test
	})))
	b, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", node.Name, "proxy", "configz").DoRaw(ctx)
	if err != nil || string(b) != "kubelet says /configz" {
		t.Errorf("nodes/proxy through the egress: %q %v", b, err)
	}
}
