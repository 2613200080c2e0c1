package migration

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
	"github.com/awsccmctl/awsccmctl/internal/install"
)

// ccmKubelet plays the kubelet of the control-plane node for the CCM's
// DaemonSet: the in-tree kube-controller-manager's DaemonSet controller
// creates the Pod for the node, as in a cluster; this runs the CCM binary
// from that Pod's command line — the ConfigMap's files written out, the
// ServiceAccount's token as kubeconfig — reports the Pod Running, and
// answers the apiserver's pods proxy for it on the node's address. When the
// Pod is deleted (a rolling update, an uninstall) it stops the process and
// finishes the deletion, as a kubelet does.
type ccmKubelet struct {
	t    *testing.T
	node string
	ip   string
	host string // the node's host name: the Pod runs on the host network
	dir  string
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	proc     *childproc.Process
	podUID   string
	hz       func(context.Context) ([]string, error)
	starts   int
	unroute  func()
	logPaths []string
}

func startCCMKubelet(t *testing.T) *ccmKubelet { return startCCMKubeletOn(t, cpA) }

// startCCMKubeletOn plays the CCM Pod's kubelet on a control-plane node.
func startCCMKubeletOn(t *testing.T, spec cpSpec) *ccmKubelet {
	k := &ccmKubelet{t: t, node: spec.Node, ip: spec.IP, host: spec.Hostname, dir: t.TempDir(), stop: make(chan struct{}), done: make(chan struct{})}
	go k.loop()
	t.Cleanup(func() {
		close(k.stop)
		<-k.done
		k.kill()
		if t.Failed() {
			for _, p := range k.logPaths {
				t.Logf("CCM log tail (%s):\n%s", p, childproc.LogTail(p, 4000))
			}
		}
	})
	return k
}

func (k *ccmKubelet) loop() {
	defer close(k.done)
	for {
		select {
		case <-k.stop:
			return
		case <-time.After(300 * time.Millisecond):
		}
		k.sync()
	}
}

func (k *ccmKubelet) sync() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pods, err := env.kube.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: install.LabelName + "=" + install.AppName})
	if err != nil {
		return
	}
	var live *corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		// There is no kube-scheduler: bind the DaemonSet controller's Pod
		// for this node, as the scheduler would.
		if p.Spec.NodeName == "" && p.DeletionTimestamp == nil && daemonSetNode(p) == k.node {
			err := env.kube.CoreV1().Pods(p.Namespace).Bind(ctx, &corev1.Binding{
				ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID},
				Target:     corev1.ObjectReference{Kind: "Node", Name: k.node},
			}, metav1.CreateOptions{})
			if err != nil {
				k.t.Logf("ccm kubelet: bind %s: %v", p.Name, err)
			}
			continue
		}
		if p.Spec.NodeName != k.node {
			continue
		}
		if p.DeletionTimestamp != nil {
			// The kubelet stops the containers, then finishes the deletion.
			k.mu.Lock()
			mine := string(p.UID) == k.podUID
			k.mu.Unlock()
			if mine {
				k.kill()
			}
			_ = env.kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
			continue
		}
		live = p
	}
	k.mu.Lock()
	cur, running := k.podUID, k.proc != nil && !k.proc.Exited()
	k.mu.Unlock()
	switch {
	case live == nil:
		k.kill()
	case string(live.UID) != cur || !running:
		k.kill()
		if err := k.run(ctx, live); err != nil {
			k.t.Logf("ccm kubelet: %v", err)
		}
	}
}

