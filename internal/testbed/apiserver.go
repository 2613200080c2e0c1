package testbed

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
)

// ReadyTimeout bounds the wait for kube-apiserver's /readyz.
const ReadyTimeout = 60 * time.Second

// ServiceAccountIssuer is the issuer of service-account tokens.
const ServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// ServiceClusterIPRange is the apiserver's --service-cluster-ip-range.
const ServiceClusterIPRange = "10.96.0.0/16"

type apiServerProc struct {
	*childproc.Process
	url    string
	config *rest.Config
}

// apiServerArgs builds the command line. The flags come from hands-on runs
// of v1.36/v1.37 on loopback (docs: /work/shared/real-components.md), and
// v1.26 (Legacy) accepts them all, the egress selector configuration too:
//   - --endpoint-reconciler-type=none: otherwise the apiserver logs every 10 s
//     that 127.0.0.1 "may not be in the loopback range" for the kubernetes
//     Endpoints.
//   - --kubelet-preferred-address-types as kubeadm sets it (see below).
//   - --enable-priority-and-fairness is left at its default: turning it off
//     does not shorten start-up.
func apiServerArgs(dir string, port int, etcdURL string, p *pki, auditPolicyFile, auditLogPath string, extra []string) []string {
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(dir, "pki", "generated"),
		"--tls-cert-file=" + p.ServingCertFile,
		"--tls-private-key-file=" + p.ServingKeyFile,
		"--client-ca-file=" + p.CACertFile,
		"--authorization-mode=Node,RBAC",
		"--service-account-issuer=" + ServiceAccountIssuer,
		"--service-account-key-file=" + p.SAPubFile,
		"--service-account-signing-key-file=" + p.SAKeyFile,
		"--service-cluster-ip-range=" + ServiceClusterIPRange,
		"--allow-privileged=true",
		"--endpoint-reconciler-type=none",
		"--profiling=false",
		// kubeadm's setting: reach kubelets by IP. The default order tries
		// the Hostname address first, which would make nodes/proxy resolve
		// names like ip-10-0-1-10.ec2.internal through the machine's DNS.
		"--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
	}
	if auditPolicyFile != "" {
		args = append(args,
			"--audit-policy-file="+auditPolicyFile,
			"--audit-log-path="+auditLogPath,
			"--audit-log-format=json",
			"--audit-log-mode=blocking",
		)
	}
	return append(args, extra...)
}

// startAPIServer starts kube-apiserver from the binary at bin and waits for
// /readyz. It tries again once, on a new port, if the port was taken in
// between.
func startAPIServer(ctx context.Context, bin, dir, etcdURL string, p *pki, auditPolicyFile, auditLogPath string, extra []string) (*apiServerProc, error) {
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		var a *apiServerProc
		var collided bool
		a, collided, err = startAPIServerOnce(ctx, bin, dir, etcdURL, p, auditPolicyFile, auditLogPath, extra)
		if err == nil {
			return a, nil
		}
		if !collided {
			break
		}
	}
	return nil, err
}

func startAPIServerOnce(ctx context.Context, bin, dir, etcdURL string, p *pki, auditPolicyFile, auditLogPath string, extra []string) (_ *apiServerProc, collided bool, _ error) {
	ports, err := freePorts(ctx, 1)
	if err != nil {
		return nil, false, err
	}
	url := "https://127.0.0.1:" + strconv.Itoa(ports[0])
	logPath := filepath.Join(dir, "kube-apiserver.log")
	args := apiServerArgs(dir, ports[0], etcdURL, p, auditPolicyFile, auditLogPath, extra)
	// ctx bounds the start; the process lives until the control plane's Stop.
	proc, err := childproc.StartLogged("kube-apiserver", exec.CommandContext(context.Background(), bin, args...), logPath) //nolint:contextcheck // see above
	if err != nil {
		return nil, false, err
	}
	a := &apiServerProc{Process: proc, url: url, config: adminConfig(url, p)}
	if err := a.waitReady(ctx, ReadyTimeout); err != nil {
		_ = proc.Stop(0)
		collided = logContains(logPath, "address already in use")
		return nil, collided, err
	}
	return a, false, nil
}

// adminConfig authenticates with the admin client certificate (system:masters).
func adminConfig(url string, p *pki) *rest.Config {
	return &rest.Config{
		Host: url,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   p.CACert,
			CertData: p.AdminCert,
			KeyData:  p.AdminKey,
		},
		QPS:   1000,
		Burst: 2000,
	}
}

// waitReady polls /readyz with backoff until it answers 200 "ok".
func (a *apiServerProc) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cfg := rest.CopyConfig(a.config)
	cfg.Timeout = 5 * time.Second
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()
	last := "no answer yet"
	err = poll(ctx, 20*time.Millisecond, 250*time.Millisecond, func() (bool, error) {
		if a.Exited() {
			return false, fmt.Errorf("kube-apiserver failed to start: %s", a.ExitStatus())
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.url+"/readyz", nil)
		resp, err := client.Do(req)
		if err != nil {
			last = err.Error()
			return false, nil //nolint:nilerr // not up yet: keep polling; the timeout reports last
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		_ = resp.Body.Close()
		last = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		if ctx.Err() != nil && !a.Exited() {
			err = fmt.Errorf("kube-apiserver not ready after %s (last /readyz: %s)", timeout, last)
		}
		return fmt.Errorf("%w\n--- tail of %s ---\n%s", err, a.LogPath, childproc.LogTail(a.LogPath, logTailBytes))
	}
	return nil
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}
