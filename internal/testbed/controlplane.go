package testbed

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options configures Start. The zero value is valid.
type Options struct {
	// Dir is the state folder (certificates, etcd data, logs, kubeconfig).
	// Empty: a new folder from os.MkdirTemp, removed by Stop. A folder given
	// here belongs to the caller and is kept (handy for reading logs).
	Dir string
	// ExtraAPIServerFlags are appended to kube-apiserver's command line.
	ExtraAPIServerFlags []string
	// AuditPolicy, if set, is written to Dir/audit-policy.yaml and enables
	// the audit log at Dir/audit.log (JSON lines, blocking mode).
	AuditPolicy []byte
	// APIServerBinary, if set, is the kube-apiserver to run instead of
	// BinDir's, e.g. the LegacyVersion one from Legacy. etcd still comes
	// from BinDir. The command line is the same for every supported
	// version (checked with v1.26.13 and v1.37.1).
	APIServerBinary string
}

// ControlPlane is a running etcd + kube-apiserver.
type ControlPlane struct {
	// Config is the admin client configuration: client certificate with
	// O=system:masters, QPS 1000, burst 2000. Copy it (rest.CopyConfig)
	// before changing it.
	Config *rest.Config
	// URL is the apiserver's https URL on 127.0.0.1.
	URL string
	// Dir is the state folder.
	Dir string
	// KubeconfigPath is a kubeconfig file for the admin, with certificates
	// embedded, usable by kubectl or a CCM subprocess.
	KubeconfigPath string
	// AuditLogPath is the audit log, empty unless Options.AuditPolicy is set.
	AuditLogPath string
	// StartupTime is how long Start took, from its call to /readyz = ok.
	StartupTime time.Duration
	// CACertFile is the cluster CA certificate (PEM): it signs the
	// apiserver's serving certificate and the client certificates the
	// apiserver accepts. A kube-controller-manager takes it as
	// --root-ca-file (and --client-ca-file).
	CACertFile string
	// ServiceAccountKeyFile is the private key (PEM, ECDSA P-256) that
	// signs service-account tokens: kube-controller-manager's
	// --service-account-private-key-file.
	ServiceAccountKeyFile string

	etcd      *etcdProc
	apiserver *apiServerProc
	egress    *clusterEgress
	pki       *pki
	removeDir bool

	stopOnce sync.Once
	stopErr  error
}

// Start starts etcd and kube-apiserver from BinDir on free loopback ports and
// returns when /readyz answers ok (polled with backoff, at most ReadyTimeout).
// On failure nothing is left running and the error holds the tail of the
// logs.
func Start(ctx context.Context, opts Options) (_ *ControlPlane, retErr error) {
	begin := time.Now()
	binDir, err := BinDir()
	if err != nil {
		return nil, err
	}
	c := &ControlPlane{Dir: opts.Dir}
	if c.Dir == "" {
		if removed, err := sweepAbandoned(os.TempDir()); err != nil || len(removed) > 0 {
			fmt.Fprintf(os.Stderr, "testbed: removed the folders of %d control planes whose test run is gone: %v (errors: %v)\n", len(removed), removed, err)
		}
		if c.Dir, err = os.MkdirTemp("", strings.TrimSuffix(dirPattern, "*")); err != nil {
			return nil, err
		}
		c.removeDir = true
		if err := writeOwner(c.Dir); err != nil {
			return nil, errors.Join(err, os.RemoveAll(c.Dir))
		}
	} else if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return nil, err
	}
	if c.Dir, err = filepath.Abs(c.Dir); err != nil {
		return nil, err
	}
	defer func() {
		if retErr != nil {
			_ = c.Stop()
			retErr = fmt.Errorf("testbed: start control plane: %w", retErr)
		}
	}()

	p, err := newPKI(filepath.Join(c.Dir, "pki"))
	if err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	c.pki, c.CACertFile, c.ServiceAccountKeyFile = p, p.CACertFile, p.SAKeyFile
	apiserverBin := filepath.Join(binDir, APIServerBinary)
	if opts.APIServerBinary != "" {
		apiserverBin = opts.APIServerBinary
	}
	var auditPolicyFile string
	if len(opts.AuditPolicy) > 0 {
		auditPolicyFile = filepath.Join(c.Dir, "audit-policy.yaml")
		if err := writeFile(auditPolicyFile, opts.AuditPolicy); err != nil {
			return nil, err
		}
		c.AuditLogPath = filepath.Join(c.Dir, "audit.log")
	}

	if c.egress, err = startClusterEgress(ctx, c.Dir, p); err != nil {
		return nil, err
	}
	egressFlag, err := c.egress.writeConfig(c.Dir)
	if err != nil {
		return nil, err
	}
	if c.etcd, err = startEtcd(ctx, binDir, c.Dir); err != nil {
		return nil, err
	}
	flags := append([]string{egressFlag}, opts.ExtraAPIServerFlags...)
	c.apiserver, err = startAPIServer(ctx, apiserverBin, c.Dir, c.etcd.clientURL, p, auditPolicyFile, c.AuditLogPath, flags)
	if err != nil {
		if c.etcd.Exited() {
			err = fmt.Errorf("%w\n%w", err, c.etcd.ExitError(logTailBytes))
		}
		return nil, err
	}
	c.URL = c.apiserver.url
	c.Config = c.apiserver.config
	c.KubeconfigPath = filepath.Join(c.Dir, "admin.kubeconfig")
	if err := c.WriteKubeconfig(c.KubeconfigPath, c.Config); err != nil {
		return nil, err
	}
	c.StartupTime = time.Since(begin)
	return c, nil
}

