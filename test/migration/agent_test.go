package migration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/kubeletrun"
	"github.com/awsccmctl/awsccmctl/internal/migrate"
	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/procwatch"
	"github.com/awsccmctl/awsccmctl/internal/testbed/fakekubelet"
)

// nodeAgent plays the operator's scripts: it watches the journal and, when
// a run waits for a node step, runs `awsccmctl migrate-from-intree node` on
// each of the step's nodes (their fake roots), with that node's own
// credentials, exactly as SSM or SSH would.
type nodeAgent struct {
	t     *testing.T
	plan  *migrate.MigrationPlan
	roots map[string]string // node name -> fake root
	// kubeconfigs are the nodes' credentials (system:node:<name>).
	kubeconfigs map[string]string
	// paths are the nodes' PATHs: each finds its own systemctl, which runs
	// that node's kubelet (startNodeKubelet).
	paths map[string]string
	// override, when it returns true, replaces the node step for a phase
	// (trap C: a hand edit instead of the tool).
	override func(step, phase string) bool
	// pacing, when set, plays a person: one node at a time, in the order
	// apply printed (reversed with Reverse), with Delay before each.
	pacing *pacing

	mu   sync.Mutex
	done map[string]bool // step|state|started
	runs []string
	stop chan struct{}
	wg   sync.WaitGroup
}

// pacing is how an operator works through a node step.
type pacing struct {
	// Delay is the time before running the step on each node, by phase
	// (a person reading apply's output, SSM, Ansible).
	Delay func(phase string) time.Duration
	// Reverse runs the nodes in the other order than apply printed.
	Reverse bool
	// OnRun, if set, hears of each node step as it starts.
	OnRun func(what string)
}

// startPacedNodeAgent starts a nodeAgent on roots at a person's pace (nil:
// machine speed, the plan's node order).
func startPacedNodeAgent(t *testing.T, plan *migrate.MigrationPlan, roots map[string]string, p *pacing) *nodeAgent {
	t.Helper()
	return startNodeAgentWith(t, plan, roots, p, nil)
}

// startNodeAgentWith is startPacedNodeAgent where running maps the nodes
// whose kubelet already runs (a real one) to the PATH under which their
// node step finds their systemctl; the others get a stand-in.
func startNodeAgentWith(t *testing.T, plan *migrate.MigrationPlan, roots map[string]string, p *pacing, running map[string]string) *nodeAgent {
	t.Helper()
	a := &nodeAgent{t: t, plan: plan, roots: roots, kubeconfigs: map[string]string{}, paths: map[string]string{}, done: map[string]bool{}, stop: make(chan struct{}), pacing: p}
	for n, root := range roots {
		kc := t.TempDir() + "/node.kubeconfig"
		if err := env.cp.ClientCertKubeconfig(kc, "system:node:"+n, []string{"system:nodes"}); err != nil {
			t.Fatal(err)
		}
		a.kubeconfigs[n] = kc
		if path, ok := running[n]; ok {
			a.paths[n] = path
			continue
		}
		a.paths[n] = startNodeKubelet(t, root)
	}
	a.wg.Add(1)
	go a.loop()
	t.Cleanup(a.Stop)
	return a
}

func (a *nodeAgent) Stop() {
	select {
	case <-a.stop:
	default:
		close(a.stop)
	}
	a.wg.Wait()
}

func (a *nodeAgent) loop() {
	defer a.wg.Done()
	store := &migrate.Store{Client: env.kube}
	for {
		select {
		case <-a.stop:
			return
		case <-time.After(300 * time.Millisecond):
		}
		j, err := store.Load(context.Background())
		if err != nil {
			continue
		}
		rec, ok := currentStep(j)
		if !ok || rec.Started == nil {
			continue
		}
		undo := rec.State == migrate.StateUndoing
		phase, scope, nodes, ok := a.plan.NodePhase(rec.Name, undo)
		if !ok {
			continue
		}
		key := fmt.Sprintf("%s|%s|%s", rec.Name, rec.State, rec.Started.UTC().Format(time.RFC3339Nano))
		a.mu.Lock()
		seen := a.done[key]
		a.done[key] = true
		a.mu.Unlock()
		if seen {
			continue
		}
		a.mu.Lock()
		override := a.override
		a.mu.Unlock()
		if override != nil && override(rec.Name, phase) {
			continue
		}
		if a.pacing != nil {
			if len(rec.Order) > 0 {
				nodes = rec.Order
			}
			if a.pacing.Reverse {
				nodes = slices.Clone(nodes)
				slices.Reverse(nodes)
			}
		}
		for _, n := range nodes {
			if a.pacing != nil && a.pacing.Delay != nil {
				select {
				case <-a.stop:
					return
				case <-time.After(a.pacing.Delay(phase)):
				}
			}
			if a.pacing != nil && a.pacing.OnRun != nil {
				a.pacing.OnRun(fmt.Sprintf("node step %s %s on %s", rec.Name, phase, n))
			}
			out, err := a.runNode(n, phase, scope)
			a.mu.Lock()
			a.runs = append(a.runs, fmt.Sprintf("%s %s %s %s", time.Now().UTC().Format("15:04:05"), n, phase, scope))
			a.mu.Unlock()
			if err != nil {
				a.t.Errorf("node step %s on %s: %v\n%s", phase, n, err, out)
			}
		}
	}
}

