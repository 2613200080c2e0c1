package migration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/migrate"
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

func startNodeAgent(t *testing.T, plan *migrate.MigrationPlan, roots map[string]string) *nodeAgent {
	t.Helper()
	return startPacedNodeAgent(t, plan, roots, nil)
}

// startPacedNodeAgent is startNodeAgent at a person's pace (nil: machine
// speed, the plan's node order).
func startPacedNodeAgent(t *testing.T, plan *migrate.MigrationPlan, roots map[string]string, p *pacing) *nodeAgent {
	t.Helper()
	a := &nodeAgent{t: t, plan: plan, roots: roots, kubeconfigs: map[string]string{}, done: map[string]bool{}, stop: make(chan struct{}), pacing: p}
	for n := range roots {
		kc := t.TempDir() + "/node.kubeconfig"
		if err := env.cp.ClientCertKubeconfig(kc, "system:node:"+n, []string{"system:nodes"}); err != nil {
			t.Fatal(err)
		}
		a.kubeconfigs[n] = kc
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

// runNode runs the node step on one node's root.
func (a *nodeAgent) runNode(node, phase, scope string) (string, error) {
	// The test bed's nodes run no kubelet to restart (and this host's
	// systemctl is not theirs).
	args := []string{"migrate-from-intree", "node", "--root", a.roots[node], "--phase", phase,
		"--node-name", node, "--kubeconfig", a.kubeconfigs[node], "--restart-kubelet=false", "-o", "json"}
	if scope != "" {
		args = append(args, "--scope", scope)
	}
	return ctl(context.Background(), args...)
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
	cmd := exec.CommandContext(ctx, env.ctlBin, args...)
	cmd.Env = append(os.Environ(), awsEnv()...)
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
