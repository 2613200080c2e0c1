package staticpod_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/internal/testbed/staticpod"
)

// kubeadmKCMManifest is kube-controller-manager's static Pod as kubeadm
// v1.26 writes it, with --cloud-provider=external and a free secure port.
const kubeadmKCMManifest = `apiVersion: v1
kind: Pod
metadata:
  creationTimestamp: null
  labels:
    component: kube-controller-manager
    tier: control-plane
  name: kube-controller-manager
  namespace: kube-system
spec:
  containers:
  - command:
    - kube-controller-manager
    - --authentication-kubeconfig=/etc/kubernetes/controller-manager.conf
    - --authorization-kubeconfig=/etc/kubernetes/controller-manager.conf
    - --bind-address=127.0.0.1
    - --secure-port=%d
    - --client-ca-file=/etc/kubernetes/pki/ca.crt
    - --cloud-provider=external
    - --controllers=*,bootstrapsigner,tokencleaner
    - --kubeconfig=/etc/kubernetes/controller-manager.conf
    - --leader-elect=true
    - --requestheader-client-ca-file=/etc/kubernetes/pki/front-proxy-ca.crt
    - --root-ca-file=/etc/kubernetes/pki/ca.crt
    - --service-account-private-key-file=/etc/kubernetes/pki/sa.key
    - --use-service-account-credentials=true
    image: registry.k8s.io/kube-controller-manager:v1.26.13
    imagePullPolicy: IfNotPresent
    livenessProbe:
      failureThreshold: 8
      httpGet:
        host: 127.0.0.1
        path: /healthz
        port: %d
        scheme: HTTPS
      initialDelaySeconds: 10
      periodSeconds: 10
      timeoutSeconds: 15
    name: kube-controller-manager
    resources:
      requests:
        cpu: 200m
    volumeMounts:
    - mountPath: /etc/ssl/certs
      name: ca-certs
      readOnly: true
    - mountPath: /etc/kubernetes/pki
      name: k8s-certs
      readOnly: true
    - mountPath: /etc/kubernetes/controller-manager.conf
      name: kubeconfig
      readOnly: true
    - mountPath: /usr/libexec/kubernetes/kubelet-plugins/volume/exec
      name: flexvolume-dir
  hostNetwork: true
  priorityClassName: system-node-critical
  securityContext:
    seccompProfile:
      type: RuntimeDefault
  volumes:
  - hostPath:
      path: /etc/ssl/certs
      type: DirectoryOrCreate
    name: ca-certs
  - hostPath:
      path: /etc/kubernetes/pki
      type: DirectoryOrCreate
    name: k8s-certs
  - hostPath:
      path: /etc/kubernetes/controller-manager.conf
      type: FileOrCreate
    name: kubeconfig
  - hostPath:
      path: /usr/libexec/kubernetes/kubelet-plugins/volume/exec
      type: DirectoryOrCreate
    name: flexvolume-dir
status: {}
`

// TestRealKubeControllerManager126 runs the real kube-controller-manager
// v1.26 from a kubeadm manifest on a fake node, against kube-apiserver
// v1.26, as user system:kube-controller-manager (so the bootstrap RBAC
// applies), and waits for it to lead.
func TestRealKubeControllerManager126(t *testing.T) {
	apiserverBin, kcmBin := testbed.Legacy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := testbed.Start(ctx, testbed.Options{APIServerBinary: apiserverBin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil || v.GitVersion != testbed.LegacyVersion {
		t.Fatalf("apiserver version %v %v, want %s", v, err, testbed.LegacyVersion)
	}

	// The node's files, where kubeadm puts them.
	root := t.TempDir()
	pki := filepath.Join(root, "etc/kubernetes/pki")
	if err := os.MkdirAll(pki, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ src, dst string }{
		{cp.CACertFile, "ca.crt"},
		{cp.CACertFile, "front-proxy-ca.crt"}, // no front proxy here: any CA will do
		{cp.ServiceAccountKeyFile, "sa.key"},
	} {
		b, err := os.ReadFile(f.src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pki, f.dst), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := cp.ClientCertKubeconfig(filepath.Join(root, "etc/kubernetes/controller-manager.conf"), "system:kube-controller-manager", nil); err != nil {
		t.Fatal(err)
	}
	port, err := childproc.FreePort(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "etc/kubernetes/manifests")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kube-controller-manager.yaml"), fmt.Appendf(nil, kubeadmKCMManifest, port, port), 0o600); err != nil {
		t.Fatal(err)
	}

	const node = "control-plane-1"
	begin := time.Now()
	r, err := staticpod.Start(ctx, staticpod.Options{
		Root: root, NodeName: node, Client: cs,
		Binaries: map[string]string{component: kcmBin},
		Env:      []string{"AWS_EC2_METADATA_DISABLED=true"},
		LogDir:   filepath.Join(root, "var/log/pods"),
		Logf:     t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	if err := r.WaitStarted(ctx, component, 1); err != nil {
		t.Fatal(err)
	}
	st, _ := r.Status(component)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s\n--- tail of %s ---\n%s", fmt.Sprintf(format, args...), st.LogPath, childproc.LogTail(st.LogPath, 6000))
	}
	if !slices.Contains(st.Args, "--kubeconfig="+filepath.Join(root, "etc/kubernetes/controller-manager.conf")) {
		fail("args %q: the kubeconfig is not resolved through its hostPath", st.Args)
	}

	// Leadership: the Lease kube-system/kube-controller-manager is held.
	var holder string
	for holder == "" {
		l, err := cs.CoordinationV1().Leases("kube-system").Get(ctx, "kube-controller-manager", metav1.GetOptions{})
		switch {
		case err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "":
			holder = *l.Spec.HolderIdentity
		case err != nil && !apierrors.IsNotFound(err):
			fail("get lease: %v", err)
		}
		if _, _, _, ok := r.Process(component); !ok {
			fail("kube-controller-manager is not running: %+v", st.Exits)
		}
		select {
		case <-ctx.Done():
			fail("no leader after %s", time.Since(begin))
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Logf("lease kube-system/kube-controller-manager held by %q %s after the runner started", holder, time.Since(begin).Round(time.Millisecond))

	// It runs its controllers with their own ServiceAccounts, which it
	// could only create with its RBAC as system:kube-controller-manager.
	for {
		if _, err := cs.CoreV1().ServiceAccounts("kube-system").Get(ctx, "deployment-controller", metav1.GetOptions{}); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			fail("no ServiceAccount kube-system/deployment-controller")
		case <-time.After(200 * time.Millisecond):
		}
	}

	// Its secure port, as the manifest set it, answers /healthz.
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // G402: the test's kube-controller-manager on loopback, self-signed
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/healthz", port), nil)
	if err != nil {
		fail("healthz: %v", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		fail("healthz: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ok" {
		fail("healthz: %d %q", resp.StatusCode, body)
	}

	// Cluster readers see it as on a kubeadm node.
	p, err := cs.CoreV1().Pods("kube-system").Get(ctx, "kube-controller-manager-"+node, metav1.GetOptions{})
	if err != nil {
		fail("mirror Pod: %v", err)
	}
	if !slices.Contains(p.Spec.Containers[0].Command, "--cloud-provider=external") || p.Annotations[staticpod.AnnotationConfigMirror] == "" {
		t.Errorf("mirror Pod command %q annotations %v", p.Spec.Containers[0].Command, p.Annotations)
	}
	if errs := r.Errors(); len(errs) != 0 {
		t.Errorf("runner errors: %v", errs)
	}
}
