package migratecmd

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
)

// TestNodeIdentity: on an Ubuntu-style host (short host name, no
// --hostname-override) whose Node the in-tree provider named after the
// instance's private DNS name, kubelet-external adds --hostname-override
// (else the external kubelet registers a new Node) and keeps the hostname
// label the Node has; the Node's label, read from the apiserver, wins over
// the host name.
func TestNodeIdentity(t *testing.T) {
	ctx := context.Background()
	const node = "ip-10-0-1-10.ec2.internal"
	root := kubeletRoot(t, 10248)
	writeHostname(t, root, "IP-10-0-1-10\n")
	id, err := nodeIdentity(ctx, root, node, "", nil)
	if err != nil || id.HostnameOverride != node || id.HostnameLabel != "ip-10-0-1-10" || len(id.Why) != 2 {
		t.Errorf("without the apiserver: %+v (%v), want the override %s and the label ip-10-0-1-10, each with its reason", id, err, node)
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{corev1.LabelHostname: "ip-10-0-1-10.custom"}}}
	id, err = nodeIdentity(ctx, root, node, "", fake.NewClientset(n))
	if err != nil || id.HostnameLabel != "ip-10-0-1-10.custom" {
		t.Errorf("with the Node: %+v (%v), want its label ip-10-0-1-10.custom kept", id, err)
	}
	// An Amazon Linux-style host is named as its Node: nothing to add.
	writeHostname(t, root, node+"\n")
	if id, err := nodeIdentity(ctx, root, node, "", nil); err != nil || id.HostnameOverride != "" || id.HostnameLabel != "" {
		t.Errorf("host named as its Node: %+v (%v), want nothing added", id, err)
	}
	// Under another root without etc/hostname the host name is unknown.
	if err := os.Remove(filepath.Join(root, "etc", "hostname")); err != nil {
		t.Fatal(err)
	}
	if id, err := nodeIdentity(ctx, root, node, "", nil); err != nil || id.HostnameOverride != "" || id.HostnameLabel != "" {
		t.Errorf("host name unknown: %+v (%v), want nothing guessed", id, err)
	}
}

// TestNodeIdentityStaysOnARerun: the phase edits the original files at
// each run, so a re-run must ask again for what the first run added; it
// changes nothing.
func TestNodeIdentityStaysOnARerun(t *testing.T) {
	ctx := context.Background()
	free, err := childproc.FreePort(ctx)
	if err != nil {
		t.Fatal(err)
	}
	root := kubeletRoot(t, free)
	writeHostname(t, root, "ip-10-0-1-10\n")
	o := nodeOptions{Root: root, Phase: "kubelet-external", NodeName: "ip-10-0-1-10.ec2.internal"}
	var out, errOut bytes.Buffer
	if err := runNode(ctx, o, "", "json", Streams{Out: &out, Err: &errOut}); err != nil {
		t.Fatalf("runNode: %v\n%s", err, errOut.String())
	}
	flags, err := os.ReadFile(filepath.Join(root, "var", "lib", "kubelet", "kubeadm-flags.env"))
	if err != nil || !bytes.Contains(flags, []byte("--hostname-override=ip-10-0-1-10.ec2.internal")) || !bytes.Contains(flags, []byte("kubernetes.io/hostname=ip-10-0-1-10")) {
		t.Fatalf("kubeadm-flags.env %s (%v), want the override and the hostname label", flags, err)
	}
	if !strings.Contains(errOut.String(), "kubelet-external adds --hostname-override=ip-10-0-1-10.ec2.internal: this host is ip-10-0-1-10") {
		t.Errorf("stderr does not say why:\n%s", errOut.String())
	}
	out.Reset()
	if err := runNode(ctx, o, "", "json", Streams{Out: &out, Err: &errOut}); err != nil {
		t.Fatalf("re-run: %v", err)
	}
	var got nodeOutput
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Result.Changed {
		t.Errorf("the re-run changed %v (%v)", got.Result.ChangedPaths(), err)
	}
}

func writeHostname(t *testing.T, root, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "hostname"), []byte(name), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDefaultNodeName: the Node name comes from the kubelet's client
// certificate (its key may come first in the file), else the host name.
func TestDefaultNodeName(t *testing.T) {
	root := t.TempDir()
	writeHostname(t, root, "ip-10-0-1-10\n")
	if got := defaultNodeName(root); got != "ip-10-0-1-10" {
		t.Errorf("without a certificate: %q, want the host name", got)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "system:node:ip-10-0-1-10.ec2.internal", Organization: []string{"system:nodes"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pemFile := append(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	p := filepath.Join(root, filepath.FromSlash(kubeletClientCert))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, pemFile, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := defaultNodeName(root); got != "ip-10-0-1-10.ec2.internal" {
		t.Errorf("with the kubelet's certificate: %q, want ip-10-0-1-10.ec2.internal", got)
	}
}