// Stop stops kube-apiserver, then etcd (SIGTERM to each process group, then
// SIGKILL after a short grace), waits for both, and removes Dir if Start
// created it. It is safe to call more than once; later calls return the
// first call's result.
func (c *ControlPlane) Stop() error {
	if c == nil {
		return nil
	}
	c.stopOnce.Do(func() {
		var errs []error
		if c.apiserver != nil {
			errs = append(errs, c.apiserver.Stop(5*time.Second))
		}
		if c.etcd != nil {
			errs = append(errs, c.etcd.Stop(5*time.Second))
		}
		c.egress.close()
		if c.removeDir && c.Dir != "" {
			errs = append(errs, os.RemoveAll(c.Dir))
		}
		c.stopErr = errors.Join(errs...)
	})
	return c.stopErr
}

// ServeNode answers the apiserver's connections to target — a node address
// and port, e.g. "10.200.0.7:10250", as nodes/proxy dials them — with h
// until stop is called: h plays the node's kubelet. The apiserver sends all
// traffic to nodes through the test bed's egress proxy, which refuses
// targets without a handler. Tests pass stop to t.Cleanup.
func (c *ControlPlane) ServeNode(target string, h http.Handler) (stop func()) {
	c.egress.route(target, h)
	return func() { c.egress.unroute(target) }
}

// pids returns the process IDs of the apiserver and etcd (for tests).
func (c *ControlPlane) pids() []int {
	var out []int
	if c.apiserver != nil {
		out = append(out, c.apiserver.Pid())
	}
	if c.etcd != nil {
		out = append(out, c.etcd.Pid())
	}
	return out
}

// ServiceAccountConfig creates the namespace and the ServiceAccount if they
// are missing, issues a 1-hour token through the TokenRequest API, and
// returns a client configuration that authenticates as that ServiceAccount
// (it has no permissions beyond the defaults until RBAC grants some).
func (c *ControlPlane) ServiceAccountConfig(ctx context.Context, namespace, name string) (*rest.Config, error) {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	_, err = cs.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create serviceaccount %s/%s: %w", namespace, name, err)
	}
	expiry := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("token for serviceaccount %s/%s: %w", namespace, name, err)
	}
	return &rest.Config{
		Host:            c.URL,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.Config.CAData},
		BearerToken:     tr.Status.Token,
		QPS:             c.Config.QPS,
		Burst:           c.Config.Burst,
	}, nil
}

// ClientCertKubeconfig issues a client certificate for user cn in groups
// orgs, signed by the control plane's CA (ECDSA P-256, valid as long as the
// CA), and writes a kubeconfig for it to path (mode 0600, certificate and
// key embedded, parent folders created). This is how kubeadm's
// controller-manager.conf (cn "system:kube-controller-manager", no group)
// and scheduler.conf authenticate, so RBAC applies to the holder as in a
// real cluster: only system:masters in orgs bypasses it.
func (c *ControlPlane) ClientCertKubeconfig(path, cn string, orgs []string) error {
	if c.pki == nil {
		return errors.New("testbed: ClientCertKubeconfig: control plane not started")
	}
	certPEM, keyPEM, err := c.pki.clientCert(cn, orgs)
	if err != nil {
		return fmt.Errorf("testbed: client certificate for %s: %w", cn, err)
	}
	return c.WriteKubeconfig(path, &rest.Config{
		Host:            c.URL,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.Config.CAData, CertData: certPEM, KeyData: keyPEM},
	})
}

// WriteKubeconfig writes a kubeconfig file (mode 0600, parent folders
// created) with one cluster, user and current context taken from cfg:
// server, CA, client certificate and key, bearer token or token file. Data
// fields are embedded; file fields are referenced by path.
func (c *ControlPlane) WriteKubeconfig(path string, cfg *rest.Config) error {
	if cfg == nil {
		return errors.New("testbed: WriteKubeconfig: nil config")
	}
	const name = "testbed"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthority:     cfg.CAFile,
		CertificateAuthorityData: cfg.CAData,
		InsecureSkipTLSVerify:    cfg.Insecure,
		TLSServerName:            cfg.ServerName,
	}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{
		ClientCertificate:     cfg.CertFile,
		ClientCertificateData: cfg.CertData,
		ClientKey:             cfg.KeyFile,
		ClientKeyData:         cfg.KeyData,
		Token:                 cfg.BearerToken,
		TokenFile:             cfg.BearerTokenFile,
		Impersonate:           cfg.Impersonate.UserName,
		ImpersonateUID:        cfg.Impersonate.UID,
		ImpersonateGroups:     cfg.Impersonate.Groups,
		ImpersonateUserExtra:  cfg.Impersonate.Extra,
		Username:              cfg.Username,
		Password:              cfg.Password,
	}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: metav1.NamespaceDefault}
	kc.CurrentContext = name
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*kc, path)
}
