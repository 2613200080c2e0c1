package migration

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/testbed/fakekubelet"
	"github.com/awsccmctl/awsccmctl/internal/testbed/fakesystemd"
	"github.com/awsccmctl/awsccmctl/internal/testbed/nodepods"
)

// The node steps as Pods (apply --node-runner=pods): each node plays its
// kubelet for the Pods bound to it (nodepods.Runner: the Pod's command as a
// process, /host under the node's root), and its systemd (fakesystemd: the
// static systemctl at <root>/usr/bin/systemctl, which the node command runs
// chrooted into the root, restarts the node's kubelet stand-in).

// nodeStepPods selects the node-step Pods apply creates.
const nodeStepPods = "app.kubernetes.io/name=awsccmctl-node-step"

// podMaxUnavailable is the e2e's --max-unavailable.
const podMaxUnavailable = 2

// podNodes runs the node-step Pods of a set of nodes.
type podNodes struct {
	roots   map[string]string
	runners map[string]*nodepods.Runner
	tally   *nodepods.Tally
	systemd map[string]*fakesystemd.Server
}

var (
	systemctlOnce sync.Once
	systemctlBin  string
	systemctlErr  error
)

// startPodNodes makes each node of roots run its node-step Pods: its
// kubelet credentials at /etc/kubernetes/kubelet.conf (the file its
// kubelet flags name), its kubelet stand-in run by its fake systemd, and a
// Runner for its Pods.
func startPodNodes(t *testing.T, roots map[string]string) *podNodes {
	t.Helper()
	ctx := context.Background()
	if os.Geteuid() != 0 {
		t.Skip("the node-step Pods' systemctl runs chrooted into the node's root: needs root")
	}
	systemctlOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fakesystemctl")
		if err != nil {
			systemctlErr = err
			return
		}
		systemctlBin, systemctlErr = fakesystemd.BuildSystemctl(ctx, dir)
	})
	if systemctlErr != nil {
		t.Fatal(systemctlErr)
	}
	// No kube-controller-manager of the test bed creates it, and the
	// ServiceAccount admission refuses a Pod without it (a real cluster
	// has it).
	_, err := env.kube.CoreV1().ServiceAccounts("kube-system").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "kube-system"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	p := &podNodes{roots: roots, runners: map[string]*nodepods.Runner{}, systemd: map[string]*fakesystemd.Server{}, tally: &nodepods.Tally{}}
	for _, n := range slices.Sorted(maps.Keys(roots)) {
		root := roots[n]
		if err := env.cp.ClientCertKubeconfig(filepath.Join(root, "etc", "kubernetes", "kubelet.conf"), "system:node:"+n, []string{"system:nodes"}); err != nil {
			t.Fatal(err)
		}
		if err := fakesystemd.InstallSystemctl(systemctlBin, root); err != nil {
			t.Fatal(err)
		}
		kubelet := fakekubelet.NewService(t, healthzPortOf(t, root), "ok", filepath.Join(root, "var", "lib", "kubelet", "kubeadm-flags.env"))
		// Restarted, it answers /healthz only after a while, so the node
		// steps of a kubelet phase overlap as on real nodes (where the
		// restart and the wait take seconds) and the rollout's bound shows.
		kubelet.SetStartDelay(1500 * time.Millisecond)
		if err := kubelet.Start(ctx); err != nil {
			t.Fatalf("start the kubelet of %s: %v", n, err)
		}
		srv, err := fakesystemd.Start(fakesystemd.Options{Root: root, Handler: fakesystemd.Units(map[string]fakesystemd.Unit{"kubelet.service": kubelet})})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Stop)
		p.systemd[n] = srv
		r, err := nodepods.Start(ctx, nodepods.Options{Client: env.kube, NodeName: n, Root: root, Binaries: map[string]string{"awsccmctl": env.ctlBin}, Tally: p.tally,
			// The CCM's DaemonSet Pods are startCCMKubeletOn's to play.
			LabelSelector: nodeStepPods})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Stop)
		p.runners[n] = r
	}
	return p
}

// flags are apply's and rollback's flags for the Pods.
func (p *podNodes) flags() []string {
	return []string{"--node-runner=pods", "--node-image=registry.example.com/awsccmctl:v0.0.0-e2e", "--max-unavailable=" + strconv.Itoa(podMaxUnavailable)}
}

// Runs lists the node-step Pods run, by start time.
func (p *podNodes) Runs() []string {
	var out []string
	for _, r := range p.runs() {
		out = append(out, fmt.Sprintf("%s %s %s exit %d", r.run.Started.UTC().Format("15:04:05.000"), r.node, phaseOf(r.run.Args), r.run.ExitCode))
	}
	return out
}

