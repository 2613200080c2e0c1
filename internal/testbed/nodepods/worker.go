package nodepods

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
	"github.com/awsccmctl/awsccmctl/internal/testbed/staticpod"
)

// exitPoll is how often a worker checks whether its process has exited.
const exitPoll = 50 * time.Millisecond

// podWorker runs one Pod, as the kubelet's pod worker does: start, status,
// and on deletion stop and finalize.
type podWorker struct {
	r        *Runner
	uid      types.UID
	ns, name string
	wake     chan struct{} // cap 1: set or setGone was called

	// Guarded by r.mu.
	latest *corev1.Pod
	gone   bool
}

func newWorker(r *Runner, pod *corev1.Pod) *podWorker {
	return &podWorker{r: r, uid: pod.UID, ns: pod.Namespace, name: pod.Name, wake: make(chan struct{}, 1)}
}

// set hands the worker the Pod as last seen; r.mu is held.
func (w *podWorker) set(pod *corev1.Pod) {
	w.latest = pod
	w.poke()
}

// setGone tells the worker its Pod was removed; r.mu is held.
func (w *podWorker) setGone() {
	w.gone = true
	w.poke()
}

func (w *podWorker) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *podWorker) take() (*corev1.Pod, bool) {
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	return w.latest, w.gone
}

func (w *podWorker) logf(format string, args ...any) {
	w.r.opts.Logf("nodepods %s: Pod %s/%s: %s", w.r.opts.NodeName, w.ns, w.name, fmt.Sprintf(format, args...))
}

// loop runs the Pod until it is deleted or the Runner stops.
func (w *podWorker) loop(ctx context.Context) {
	defer w.r.wg.Done()
	<-w.wake // set has been called before the worker started
	pod, gone := w.take()
	if gone {
		return
	}
	var (
		p   *childproc.Process
		run *Run
	)
	switch {
	case pod.DeletionTimestamp != nil:
		w.finalize(ctx)
		return
	case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
		// Finished before this Runner saw it: restartPolicy Never (and
		// a finished Pod of any policy) runs no more.
	default:
		p, run = w.start(ctx, pod)
	}
	tick := time.NewTicker(exitPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if p != nil {
				w.end(ctx, p, run, pod, w.r.opts.MaxStopGrace, false)
			}
			return

		case <-w.wake:
			pod, gone = w.take()
			switch {
			case gone: // removed without waiting for us (grace period 0)
				if p != nil {
					w.end(ctx, p, run, pod, w.r.opts.MaxStopGrace, false)
				}
				return
			case pod.DeletionTimestamp != nil:
				if p != nil {
					w.end(ctx, p, run, pod, w.grace(pod), true)
				}
				w.finalize(ctx)
				return
			}

		case <-tick.C:
			if p != nil && p.Exited() {
				w.end(ctx, p, run, pod, 0, true)
				p = nil
			}
		}
	}
}

// grace is the deleted Pod's grace period, capped by MaxStopGrace.
func (w *podWorker) grace(pod *corev1.Pod) time.Duration {
	g := w.r.opts.MaxStopGrace
	if s := pod.DeletionGracePeriodSeconds; s != nil {
		g = min(g, time.Duration(*s)*time.Second)
	}
	return g
}

// start runs the Pod's first container as a host process and writes the
// Pod Running; a Pod that cannot start is written Failed with the reason.
func (w *podWorker) start(ctx context.Context, pod *corev1.Pod) (*childproc.Process, *Run) {
	r := w.r
	run := &Run{Namespace: w.ns, Name: w.name, UID: w.uid,
		LogPath: filepath.Join(r.opts.LogDir, w.ns+"_"+w.name+".log")}
	r.mu.Lock()
	r.runs = append(r.runs, run)
	r.mu.Unlock()
	hostIP := w.hostIP(ctx)

	fail := func(msg string) (*childproc.Process, *Run) {
		now := time.Now()
		r.mu.Lock()
		run.Done, run.ExitCode, run.Err, run.Started, run.Finished = true, startErrorCode, msg, now, now
		r.mu.Unlock()
		r.notify()
		w.logf("cannot start: %s", msg)
		w.writeStatus(ctx, func(st *corev1.PodStatus) { startFailed(st, pod, hostIP, msg, now) })
		return nil, run
	}
	if len(pod.Spec.Containers) == 0 {
		return fail(fmt.Sprintf("nodepods (test bed node %s): the Pod has no containers", r.opts.NodeName))
	}
	c := &pod.Spec.Containers[0]
	hp, ok := staticpod.PlanHostProcess(pod, 0, r.opts.Root, r.isBinary)
	if !ok {
		return fail(fmt.Sprintf("nodepods (test bed node %s): container %q runs %q: no host binary is known for it (Options.Binaries has %s)",
			r.opts.NodeName, c.Name, strings.Join(append(append([]string{}, c.Command...), c.Args...), " "), r.binaryNames()))
	}
	if err := staticpod.PrepareHostPaths(pod, r.opts.Root); err != nil {
		return fail(fmt.Sprintf("nodepods (test bed node %s): %v", r.opts.NodeName, err))
	}
	cmd := exec.CommandContext(context.WithoutCancel(ctx), r.opts.Binaries[hp.Component], hp.Args...)
	cmd.Env = append(slices.Clone(hp.Env), r.opts.Env...)
	cmd.Dir = r.opts.Root
	p, err := childproc.StartLogged(hp.Component, cmd, run.LogPath)
	if err != nil {
		return fail(fmt.Sprintf("nodepods (test bed node %s): %v", r.opts.NodeName, err))
	}
	started := time.Now()
	r.mu.Lock()
	run.Component, run.Args, run.Pid, run.Started = hp.Component, hp.Args, p.Pid(), started
	r.mu.Unlock()
	r.addRunning(1)
	r.notify()
	w.logf("started %s (pid %d), log %s", hp.Component, p.Pid(), run.LogPath)
	w.writeStatus(ctx, func(st *corev1.PodStatus) { running(st, pod, hostIP, p.Pid(), started) })
	return p, run
}

// end stops the process if it still runs (SIGTERM, SIGKILL after grace),
// records its end and, when writeStatus is set, writes the Pod
// terminated as the kubelet does.
func (w *podWorker) end(ctx context.Context, p *childproc.Process, run *Run, pod *corev1.Pod, grace time.Duration, writeStatus bool) {
	stopped := !p.Exited()
	if stopped {
		if err := p.Stop(grace); err != nil {
			w.r.record(fmt.Errorf("pod %s/%s: %w", w.ns, w.name, err))
		}
	}
	code := exitCode(p.Cmd.ProcessState)
	finished := time.Now()
	w.r.mu.Lock()
	run.Done, run.ExitCode, run.Stopped, run.Finished = true, code, stopped, finished
	started := run.Started
	w.r.mu.Unlock()
	w.r.addRunning(-1)
	w.r.notify()
	how := "exited"
	if stopped {
		how = "stopped"
	}
	w.logf("%s %s (pid %d) with exit code %d after %s", how, run.Component, run.Pid, code, finished.Sub(started).Round(time.Millisecond))
	if writeStatus {
		w.writeStatus(ctx, func(st *corev1.PodStatus) { terminated(st, pod, run.Pid, code, started, finished) })
	}
}
