package migratecmd

import (
	"errors"
	"fmt"
	"path/filepath"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
)

// kubeletCredentials is the client of --kubelet-credentials: the node's own
// identity, read from the kubeconfig the kubelet's files name
// (--kubeconfig in its flags), under root. In a Pod that sees the host at
// root this is what the node's kubelet authenticates with, so the Pod
// needs no ServiceAccount and no RBAC beyond what migration-rbac already
// grants system:nodes. It returns the kubeconfig's node path too, for the
// messages.
func kubeletCredentials(root string) (kubernetes.Interface, string, error) {
	cfg, path, err := kubeletRESTConfig(root)
	if err != nil {
		return nil, path, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	return client, path, err
}

// kubeletRESTConfig is kubeletCredentials' client configuration.
func kubeletRESTConfig(root string) (*rest.Config, string, error) {
	node, err := nodefiles.Read(root)
	if err != nil {
		return nil, "", fmt.Errorf("--kubelet-credentials: read the kubelet's files under %s: %w", root, err)
	}
	if node.Kubelet == nil {
		return nil, "", fmt.Errorf("--kubelet-credentials: the files under %s start no kubelet", root)
	}
	path, ok := node.Kubelet.Flags.Get("kubeconfig")
	if !ok || path == "" {
		return nil, "", errors.New("--kubelet-credentials: the kubelet's flags name no --kubeconfig; pass --kubeconfig")
	}
	cfg, err := clientcmd.LoadFromFile(filepath.Join(root, path))
	if err != nil {
		return nil, path, fmt.Errorf("--kubelet-credentials: the kubelet's kubeconfig %s: %w", path, err)
	}
	// Absolute paths are node paths: under root first; then relative ones
	// against the kubeconfig's folder, which is already under root.
	underRoot(cfg, root)
	if err := clientcmd.ResolveLocalPaths(cfg); err != nil {
		return nil, path, fmt.Errorf("--kubelet-credentials: the kubelet's kubeconfig %s: %w", path, err)
	}
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, path, fmt.Errorf("--kubelet-credentials: the kubelet's kubeconfig %s: %w", path, err)
	}
	return rc, path, nil
}

// underRoot moves the files a kubeconfig names by absolute path under root,
// where the node's files are: /var/lib/kubelet/pki/kubelet-client-current.pem
// is <root>/var/lib/kubelet/pki/... to a Pod with the host at root.
func underRoot(cfg *clientcmdapi.Config, root string) {
	at := func(p *string) {
		if *p != "" && filepath.IsAbs(*p) {
			*p = filepath.Join(root, *p)
		}
	}
	for _, c := range cfg.Clusters {
		at(&c.CertificateAuthority)
	}
	for _, a := range cfg.AuthInfos {
		at(&a.ClientCertificate)
		at(&a.ClientKey)
		at(&a.TokenFile)
	}
}