// Stop is the agent's: the Runners stop with the test.
func (p *podNodes) Stop() {}

type nodeRun struct {
	node string
	run  nodepods.Run
}

func (p *podNodes) runs() []nodeRun {
	var out []nodeRun
	for n, r := range p.runners {
		for _, run := range r.Runs() {
			out = append(out, nodeRun{node: n, run: run})
		}
	}
	slices.SortFunc(out, func(a, b nodeRun) int { return a.run.Started.Compare(b.run.Started) })
	return out
}

func phaseOf(args []string) string {
	var out []string
	for _, a := range args {
		if strings.HasPrefix(a, "--phase=") || strings.HasPrefix(a, "--scope=") {
			out = append(out, strings.SplitN(a, "=", 2)[1])
		}
	}
	return strings.Join(out, "/")
}

// check asserts how the Pods ran: every one succeeded, the control-plane
// phases one node at a time, the kubelet phases at most podMaxUnavailable
// at once and, with more nodes than that, that many at some moment; the
// kubelets restarted through the chrooted systemctl; no Pod left.
func (p *podNodes) check(t *testing.T, phases []string) {
	t.Helper()
	runs := p.runs()
	byPhase := map[string][]nodeRun{}
	for _, r := range runs {
		if r.run.ExitCode != 0 || r.run.Err != "" {
			t.Errorf("node-step Pod %s on %s (%s): exit %d %s; log %s", r.run.Name, r.node, phaseOf(r.run.Args), r.run.ExitCode, r.run.Err, r.run.LogPath)
		}
		// The Pod's command, /host rewritten to the node's root.
		want := []string{"migrate-from-intree", "node", "--root=" + p.roots[r.node], "--node-name=" + r.node, "--kubelet-credentials", "--chroot-systemctl"}
		missing := slices.ContainsFunc(want[2:], func(w string) bool { return !slices.Contains(r.run.Args, w) })
		if missing || len(r.run.Args) < 2 || !slices.Equal(r.run.Args[:2], want[:2]) {
			t.Errorf("node-step Pod %s ran %v, want %v", r.run.Name, r.run.Args, want)
		}
		byPhase[phaseOf(r.run.Args)] = append(byPhase[phaseOf(r.run.Args)], r)
	}
	for _, ph := range phases {
		rs := byPhase[ph]
		nodes := map[string]bool{}
		for _, r := range rs {
			nodes[r.node] = true
		}
		most := mostAtOnce(rs)
		limit := podMaxUnavailable
		if strings.HasPrefix(ph, "control-plane") || ph == "restore/control-plane" {
			limit = 1
		}
		t.Logf("phase %s: %d Pods on %d nodes, at most %d at once (limit %d)", ph, len(rs), len(nodes), most, limit)
		switch {
		case len(rs) == 0:
			t.Errorf("phase %s: no node-step Pod ran", ph)
		case most > limit:
			t.Errorf("phase %s: %d Pods ran at once, limit %d", ph, most, limit)
		case len(nodes) >= limit && most < limit:
			t.Errorf("phase %s: at most %d Pods at once over %d nodes: the rollout did not use its %d", ph, most, len(nodes), limit)
		}
	}
	for n, srv := range p.systemd {
		restarts := 0
		for _, c := range srv.Calls() {
			if c.Verb == "restart" {
				restarts++
			}
		}
		if restarts == 0 {
			t.Errorf("%s: the node step never restarted the kubelet through the chrooted systemctl", n)
		}
	}
	left, err := env.kube.CoreV1().Pods("kube-system").List(context.Background(), metav1.ListOptions{LabelSelector: nodeStepPods})
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Items) > 0 {
		t.Errorf("%d node-step Pods left after the run", len(left.Items))
	}
}

// mostAtOnce is the most runs whose lives overlap.
func mostAtOnce(rs []nodeRun) int {
	type edge struct {
		at time.Time
		d  int
	}
	var edges []edge
	for _, r := range rs {
		edges = append(edges, edge{r.run.Started, 1}, edge{r.run.Finished, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.d - b.d // an end before a start at the same instant
	})
	cur, most := 0, 0
	for _, e := range edges {
		cur += e.d
		most = max(most, cur)
	}
	return most
}

// healthzPortOf is the healthz port nodeRoot gave the node's kubelet.
func healthzPortOf(t *testing.T, root string) int {
	t.Helper()
	cfg := filepath.Join(root, "var", "lib", "kubelet", "config.yaml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := healthzPortLine.FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s sets no healthzPort", cfg)
	}
	port, _ := strconv.Atoi(string(m[1]))
	return port
}