// runNode runs the node step on one node's root, as that node: its
// credentials, and its systemctl, which restarts its kubelet.
func (a *nodeAgent) runNode(node, phase, scope string) (string, error) {
	args := []string{"migrate-from-intree", "node", "--root", a.roots[node], "--phase", phase,
		"--node-name", node, "--kubeconfig", a.kubeconfigs[node], "--wait", "1m", "-o", "json"}
	if scope != "" {
		args = append(args, "--scope", scope)
	}
	return ctlWith(context.Background(), []string{"PATH=" + a.paths[node]}, args...)
}

// setOverride replaces node steps (nil: none).
func (a *nodeAgent) setOverride(f func(step, phase string) bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.override = f
}

// Runs lists the node steps run, in order.
func (a *nodeAgent) Runs() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.runs...)
}

// ctl runs awsccmctl and returns its combined output.
func ctl(ctx context.Context, args ...string) (string, error) {
	return ctlWith(ctx, nil, args...)
}

// ctlWith is ctl with more environment (which wins over this process's).
func ctlWith(ctx context.Context, extraEnv []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, env.ctlBin, args...)
	cmd.Env = append(append(os.Environ(), awsEnv()...), extraEnv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// exitCode is the process's exit code, 0 for nil, -1 when it did not run.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// currentStep returns the step a run is working on (running or undoing)
// and whether there is one: what a node's operator watches for.
func currentStep(j *migrate.Journal) (migrate.StepRecord, bool) {
	i := slices.IndexFunc(j.Steps, func(s migrate.StepRecord) bool {
		return s.State == migrate.StateRunning || s.State == migrate.StateUndoing
	})
	if i < 0 {
		return migrate.StepRecord{}, false
	}
	return j.Steps[i], true
}

// startNodeKubelet runs a kubelet stand-in for the node at root as systemd
// runs the kubelet (fakekubelet.Systemctl: each start reads the node's
// kubeadm-flags.env afresh) on the healthz port of the node's kubelet
// configuration (nodeRoot gives each node its own), and returns the PATH
// under which the node step finds that node's systemctl.
func startNodeKubelet(t *testing.T, root string) string {
	t.Helper()
	systemctl, _ := fakekubelet.Systemctl(t, healthzPortOf(t, root), "ok", filepath.Join(root, "var", "lib", "kubelet", "kubeadm-flags.env"))
	if out, err := exec.CommandContext(context.Background(), systemctl, "start").CombinedOutput(); err != nil {
		t.Fatalf("start the kubelet of %s: %v %s", root, err, out)
	}
	return filepath.Dir(systemctl) + string(os.PathListSeparator) + os.Getenv("PATH")
}

var healthzPortLine = regexp.MustCompile(`(?m)^healthzPort: (\d+)$`)

// checkKubeletsSwitched: before finalize, each kubelet-external gate passed
// on the running kubelets (its evidence is in apply's output), and each
// node's kubelet now runs external under its Node's name, restarted by the
// node step, not merely with its files edited.
func (s *scenario) checkKubeletsSwitched(t *testing.T, applyOut string, a *nodeAgent) {
	t.Helper()
	finalizeAt := strings.Index(applyOut, "✓ step "+migrate.StepFinalize+" ")
	for _, g := range s.plan.Spec.NodeGroups {
		want := fmt.Sprintf("%d of %d nodes run a healthy kubelet started after its files were edited, with the flags of phase %s", len(g.Nodes), len(g.Nodes), migrate.PhaseKubeletExternal)
		at := strings.Index(applyOut, want)
		if at < 0 || (finalizeAt >= 0 && at > finalizeAt) {
			t.Errorf("group %s: apply's output lacks %q before finalize", g.Name, want)
		}
	}
	fs, err := procwatch.New("")
	if err != nil {
		t.Fatal(err)
	}
	for node, root := range a.roots {
		files, err := nodefiles.Read(root)
		if err != nil || files.Kubelet == nil {
			t.Fatalf("%s's files: %v", node, err)
		}
		ep, err := kubeletrun.EndpointOf(files.Kubelet)
		if err != nil {
			t.Fatal(err)
		}
		r, err := kubeletrun.Observe(context.Background(), fs, ep)
		if err != nil {
			t.Errorf("%s: %v", node, err)
			continue
		}
		registersAs := strings.ToLower(r.HostnameOverride)
		if registersAs == "" {
			b, _ := os.ReadFile(filepath.Join(root, "etc", "hostname"))
			registersAs = strings.ToLower(strings.TrimSpace(string(b)))
		}
		if r.CloudProvider != "external" || registersAs != node || !r.Healthy() {
			t.Errorf("%s's running kubelet: %+v registering as %q, want a healthy one running --cloud-provider=external as %s", node, *r, registersAs, node)
		}
		if node == workNode {
			flags, _ := os.ReadFile(filepath.Join(root, "var", "lib", "kubelet", "kubeadm-flags.env"))
			if want := "kubernetes.io/hostname=" + workHost; !strings.Contains(string(flags), want) {
				t.Errorf("%s's kubelet flags keep no %s: %s", node, want, flags)
			}
		}
		fmt.Fprintf(&s.transcript, "%s: running kubelet pid %d started %s: --cloud-provider=%s --hostname-override=%s, /healthz %s\n",
			node, r.PID, r.Started.UTC().Format(time.RFC3339), r.CloudProvider, r.HostnameOverride, r.Healthz)
	}
}
