package staticpod

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
)

// exitPoll is how often a worker checks whether its process has exited.
const exitPoll = 50 * time.Millisecond

// worker runs one manifest file, as the kubelet's pod worker does: it
// applies the latest manifest given to it, starts, restarts and stops the
// process, and keeps the mirror Pod in step.
type worker struct {
	r    *Runner
	file string
	seq  int
	prev *worker       // the previous worker of the same file: it must finish first
	wake chan struct{} // cap 1: set was called
	done chan struct{} // closed when run returns

	// Guarded by r.mu.
	latest     *manifest // last given by set (never cleared)
	pending    *manifest // given by set, not yet taken by run
	hasPending bool
	removed    bool // set(nil) was called
	cur        *manifest
	proc       *childproc.Process
	startedAt  time.Time
	firstStart time.Time
	starts     int // across versions
	verStarts  int // of cur
	exits      []Exit
	mirrorUID  types.UID
}

func newWorker(r *Runner, file string, seq int) *worker {
	return &worker{r: r, file: file, seq: seq, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// set hands the worker a new manifest, or nil when it is gone. Called with
// r.mu held.
func (w *worker) set(m *manifest) {
	if m != nil {
		w.latest = m
	}
	w.pending, w.hasPending = m, true
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *worker) take() (m *manifest, gone bool) {
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	m, has := w.pending, w.hasPending
	w.pending, w.hasPending = nil, false
	return m, has && m == nil
}

func (w *worker) run(ctx context.Context) {
	defer w.r.wg.Done()
	defer close(w.done)
	if w.prev != nil {
		select {
		case <-w.prev.done:
		case <-ctx.Done():
			return
		}
	}
	var (
		restart     <-chan time.Time
		mirrorRetry <-chan time.Time
		backoff     time.Duration
	)
	tick := time.NewTicker(exitPoll)
	defer tick.Stop()
	retryLater := func(ran time.Duration) {
		backoff = w.nextBackoff(backoff, ran)
		restart = time.After(backoff)
	}
	for {
		select {
		case <-ctx.Done():
			w.stop()
			return

		case <-w.wake:
			m, gone := w.take()
			if gone {
				w.stop()
				w.deleteMirror(ctx)
				w.r.mu.Lock()
				w.removed = true
				w.r.mu.Unlock()
				w.r.notify()
				return
			}
			if m == nil || (w.cur != nil && m.hash == w.cur.hash) {
				continue // same Pod: nothing to do, as for the kubelet
			}
			w.r.mu.Lock()
			w.cur, w.verStarts, w.mirrorUID = m, 0, ""
			w.r.mu.Unlock()
			// As the kubelet: the mirror Pod first, then the containers.
			mirrorRetry = nil
			if err := w.syncMirror(ctx); err != nil {
				w.r.record(&ManifestError{Path: w.r.nodePath(w.file), Err: fmt.Errorf("mirror Pod: %w", err)})
				mirrorRetry = time.After(time.Second)
			}
			w.stop()
			backoff, restart = 0, nil
			if !w.start(ctx) {
				retryLater(0)
			}

		case <-tick.C:
			w.r.mu.Lock()
			p := w.proc
			w.r.mu.Unlock()
			if p != nil && p.Exited() {
				ran := w.reap(false)
				w.updateStatus(ctx)
				retryLater(ran)
			}

		case <-restart:
			restart = nil
			if !w.start(ctx) {
				retryLater(0)
			}

		case <-mirrorRetry:
			mirrorRetry = nil
			if err := w.syncMirror(ctx); err != nil {
				w.r.opts.Logf("staticpod: %s: mirror Pod: %v", w.r.nodePath(w.file), err)
				mirrorRetry = time.After(time.Second)
			} else {
				w.updateStatus(ctx)
			}
		}
	}
}

// nextBackoff doubles the restart delay up to MaxBackoff, and starts over
// after a process that ran for twice MaxBackoff.
func (w *worker) nextBackoff(prev, ran time.Duration) time.Duration {
	maxB := w.r.opts.MaxBackoff
	switch {
	case prev == 0 || ran > 2*maxB:
		return min(initialBackoff, maxB)
	default:
		return min(2*prev, maxB)
	}
}

// start starts the current manifest's process; false when it could not
// (the error is recorded), to be retried after a back-off.
func (w *worker) start(ctx context.Context) bool {
	m := w.cur
	if m.binary == "" {
		w.updateStatus(ctx) // not run here: shown as running on the node
		return true
	}
	for _, v := range m.volumes {
		if err := v.prepare(); err != nil {
			w.r.record(&ManifestError{Path: w.r.nodePath(m.file), Err: err})
			return false
		}
	}
	cmd := commandAs(w.r.opts.Hostname, m.binary, m.args)
	cmd.Env = append([]string{}, m.env...)
	cmd.Dir = w.r.opts.Root
	logPath := w.logPath(m)
	p, err := childproc.StartLogged(m.component, cmd, logPath)
	if err != nil {
		w.r.record(&ManifestError{Path: w.r.nodePath(m.file), Err: err})
		return false
	}
	now := time.Now()
	w.r.mu.Lock()
	w.proc, w.startedAt = p, now
	if w.firstStart.IsZero() {
		w.firstStart = now
	}
	w.starts++
	w.verStarts++
	n := w.starts
	w.r.mu.Unlock()
	w.r.notify()
	w.r.opts.Logf("staticpod: %s: started %s (pid %d, start %d), log %s", w.r.nodePath(m.file), m.component, p.Pid(), n, logPath)
	w.updateStatus(ctx)
	return true
}

func (w *worker) logPath(m *manifest) string {
	return filepath.Join(w.r.opts.LogDir, m.pod.Namespace+"_"+m.pod.Name+".log")
}

// stop stops the running process, if any, and records its end.
func (w *worker) stop() {
	w.r.mu.Lock()
	p := w.proc
	w.r.mu.Unlock()
	if p == nil {
		return
	}
	byUs := !p.Exited()
	if err := p.Stop(w.r.opts.StopGrace); err != nil {
		w.r.record(&ManifestError{Path: w.r.nodePath(w.file), Err: err})
	}
	w.reap(byUs)
}

// reap records the end of the exited process and returns how long it ran.
func (w *worker) reap(stopped bool) time.Duration {
	w.r.mu.Lock()
	p := w.proc
	e := Exit{Pid: p.Pid(), Code: -1, Status: p.ExitStatus(), Stopped: stopped, At: time.Now()}
	e.Ran = e.At.Sub(w.startedAt)
	if ps := p.Cmd.ProcessState; ps != nil {
		e.Code = ps.ExitCode()
	}
	w.exits = append(w.exits, e)
	w.proc = nil
	w.r.mu.Unlock()
	w.r.notify()
	how := "exited"
	if stopped {
		how = "stopped"
	}
	w.r.opts.Logf("staticpod: %s: %s %s after %s: %s", w.r.nodePath(w.file), how, p.Name, e.Ran.Round(time.Millisecond), e.Status)
	return e.Ran
}

// statusLocked describes the worker; r.mu is held.
func (w *worker) statusLocked() ComponentStatus {
	m := w.cur
	st := ComponentStatus{
		Component: m.component,
		Manifest:  w.r.nodePath(w.file),
		Namespace: m.pod.Namespace,
		Pod:       m.pod.Name,
		Hash:      m.hash,
		Args:      slices.Clone(m.args),
		Starts:    w.starts,
		Exits:     slices.Clone(w.exits),
		LogPath:   w.logPath(m),
		Removed:   w.removed,
	}
	if w.proc != nil {
		st.Running, st.Pid = true, w.proc.Pid()
	}
	return st
}
