package realkubelet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// Timeouts. The kubelet answers /healthz about half a second after it
// starts, and exits within a second of SIGTERM.
const (
	healthyTimeout = 30 * time.Second
	criTimeout     = 10 * time.Second
	stopGrace      = 10 * time.Second
	logTailBytes   = 4096
)

// nsScript runs in the node's new mount and UTS namespaces: it lays the
// node's folders over the host's, names the host, and execs the kubelet
// (so the kubelet keeps the PID the test started). The mounts are private
// to the namespace and go away with it. The node's /etc reaches the
// overlay's options through a short mount point of the node's run folder:
// a root under a test's temporary folder may hold ',' or ':', which those
// options cannot carry.
const nsScript = `set -e
root=$1 host=$2 etc=$3
shift 3
mount --make-rprivate /
mount --bind "$root/etc" "$etc"
mount -t overlay realkubelet-etc -o "lowerdir=$etc:/etc" /etc
mount --bind "$root/var/lib" /var/lib
mount --bind "$root/var/log" /var/log
hostname "$host"
exec "$@"`

// Options configures a node.
type Options struct {
	// ControlPlane issues the node's credentials (required).
	ControlPlane *testbed.ControlPlane
	// NodeName is the name the kubelet registers its Node under (required):
	// with the in-tree provider, the instance's private DNS name, which the
	// kubelet reads from EC2. The credentials are system:node:<NodeName>.
	NodeName string
	// Hostname is the OS host name in the node's UTS namespace (required),
	// e.g. "ip-10-0-1-10" for an Ubuntu node: the in-tree kubelet's
	// kubernetes.io/hostname label.
	Hostname string
	// Env is added to the kubelet's environment (the test's own comes
	// first): the AWS one, with AWS_EC2_METADATA_SERVICE_ENDPOINT at the
	// node's own IMDS (awsemu.IMDSEnvFor(emulator.IMDSFor(id)).List()).
	Env []string
	// CloudConfig is /etc/kubernetes/cloud.conf (InTreeCloudConfig).
	CloudConfig string
	// KubeadmArgs are KUBELET_KUBEADM_ARGS after the CRI endpoint; nil
	// means InTreeFlags.
	KubeadmArgs []string
	// Dir is the node's folder (logs, systemctl, and the root unless Root
	// is set); "" is a new t.TempDir().
	Dir string
	// Root is the node's root; "" is Dir/root. An existing root (a
	// control-plane node's, with static Pod manifests) keeps its other
	// files; the kubelet's files listed in the package doc are written over.
	Root string
}

// Node is one running test bed node: a fake CRI and a real kubelet.
type Node struct {
	Name     string // the Node's name (Options.NodeName)
	Hostname string // its OS host name
	// Root is the node's root file system, laid out like a kubeadm node:
	// `awsccmctl migrate-from-intree node --root` takes it.
	Root string
	// Dir is the node's folder: the logs, the systemctl folder, and
	// by default Root.
	Dir string
	// KubeadmFlagsFile is Root + KubeadmFlagsPath.
	KubeadmFlagsFile string
	// Systemctl is the node's systemctl program and SystemctlDir its folder,
	// to put first in the PATH of what restarts the kubelet; SystemctlLog
	// lists its calls, one per line.
	Systemctl, SystemctlDir, SystemctlLog string
	// HealthzURL is the kubelet's /healthz (HealthzPort on 127.0.0.1);
	// Port is its API port.
	HealthzURL        string
	HealthzPort, Port int
	// LogPath is the kubelet's output: every start appends a "### kubelet"
	// line and what that process wrote. CRILogPath is fakecri's.
	LogPath, CRILogPath string

	kubeletBin string
	env        []string
	// procCtx is the processes' context: Start's without its end (Stop
	// ends them, by signal).
	procCtx context.Context
	runDir  string // short: fakecri's socket, the /etc mount point
	cri     *childproc.Process
	sup     *supervisor

	mu      sync.Mutex // guards kubelet and starts; held across a restart
	kubelet *childproc.Process
	starts  int

	stopOnce sync.Once
	stopErr  error
}

