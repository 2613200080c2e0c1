package migrate

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// fakeTerminal is a status line (apply.LiveLine) that records the line's
// life and the permanent lines written around it.
type fakeTerminal struct {
	mu      sync.Mutex
	printed bytes.Buffer
	calls   []string
}

func (f *fakeTerminal) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.printed.Write(p)
}
func (f *fakeTerminal) record(s string)     { f.mu.Lock(); f.calls = append(f.calls, s); f.mu.Unlock() }
func (f *fakeTerminal) Begin(title string)  { f.record("begin " + title) }
func (f *fakeTerminal) Update(state string) { f.record("update " + state) }
func (f *fakeTerminal) End(result string)   { f.record("end " + result) }

// lockedBuffer is a plain writer that two goroutines may write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// stepWithPods runs a kubelet step's wait over two nodes with
// --node-runner=pods, its gate passing once both nodes' Pods succeeded, and
// ends it as runStep does.
func stepWithPods(t *testing.T, out interface{ Write([]byte) (int, error) }) {
	t.Helper()
	k := newPlayedKubelets(func(string) corev1.PodPhase { return corev1.PodSucceeded })
	s := &Step{Name: "kubelet-external/workers", Runs: RunsNodes, Phase: PhaseKubeletExternal, Nodes: []string{"n1", "n2"}, Timeout: durationOf(time.Minute)}
	r := &Runner{Out: out, Poll: 5 * time.Millisecond, NodePods: &NodePods{Image: "example.com/awsccmctl:v1", MaxUnavailable: intstr.FromInt32(1)}}
	e := &env{client: k.cs, journal: &Journal{}, plan: &MigrationPlan{}, now: time.Now, stepStarted: time.Now()}
	gate := func(ctx context.Context, e *env, _ *Step) (gateResult, error) {
		pods, err := e.client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{})
		if err != nil {
			return gateResult{}, err
		}
		done := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodSucceeded {
				done++
			}
		}
		if done == 2 {
			return passed("2 of 2 nodes reported"), nil
		}
		return waiting(fmt.Sprintf("%d of 2 nodes reported", done)), nil
	}
	e.status = r.beginWait("step", s)
	if _, err := r.waitNodePods(context.Background(), e, s, false, PhaseKubeletExternal, "", nil, gate); err != nil {
		t.Fatal(err)
	}
	k.finished.Wait()
	r.endf("✓ step %s passed its gate after %s", s.Name, "1s")
}

// TestStepWaitOnStatusLine: on a terminal a step's wait is one status line:
// begun for the step, updated with the node Pods' progress (the nodes still
// running) and the gate's state, and ended with the step's result; the
// per-change lines a pipe gets are not printed. On a plain writer they are.
func TestStepWaitOnStatusLine(t *testing.T) {
	term := &fakeTerminal{}
	stepWithPods(t, term)
	calls := strings.Join(term.calls, "\n")
	if !strings.HasPrefix(calls, "begin   waiting for kubelet-external/workers\n") {
		t.Errorf("the line did not begin with the step:\n%s", calls)
	}
	for _, want := range []string{
		"update node step Pods: 0 of 2 nodes done, 1 to start (at most 1 at once); running on n1 (",
		" · 0 of 2 nodes reported",
		"update node step Pods: 2 of 2 nodes done, 0 to start (at most 1 at once)",
	} {
		if !strings.Contains(calls, want) {
			t.Errorf("no update with %q in\n%s", want, calls)
		}
	}
	if last := term.calls[len(term.calls)-1]; !strings.HasPrefix(last, "end ") || !strings.HasSuffix(last, " ✓ step kubelet-external/workers passed its gate after 1s") {
		t.Errorf("the line ended with %q", last)
	}
	printed := term.printed.String()
	if strings.Contains(printed, "waiting (") || strings.Contains(printed, "node step Pods:") {
		t.Errorf("a terminal got the per-change lines:\n%s", printed)
	}
	if !strings.Contains(printed, "running the node step as Pods") {
		t.Errorf("the step's permanent lines are missing:\n%s", printed)
	}

	// A pipe: the Pods' rollout and the gate write from two goroutines, as
	// to os.Stderr.
	plain := &lockedBuffer{}
	stepWithPods(t, plain)
	for _, want := range []string{"  waiting (0s): 0 of 2 nodes reported", "  node step Pods: 0 of 2 nodes done", " ✓ step kubelet-external/workers passed its gate after 1s\n"} {
		if !strings.Contains(plain.String(), want) {
			t.Errorf("a plain writer lacks %q:\n%s", want, plain.String())
		}
	}
}
