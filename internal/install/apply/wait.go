package apply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
)

// PollInterval is how often the waits look again.
const PollInterval = time.Second

// WaitRollout waits until every DaemonSet and Deployment among objs has
// rolled out its current generation: the controller has seen it, and every
// desired Pod is updated and available. It prints a line whenever the
// counts change.
func WaitRollout(ctx context.Context, cs kubernetes.Interface, objs []*unstructured.Unstructured, timeout time.Duration, out io.Writer) error {
	for _, u := range objs {
		var check func(context.Context) (string, bool, error)
		ns, name := u.GetNamespace(), u.GetName()
		switch u.GroupVersionKind().GroupKind().String() {
		case "DaemonSet.apps":
			check = func(ctx context.Context) (string, bool, error) {
				ds, err := cs.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return "", false, err
				}
				return DaemonSetRolledOut(ds)
			}
		case "Deployment.apps":
			check = func(ctx context.Context) (string, bool, error) {
				d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return "", false, err
				}
				return DeploymentRolledOut(d)
			}
		default:
			continue
		}
		if err := Poll(ctx, PollInterval, timeout, Ref(u), check, out); err != nil {
			return err
		}
	}
	return nil
}

// DaemonSetRolledOut says how far a DaemonSet's rollout is, and whether
// its current generation is rolled out.
func DaemonSetRolledOut(ds *appsv1.DaemonSet) (string, bool, error) {
	s := ds.Status
	state := fmt.Sprintf("%d of %d Pods updated, %d available", s.UpdatedNumberScheduled, s.DesiredNumberScheduled, s.NumberAvailable)
	if s.ObservedGeneration < ds.Generation {
		return "waiting for the DaemonSet controller to see generation " + fmt.Sprint(ds.Generation), false, nil
	}
	if s.DesiredNumberScheduled == 0 {
		return "", false, fmt.Errorf("DaemonSet %s/%s schedules no Pod: no Node matches its node selector and tolerations (are the control-plane Nodes labelled node-role.kubernetes.io/control-plane? for control planes outside the cluster use --workload=deployment)", ds.Namespace, ds.Name)
	}
	return state, s.UpdatedNumberScheduled == s.DesiredNumberScheduled && s.NumberAvailable == s.DesiredNumberScheduled, nil
}

// DeploymentRolledOut says how far a Deployment's rollout is, and whether
// its current generation is rolled out.
func DeploymentRolledOut(d *appsv1.Deployment) (string, bool, error) {
	s := d.Status
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	state := fmt.Sprintf("%d of %d replicas updated, %d available", s.UpdatedReplicas, want, s.AvailableReplicas)
	if s.ObservedGeneration < d.Generation {
		return "waiting for the Deployment controller to see generation " + fmt.Sprint(d.Generation), false, nil
	}
	return state, s.UpdatedReplicas == want && s.AvailableReplicas == want && s.Replicas == want, nil
}

// Poll calls check every interval until it reports done, printing
// "<what>: <state>" to out (nil: nowhere) when the state changes. When
// timeout passes first the error names what and the last state observed,
// whatever error the last check returned: near the deadline client-go's
// rate limiter refuses a request it could not send in time, and "client
// rate limiter Wait returned an error" says nothing about what was not
// ready. A cancelled ctx (Ctrl-C) wraps ctx.Err(), so the caller can say
// interrupted. Any other error of check ends the wait at once.
//
// When out is a LiveLine (a terminal's status line) the wait shows as one
// line titled what that updates in place, and ends as "✓ <what>: <state>"
// or "✗ <what>: <error>" with the time it took, instead of a line per
// change.
func Poll(ctx context.Context, interval, timeout time.Duration, what string, check func(context.Context) (string, bool, error), out io.Writer) error {
	if live, ok := out.(LiveLine); ok {
		return pollLive(ctx, interval, timeout, what, check, live)
	}
	return poll(ctx, interval, timeout, what, check, out)
}

// LiveLine is a progress writer that can also show one status line that
// updates in place (internal/cli/termstatus.Line, on a terminal): a wait
// sets its state there rather than printing a line per change.
type LiveLine interface {
	io.Writer
	// Begin starts the status line of a wait, titled.
	Begin(title string)
	// Update sets what the wait waits for now.
	Update(state string)
	// End replaces the status line by the wait's result, a permanent
	// line.
	End(result string)
}

// pollLive is Poll on a status line.
func pollLive(ctx context.Context, interval, timeout time.Duration, what string, check func(context.Context) (string, bool, error), live LiveLine) error {
	start := time.Now()
	live.Begin(what)
	last := ""
	err := poll(ctx, interval, timeout, what, func(ctx context.Context) (string, bool, error) {
		state, done, err := check(ctx)
		if err == nil {
			last = state
			live.Update(state)
		}
		return state, done, err
	}, nil)
	took := time.Since(start).Round(100 * time.Millisecond)
	if err != nil {
		live.End(fmt.Sprintf("✗ %s (%s): %v", what, took, strings.TrimPrefix(err.Error(), what+": ")))
		return err
	}
	live.End(fmt.Sprintf("✓ %s (%s): %s", what, took, last))
	return nil
}

// poll is Poll printing a line per change of state to out (nil: nowhere).
func poll(ctx context.Context, interval, timeout time.Duration, what string, check func(context.Context) (string, bool, error), out io.Writer) error {
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	last, lastErr := "", error(nil)
	timedOut := func() error {
		if last == "" && lastErr != nil {
			return fmt.Errorf("%s: not ready after %s: nothing observed yet (last error: %w)", what, timeout, lastErr)
		}
		if last == "" {
			return fmt.Errorf("%s: not ready after %s: nothing observed yet", what, timeout)
		}
		return fmt.Errorf("%s: not ready after %s: %s", what, timeout, last)
	}
	for {
		state, done, err := check(tctx)
		switch {
		case ctx.Err() != nil:
			// Cancelled (Ctrl-C), not timed out: the caller says interrupted.
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case err != nil && (tctx.Err() != nil || deadlineError(err)):
			lastErr = err
			return timedOut()
		case err != nil:
			return fmt.Errorf("%s: %w", what, err)
		}
		if state != last && out != nil {
			fmt.Fprintf(out, "%s: %s\n", what, state)
		}
		last = state
		if done {
			return nil
		}
		select {
		case <-tctx.Done():
			if ctx.Err() != nil {
				return fmt.Errorf("%s: %w", what, ctx.Err())
			}
			return timedOut()
		case <-ticker.C:
		}
	}
}

// deadlineError tells whether err comes from the wait's deadline. The
// rate limiter's refusal (golang.org/x/time/rate's "would exceed context
// deadline", wrapped by client-go) comes before the deadline and wraps no
// context error, so only its text tells it apart.
func deadlineError(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "would exceed context deadline")
}
