package migratecmd

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
)

// identityFlags are what kubelet-external adds so that the kubelet, once
// external, keeps its Node exactly as it was.
type identityFlags struct {
	// HostnameOverride keeps the Node's name: without a cloud provider the
	// kubelet names its Node after its host name, where the in-tree
	// provider named it after the instance's private DNS name.
	HostnameOverride string
	// HostnameLabel keeps the Node's kubernetes.io/hostname label, which
	// the kubelet sets to its host name (--hostname-override included) at
	// each start.
	HostnameLabel string
	// Why says, for the operator, what was added and why.
	Why []string
}

// nodeIdentity works out identityFlags for the node at root whose Node is
// nodeName, from the kubelet's files, the node's host name and, with
// client, the Node's current hostname label. Options the operator gave win.
// Nothing is added that the files already say, or that cannot be known:
// under another root than / without <root>/etc/hostname, the host name is
// unknown.
func nodeIdentity(ctx context.Context, root, nodeName, givenOverride string, client kubernetes.Interface) (identityFlags, error) {
	out := identityFlags{HostnameOverride: givenOverride}
	node, err := nodefiles.Read(root)
	if err != nil || node.Kubelet == nil {
		// nodephase.Apply says what is wrong with the files.
		return out, nil //nolint:nilerr // the phase itself reports unreadable files
	}
	override, _ := node.Kubelet.Flags.Get("hostname-override")
	// What the files say already is passed on: the phase edits the
	// originals afresh at each run, so a re-run must ask for what the
	// first one added (and asking for a value the original has adds
	// nothing).
	if out.HostnameOverride == "" {
		out.HostnameOverride = override
	}
	if labels, ok := node.Kubelet.Flags.Get("node-labels"); ok {
		if v, found := labelValue(labels, corev1.LabelHostname); found {
			out.HostnameLabel = v
			return out, nil
		}
	}
	host := hostNameOf(root)
	lower := func(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
	// What the kubelet calls its host today, and its Node's label with it.
	current := lower(override)
	if current == "" {
		current = host
	}
	if out.HostnameOverride == "" && host != "" && host != nodeName {
		out.HostnameOverride = nodeName
		out.Why = append(out.Why, fmt.Sprintf("--hostname-override=%s: this host is %s, and a kubelet without a cloud provider registers under its host name (a new Node)", nodeName, host))
	}
	label := current
	if client != nil {
		n, err := client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		switch {
		case err == nil:
			label = n.Labels[corev1.LabelHostname]
		case !apierrors.IsNotFound(err):
			return out, fmt.Errorf("read Node %s's %s label: %w", nodeName, corev1.LabelHostname, err)
		}
	}
	after := lower(out.HostnameOverride)
	if after == "" {
		after = current
	}
	if label != "" && after != label {
		out.HostnameLabel = label
		out.Why = append(out.Why, fmt.Sprintf("--node-labels=%s=%s: the kubelet would relabel its Node %s from %s", corev1.LabelHostname, label, orUnknown(after), label))
	}
	return out, nil
}

// labelValue finds key in a --node-labels value (k=v,k=v).
func labelValue(labels, key string) (string, bool) {
	for _, item := range strings.Split(labels, ",") {
		if k, v, _ := strings.Cut(strings.TrimSpace(item), "="); k == key {
			return v, true
		}
	}
	return "", false
}

// hostNameOf is the host name of the node at root, lower-cased as the
// kubelet does: this host's on /, else <root>/etc/hostname's, else "".
func hostNameOf(root string) string {
	var name string
	if filepath.Clean(root) == "/" {
		name, _ = os.Hostname()
	} else if b, err := os.ReadFile(filepath.Join(root, "etc", "hostname")); err == nil {
		name = string(b)
	}
	return strings.ToLower(strings.TrimSpace(name))
}

func orUnknown(s string) string {
	if s == "" {
		return "(a host name not known here)"
	}
	return s
}

// sayIdentity tells the operator what nodeIdentity added.
func sayIdentity(w io.Writer, id identityFlags) {
	for _, why := range id.Why {
		fmt.Fprintln(w, "kubelet-external adds "+why)
	}
}

// kubeletClientCert is where kubeadm's kubelet keeps its rotated client
// certificate, whose subject is system:node:<its Node's name>.
const kubeletClientCert = "/var/lib/kubelet/pki/kubelet-client-current.pem"

// defaultNodeName is the Node name the node's kubelet authenticates as:
// the common name system:node:<name> of its client certificate. On the
// in-tree provider the Node is named after the instance's private DNS name,
// which the host name often is not, so the host name is the last resort.
func defaultNodeName(root string) string {
	if name := nodeNameFromCert(filepath.Join(root, kubeletClientCert)); name != "" {
		return name
	}
	if name := hostNameOf(root); name != "" {
		return name
	}
	name, _ := os.Hostname()
	return name
}

// nodeNameFromCert reads the first certificate of a PEM file and returns
// <name> of its system:node:<name> common name ("" otherwise).
func nodeNameFromCert(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return ""
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return ""
		}
		name, ok := strings.CutPrefix(c.Subject.CommonName, "system:node:")
		if !ok {
			return ""
		}
		return name
	}
}
