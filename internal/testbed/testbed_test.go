package testbed

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func TestMain(m *testing.M) { os.Exit(Main(m, nil)) }

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func clientset(t *testing.T, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// --- tests that need no binaries ---

func TestPKI(t *testing.T) {
	p, err := newPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(p.CACert) {
		t.Fatal("CA not parseable")
	}
	serving := parseCert(t, p.ServingCert)
	for _, host := range []string{"127.0.0.1", "localhost", "::1"} {
		if _, err := serving.Verify(x509.VerifyOptions{DNSName: host, Roots: roots}); err != nil {
			t.Errorf("serving cert for %s: %v", host, err)
		}
	}
	admin := parseCert(t, p.AdminCert)
	if _, err := admin.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("admin cert: %v", err)
	}
	if admin.Subject.CommonName != "admin" || len(admin.Subject.Organization) != 1 || admin.Subject.Organization[0] != "system:masters" {
		t.Errorf("admin subject = %v", admin.Subject)
	}
	if _, err := tls.X509KeyPair(p.AdminCert, p.AdminKey); err != nil {
		t.Errorf("admin key pair: %v", err)
	}
	if _, err := tls.X509KeyPair(p.ServingCert, p.ServingKey); err != nil {
		t.Errorf("serving key pair: %v", err)
	}
	for _, f := range []string{p.CACertFile, p.ServingCertFile, p.ServingKeyFile, p.SAKeyFile, p.SAPubFile} {
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", f, st, err)
		}
	}
}

func parseCert(t *testing.T, pemBytes []byte) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(pemBytes)
	if b == nil {
		t.Fatal("no PEM block")
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestBinDirMissing(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvBinDir, dir)
	_, err := BinDir()
	if !IsMissingBinaries(err) {
		t.Fatalf("BinDir() error = %v, want MissingBinariesError", err)
	}
	if !strings.Contains(err.Error(), "hack/build-testbed.sh") || !strings.Contains(err.Error(), filepath.Join(dir, "kube-apiserver")) {
		t.Errorf("error lacks path or hint: %v", err)
	}
}

func TestWriteKubeconfigRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "kubeconfig")
	in := &rest.Config{Host: "https://127.0.0.1:1", BearerToken: "tok",
		TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca")}}
	if err := (&ControlPlane{}).WriteKubeconfig(path, in); err != nil {
		t.Fatal(err)
	}
	out, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	if out.Host != in.Host || out.BearerToken != "tok" || string(out.CAData) != "ca" {
		t.Errorf("round trip: %+v", out)
	}
}

// --- tests against the shared control plane ---

func TestVersion(t *testing.T) {
	cp := Get(t)
	want := "v1.37.1"
	if bin, err := BinDir(); err == nil {
		if b, err := os.ReadFile(filepath.Join(bin, "kube-apiserver.version")); err == nil {
			want = strings.TrimSpace(string(b))
		}
	}
	v, err := clientset(t, cp.Config).Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != want {
		t.Errorf("gitVersion = %q, want %q", v.GitVersion, want)
	}
	t.Logf("server %s, startup %s", v.GitVersion, cp.StartupTime)
}

func TestRBAC(t *testing.T) {
	cp := Get(t)
	ctx := ctxFor(t)
	admin := clientset(t, cp.Config)
	saCfg, err := cp.ServiceAccountConfig(ctx, "testbed-rbac", "lister")
	if err != nil {
		t.Fatal(err)
	}
	sa := clientset(t, saCfg)
	_, err = sa.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("list nodes as fresh SA: err = %v, want Forbidden", err)
	}

	_, err = admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "testbed-list-nodes"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Cluster-scoped objects outlive the test: remove them, so a rerun in
	// the same control plane (-count) starts from a fresh ServiceAccount.
	t.Cleanup(func() {
		_ = admin.RbacV1().ClusterRoles().Delete(context.Background(), "testbed-list-nodes", metav1.DeleteOptions{})
		_ = admin.RbacV1().ClusterRoleBindings().Delete(context.Background(), "testbed-list-nodes", metav1.DeleteOptions{})
	})
	_, err = admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "testbed-list-nodes"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "testbed-list-nodes"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "testbed-rbac", Name: "lister"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The RBAC authorizer reads from an informer: allow a short delay.
	err = poll(ctx, 10*time.Millisecond, 200*time.Millisecond, func() (bool, error) {
		_, err := sa.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if apierrors.IsForbidden(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("list nodes after binding: %v", err)
	}
	// Still nothing else: get on a node is not granted.
	if _, err := sa.CoreV1().Nodes().Get(ctx, "x", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("get node: err = %v, want Forbidden", err)
	}
}

func TestNodeCreateGet(t *testing.T) {
	cp := Get(t)
	ctx := ctxFor(t)
	cs := clientset(t, cp.Config)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-1-23.ec2.internal", Labels: map[string]string{"kubernetes.io/os": "linux"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{
			Key: "node.cloudprovider.kubernetes.io/uninitialized", Value: "true", Effect: corev1.TaintEffectNoSchedule,
		}}},
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}) })
	got, err := cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels["kubernetes.io/os"] != "linux" {
		t.Errorf("labels = %v", got.Labels)
	}
	var uninit bool
	for _, tt := range got.Spec.Taints {
		uninit = uninit || tt.Key == "node.cloudprovider.kubernetes.io/uninitialized"
	}
	if !uninit {
		t.Errorf("taints = %v, want the uninitialized taint kept", got.Spec.Taints)
	}
	t.Logf("taints after admission: %v", got.Spec.Taints)
}

func TestKubeconfigFile(t *testing.T) {
	cp := Get(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", cp.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != cp.URL {
		t.Errorf("host = %q, want %q", cfg.Host, cp.URL)
	}
	cs := clientset(t, cfg)
	if _, err := cs.CoreV1().Namespaces().Get(ctxFor(t), "kube-system", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctxFor(t), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := review.Status.UserInfo; u.Username != "admin" || !slices.Contains(u.Groups, "system:masters") {
		t.Errorf("kubeconfig user = %s %v, want admin in system:masters", u.Username, u.Groups)
	}
}

// TestStopIdempotent starts a second control plane (with an audit policy),
// stops it twice, and checks that no process and no state folder remain.
func TestStopIdempotent(t *testing.T) {
	Get(t) // skip like the others when the binaries are missing
	ctx := ctxFor(t)
	cp, err := Start(ctx, Options{AuditPolicy: []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n")})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("second control plane ready in %s", cp.StartupTime)
	t.Cleanup(func() { _ = cp.Stop() })
	if _, err := clientset(t, cp.Config).CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(cp.AuditLogPath); err != nil || st.Size() == 0 {
		t.Errorf("audit log %s: %v %v", cp.AuditLogPath, st, err)
	}
	pids := cp.pids()
	if len(pids) != 2 {
		t.Fatalf("pids = %v", pids)
	}
	begin := time.Now()
	if err := cp.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	t.Logf("Stop took %s", time.Since(begin))
	if err := cp.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	for _, pid := range pids {
		if ProcessAlive(pid) {
			t.Errorf("pid %d still alive after Stop", pid)
		}
	}
	if _, err := os.Stat(cp.Dir); !os.IsNotExist(err) {
		t.Errorf("Dir %s still exists: %v", cp.Dir, err)
	}
}