// Start starts a node and returns when its kubelet answers /healthz ok;
// the node stops when the test ends (with the kubelet's log tail in the
// test's log if it failed). It skips the test where a node cannot run
// (see the package doc) and fails it on bad Options or a node that does
// not come up.
func Start(t testing.TB, opts Options) *Node {
	t.Helper()
	kubelet, fakecri := Binaries(t)
	ctx := t.Context()
	if why := Unsupported(ctx); why != "" {
		t.Skip(why)
	}
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	n, err := start(ctx, kubelet, fakecri, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kubelet of node %s, end of %s:\n%s", n.Name, n.LogPath, childproc.LogTail(n.LogPath, logTailBytes))
		}
		if err := n.Stop(); err != nil {
			t.Errorf("stop node %s: %v", n.Name, err)
		}
	})
	return n
}

func start(ctx context.Context, kubeletBin, fakecriBin string, opts Options) (_ *Node, retErr error) {
	switch {
	case opts.ControlPlane == nil:
		return nil, errors.New("realkubelet: Options.ControlPlane is required")
	case opts.NodeName == "" || opts.Hostname == "":
		return nil, fmt.Errorf("realkubelet: Options.NodeName (%q) and Options.Hostname (%q) are required", opts.NodeName, opts.Hostname)
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	root := filepath.Join(dir, "root")
	if opts.Root != "" {
		if root, err = filepath.Abs(opts.Root); err != nil {
			return nil, err
		}
	}
	n := &Node{
		Name: opts.NodeName, Hostname: opts.Hostname, Dir: dir, Root: root,
		SystemctlDir: filepath.Join(dir, "bin"),
		LogPath:      filepath.Join(dir, "kubelet.log"), CRILogPath: filepath.Join(dir, "fakecri.log"),
		kubeletBin: kubeletBin, env: append(os.Environ(), opts.Env...), procCtx: context.WithoutCancel(ctx),
	}
	n.KubeadmFlagsFile = filepath.Join(n.Root, KubeadmFlagsPath)
	n.Systemctl = filepath.Join(n.SystemctlDir, "systemctl")
	n.SystemctlLog = filepath.Join(dir, "systemctl.log")
	defer func() {
		if retErr != nil {
			_ = n.Stop()
			retErr = fmt.Errorf("realkubelet: start node %s: %w", opts.NodeName, retErr)
		}
	}()
	if n.Port, err = childproc.FreePort(ctx); err != nil {
		return nil, err
	}
	if n.HealthzPort, err = childproc.FreePort(ctx); err != nil {
		return nil, err
	}
	n.HealthzURL = "http://127.0.0.1:" + strconv.Itoa(n.HealthzPort) + "/healthz"
	// A short folder for fakecri's socket (a unix socket's path is at most
	// 107 bytes) and the mount point of the node's /etc (nsScript).
	if n.runDir, err = os.MkdirTemp("", "realkubelet-"); err != nil {
		return nil, err
	}
	if strings.ContainsAny(n.runDir, ",:") {
		return nil, fmt.Errorf("the temporary folder %q holds ',' or ':', which overlayfs options cannot carry (set TMPDIR)", n.runDir)
	}
	if err := os.Mkdir(filepath.Join(n.runDir, "etc"), 0o755); err != nil {
		return nil, err
	}
	socket := filepath.Join(n.runDir, "cri.sock")
	ca, err := os.ReadFile(opts.ControlPlane.CACertFile)
	if err != nil {
		return nil, err
	}
	args := opts.KubeadmArgs
	if args == nil {
		args = InTreeFlags
	}
	l := layout{criEndpoint: "unix://" + socket, kubeadmArgs: args, port: n.Port, health: n.HealthzPort, caPEM: ca, cloudConfig: opts.CloudConfig, hostname: opts.Hostname}
	if err := l.write(n.Root); err != nil {
		return nil, err
	}
	if err := opts.ControlPlane.ClientCertKubeconfig(filepath.Join(n.Root, KubeconfigPath), "system:node:"+n.Name, []string{"system:nodes"}); err != nil {
		return nil, err
	}

	cri := exec.CommandContext(context.WithoutCancel(ctx), fakecriBin, "--endpoint=unix://"+socket)
	if n.cri, err = childproc.StartLogged("fakecri", cri, n.CRILogPath); err != nil {
		return nil, err
	}
	if err := n.waitCRI(ctx, socket); err != nil {
		return nil, err
	}
	if n.sup, err = startSupervisor(n); err != nil {
		return nil, err
	}
	n.mu.Lock()
	err = n.startKubelet()
	n.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return n, n.WaitHealthy(ctx, healthyTimeout)
}

// waitCRI waits for fakecri's socket.
func (n *Node) waitCRI(ctx context.Context, socket string) error {
	ctx, cancel := context.WithTimeout(ctx, criTimeout)
	defer cancel()
	for {
		if _, err := os.Stat(socket); err == nil {
			return nil
		}
		if n.cri.Exited() {
			return n.cri.ExitError(logTailBytes)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("fakecri did not create %s within %s: %s", socket, criTimeout, childproc.LogTail(n.CRILogPath, logTailBytes))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// startKubelet starts a kubelet from the node's files, as systemd does
// (n.mu held; none may be running).
func (n *Node) startKubelet() error {
	argv, err := commandLine(n.Root)
	if err != nil {
		return err
	}
	if filepath.Base(argv[0]) != "kubelet" {
		return fmt.Errorf("the kubelet unit's ExecStart= runs %s, not a kubelet", argv[0])
	}
	argv[0] = n.kubeletBin
	cmd := exec.CommandContext(n.procCtx, "unshare", append([]string{"--mount", "--uts", "/bin/sh", "-c", nsScript, "sh", n.Root, n.Hostname, filepath.Join(n.runDir, "etc")}, argv...)...)
	cmd.Env = n.env
	p, err := childproc.StartLogged("kubelet", cmd, n.LogPath)
	if err != nil {
		return err
	}
	n.kubelet = p
	n.starts++
	return nil
}

// stopKubelet stops the running kubelet, if any (n.mu held).
func (n *Node) stopKubelet() error {
	if n.kubelet == nil {
		return nil
	}
	err := n.kubelet.Stop(stopGrace)
	n.kubelet = nil
	return err
}

// Restart stops the kubelet and starts a new one from the node's files,
// as `systemctl restart kubelet.service` does on a node: it returns once
// the new process runs, before it is healthy (WaitHealthy).
func (n *Node) Restart() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.stopKubelet(); err != nil {
		return err
	}
	return n.startKubelet()
}

// PID returns the running kubelet's process ID, 0 when none runs.
func (n *Node) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.kubelet == nil || n.kubelet.Exited() {
		return 0
	}
	return n.kubelet.Pid()
}

// Starts counts the kubelets started on this node.
func (n *Node) Starts() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.starts
}

// Log returns the kubelet's output so far, of every start.
func (n *Node) Log() (string, error) {
	b, err := os.ReadFile(n.LogPath)
	return string(b), err
}

// WaitHealthy waits up to timeout for the running kubelet to answer
// /healthz ok; an exited kubelet is an error with its log tail.
func (n *Node) WaitHealthy(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 2 * time.Second}
	for {
		n.mu.Lock()
		p := n.kubelet
		n.mu.Unlock()
		if p == nil {
			return fmt.Errorf("node %s runs no kubelet", n.Name)
		}
		if p.Exited() {
			return p.ExitError(logTailBytes)
		}
		ok, last := healthz(ctx, client, n.HealthzURL)
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the kubelet of node %s (pid %d) did not answer %s ok within %s: %s\n--- tail of %s ---\n%s",
				n.Name, p.Pid(), n.HealthzURL, timeout, last, n.LogPath, childproc.LogTail(n.LogPath, logTailBytes))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func healthz(ctx context.Context, c *http.Client, url string) (bool, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := c.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode == http.StatusOK && string(b) == "ok" {
		return true, ""
	}
	return false, fmt.Sprintf("HTTP %d: %s", resp.StatusCode, b)
}

// Stop stops the kubelet, the systemctl supervisor and fakecri. It is safe
// to call more than once.
func (n *Node) Stop() error {
	n.stopOnce.Do(func() {
		var errs []error
		n.sup.stop()
		n.mu.Lock()
		errs = append(errs, n.stopKubelet())
		n.mu.Unlock()
		errs = append(errs, n.cri.Stop(stopGrace))
		if n.runDir != "" {
			errs = append(errs, os.RemoveAll(n.runDir))
		}
		n.stopErr = errors.Join(errs...)
	})
	return n.stopErr
}