// run starts the CCM as the Pod would run it.
func (k *ccmKubelet) run(ctx context.Context, pod *corev1.Pod) error {
	cm, err := env.kube.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, install.ConfigMapName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	k.mu.Lock()
	k.starts++
	n := k.starts
	k.mu.Unlock()
	dir := filepath.Join(k.dir, strconv.Itoa(n))
	cfgDir := filepath.Join(dir, "cloud-config")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		return err
	}
	for key, v := range cm.Data {
		if err := os.WriteFile(filepath.Join(cfgDir, key), []byte(v), 0o600); err != nil {
			return err
		}
	}
	cfg, err := env.cp.ServiceAccountConfig(ctx, pod.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "sa.kubeconfig")
	if err := env.cp.WriteKubeconfig(kubeconfig, cfg); err != nil {
		return err
	}
	port, err := childproc.FreePort(ctx)
	if err != nil {
		return err
	}
	c := pod.Spec.Containers[0]
	var args []string
	for _, a := range append(slices.Clone(c.Command), c.Args...) {
		// The ConfigMap's mount, resolved to where its files are here.
		a = strings.ReplaceAll(a, install.CloudConfigDir, cfgDir)
		name := strings.SplitN(strings.TrimLeft(a, "-"), "=", 2)[0]
		if name == "secure-port" || name == "bind-address" {
			continue
		}
		args = append(args, a)
	}
	// In the cluster the Pod gets its token and the apiserver's address
	// from the ServiceAccount mount; here the kubeconfig carries both.
	args = append(args, "--kubeconfig="+kubeconfig, "--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig,
		"--secure-port="+strconv.Itoa(port), "--bind-address=127.0.0.1")
	// On the host network the CCM sees the node's host name, which its
	// leader-election identity carries.
	cmd := exec.CommandContext(context.Background(), "/bin/sh", append([]string{"-c", `hostname "$0" && exec "$@"`, k.host, env.ccmBin}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUTS}
	cmd.Env = append(os.Environ(), awsEnv()...)
	logPath := filepath.Join(dir, "ccm.log")
	proc, err := childproc.StartLogged("ccm", cmd, logPath)
	if err != nil {
		return err
	}
	st := pod.DeepCopy()
	st.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: k.ip, HostIP: k.ip, PodIPs: []corev1.PodIP{{IP: k.ip}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	if _, err := env.kube.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, st, metav1.UpdateOptions{}); err != nil {
		_ = proc.Stop(5 * time.Second)
		return fmt.Errorf("CCM Pod status: %w", err)
	}
	target, _ := url.Parse("https://127.0.0.1:" + strconv.Itoa(port))
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // #nosec G402 -- the CCM's self-signed serving cert, on loopback
	unroute := env.cp.ServeNode(k.ip+":"+strconv.Itoa(install.SecurePort), rp)
	k.mu.Lock()
	k.proc, k.podUID, k.unroute = proc, string(pod.UID), unroute
	k.hz = healthzOverHTTPS("https://127.0.0.1:" + strconv.Itoa(port))
	k.logPaths = append(k.logPaths, logPath)
	k.mu.Unlock()
	return nil
}

// kill stops the running CCM (SIGTERM, as the kubelet does).
func (k *ccmKubelet) kill() {
	k.mu.Lock()
	proc, unroute := k.proc, k.unroute
	k.proc, k.podUID, k.unroute = nil, "", nil
	k.mu.Unlock()
	if proc != nil {
		_ = proc.Stop(10 * time.Second)
	}
	if unroute != nil {
		unroute()
	}
}

// healthz reads the running CCM's /healthz?verbose (an error while none
// runs).
func (k *ccmKubelet) healthz(ctx context.Context) ([]string, error) {
	k.mu.Lock()
	hz, running := k.hz, k.proc != nil && !k.proc.Exited()
	k.mu.Unlock()
	if !running {
		return nil, fmt.Errorf("no CCM runs on %s", k.node)
	}
	return hz(ctx)
}

// Starts is how many CCM processes were started.
func (k *ccmKubelet) Starts() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.starts
}

// daemonSetNode is the node a DaemonSet Pod is for: the DaemonSet
// controller pins it with a required node affinity on metadata.name.
func daemonSetNode(p *corev1.Pod) string {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range term.MatchFields {
			if f.Key == "metadata.name" && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}
