package migrate

import (
	"sync"

	"github.com/awsccmctl/awsccmctl/internal/install/apply"
)

// waitStatus is a step's wait on a terminal's status line: what the gate
// waits for and, with --node-runner=pods, how far the node Pods are, which
// two goroutines report (the gate and the Pods' rollout).
type waitStatus struct {
	live apply.LiveLine

	mu         sync.Mutex
	gate, pods string
}

// live is Out as a status line, when it is one (a terminal's).
func (r *Runner) live() apply.LiveLine {
	l, _ := r.Out.(apply.LiveLine)
	return l
}

// beginWait starts the status line of step s's wait, or returns nil when
// Out prints lines.
func (r *Runner) beginWait(verb string, s *Step) *waitStatus {
	live := r.live()
	if live == nil {
		return nil
	}
	title := "  waiting for " + s.Name
	if verb == "undo" {
		title = "  waiting for the undo of " + s.Name
	}
	live.Begin(title)
	return &waitStatus{live: live}
}

// endf ends the step's line with its result: on a status line it replaces
// the line, otherwise it is one more line.
func (r *Runner) endf(format string, a ...any) {
	if live := r.live(); live != nil {
		live.End(r.stamp(format, a...))
		return
	}
	r.printf(format, a...)
}

func (w *waitStatus) setGate(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gate = s
	w.show()
}

func (w *waitStatus) setPods(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pods = s
	w.show()
}

// show puts the Pods' progress first: it names the nodes still to run,
// which the gate's reports follow.
func (w *waitStatus) show() {
	switch {
	case w.pods == "":
		w.live.Update(w.gate)
	case w.gate == "":
		w.live.Update("node step Pods: " + w.pods)
	default:
		w.live.Update("node step Pods: " + w.pods + " · " + w.gate)
	}
}
