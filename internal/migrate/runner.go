package migrate

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/install/apply"
)

// Applier writes and removes objects (internal/install/apply.Client).
type Applier interface {
	Apply(ctx context.Context, objs []*unstructured.Unstructured, o apply.Options) ([]apply.Result, error)
	Uninstall(ctx context.Context, objs []*unstructured.Unstructured, o apply.Options) ([]apply.Result, error)
}

// Runner executes a plan against one cluster.
type Runner struct {
	Client  kubernetes.Interface
	Applier Applier
	Plan    *MigrationPlan
	Store   *Store
	// Out receives the progress lines: each step, what it waits for, the
	// elapsed time, and the evidence that passed its gate. When Out is a
	// terminal's status line (apply.LiveLine), a step's wait is one line
	// that updates in place instead of a line per change of its gate.
	Out io.Writer
	// Approve is asked before each step that changes something; nil
	// approves everything (--approve).
	Approve func(s *Step, undo bool) (bool, error)
	// Holder identifies this run in the journal.
	Holder Holder
	// Takeover replaces a holder whose run is gone (resume --takeover).
	Takeover bool
	// Poll is the gates' polling interval (default 1 s); Now the clock.
	Poll time.Duration
	Now  func() time.Time
	// NodeCommand renders the command that runs a node phase (with the
	// restore scope, if any), for the instructions apply prints while it
	// waits for a node step.
	NodeCommand func(phase, scope string) string
	// NodePods, when set, runs the node steps itself, as one Pod per node
	// (apply --node-runner=pods), instead of waiting for the operator.
	NodePods *NodePods
}

// GateError says a step's gate did not pass in time: the run stopped there,
// and the journal says so.
type GateError struct {
	Step     string
	Timeout  time.Duration
	Evidence []string
}

func (e *GateError) Error() string {
	return fmt.Sprintf("step %s: its gate did not pass within %s; last seen: %s", e.Step, e.Timeout, strings.Join(e.Evidence, "; "))
}

// NotApprovedError reports that the operator declined a step.
type NotApprovedError struct{ Step string }

func (e *NotApprovedError) Error() string {
	return "step " + e.Step + " not approved: stopped before it"
}

// env is what a step sees.
type env struct {
	client      kubernetes.Interface
	applier     Applier
	plan        *MigrationPlan
	journal     *Journal
	out         io.Writer
	now         func() time.Time
	stepStarted time.Time
	// cutOver is what the cut-over gate keeps between looks.
	cutOver cutOverMemory
	// stepUndo: the step runs its undo.
	stepUndo bool
	// orderReason says why a node step's order is what it is.
	orderReason string
	// ccmPods are the Pods that may be each CCM holder seen
	// (releaseGoneCCM).
	ccmPods ccmHolderPods
	// migrationReleased is the release of the migration lease on a node's
	// report that its holder exited, if there was one.
	migrationReleased *release
	// guards is the run's watch of Nodes and Services (checkGuards).
	guards *guardWatch
	// base is the guards' baseline once read or taken (env.baseline).
	base *Baseline
	// kubeletReports is the kubelet gate's last read (kubeletsGate).
	kubeletReports kubeletReportsRead
	// status is the step's wait on a terminal's status line (nil: the wait
	// prints lines).
	status *waitStatus
	// ns is the CCM's namespace (the plan's install values, defaulted).
	ns     string
	update func(context.Context, func(*Journal) error) (*Journal, error)
}

// PlanDigest identifies a plan's content.
func PlanDigest(p *MigrationPlan) string {
	data, _ := EncodePlan(p)
	return fmt.Sprintf("sha256:%x", sha256.Sum256(data))
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Runner) printf(format string, a ...any) {
	if r.Out != nil {
		fmt.Fprintf(r.Out, "%s\n", r.stamp(format, a...))
	}
}

// stamp is a progress line: the time, then the message.
func (r *Runner) stamp(format string, a ...any) string {
	return r.now().UTC().Format("15:04:05.000") + " " + fmt.Sprintf(format, a...)
}

// begin opens (or creates) the journal, checks it belongs to this plan and
// takes the hold; the returned stop ends the heartbeat and releases it.
func (r *Runner) begin(ctx context.Context, create bool) (context.Context, func(), error) {
	j, err := r.Store.Load(ctx)
	switch {
	case errors.Is(err, ErrNoJournal) && create:
		j = &Journal{Plan: r.Plan.Metadata.Name, PlanDigest: PlanDigest(r.Plan), Mode: r.Plan.Spec.Mode}
		for _, s := range r.Plan.Spec.Steps {
			j.Steps = append(j.Steps, StepRecord{Name: s.Name, State: StatePending})
		}
		if err := r.Store.Create(ctx, j); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, nil, fmt.Errorf("create the journal: %w", err)
		}
	case err != nil:
		return nil, nil, err
	case j.Plan != r.Plan.Metadata.Name || j.PlanDigest != PlanDigest(r.Plan):
		return nil, nil, fmt.Errorf("the journal belongs to plan %q (%s), not to this plan %q (%s): finish or roll back that migration with its own plan file",
			j.Plan, j.PlanDigest, r.Plan.Metadata.Name, PlanDigest(r.Plan))
	}
	if _, err := r.Store.Acquire(ctx, r.Holder, r.Takeover); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := r.Store.Heartbeat(ctx, r.Holder.ID); err != nil && ctx.Err() == nil {
					var held *HeldError
					if errors.As(err, &held) {
						cancel(err)
						return
					}
				}
			}
		}
	}()
	stop := func() {
		cancel(nil)
		<-done
		// Release with a fresh context: the run's may be cancelled.
		rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer rcancel()
		_ = r.Store.Release(rctx, r.Holder.ID)
	}
	return ctx, stop, nil
}

func (r *Runner) env(j *Journal) *env {
	v, _ := r.Plan.Values() // validated with the plan
	v.Default()
	e := &env{client: r.Client, applier: r.Applier, plan: r.Plan, journal: j, out: r.Out, now: r.now, ns: v.Namespace}
	e.update = func(ctx context.Context, change func(*Journal) error) (*Journal, error) {
		nj, err := r.Store.Update(ctx, func(j *Journal) error {
			if j.Holder == nil || j.Holder.ID != r.Holder.ID {
				return errLostHold(j.Holder)
			}
			return change(j)
		})
		if err == nil {
			e.journal = nj
		}
		return nj, err
	}
	return e
}

// Apply runs every step not done yet, in order, up to and including until
// ("" runs to the end). A step left running by a crashed run is run again:
// every action is idempotent.
func (r *Runner) Apply(ctx context.Context, until string) error {
	if err := refuseKopsRun(r.Plan); err != nil {
		return err
	}
	if until != "" {
		if _, _, ok := r.Plan.Step(until); !ok {
			return fmt.Errorf("--until %q: no such step; the plan's steps are %s", until, strings.Join(r.Plan.StepNames(), ", "))
		}
	}
	ctx, stop, err := r.begin(ctx, true)
	if err != nil {
		return err
	}
	defer stop()
	j, err := r.Store.Load(ctx)
	if err != nil {
		return err
	}
	e := r.env(j)
	total := len(r.Plan.Spec.Steps)
	for i := range r.Plan.Spec.Steps {
		s := &r.Plan.Spec.Steps[i]
		rec := e.journal.Record(s.Name)
		if rec != nil && rec.State == StateDone {
			r.printf("step %d/%d %s: done earlier (%s)", i+1, total, s.Name, rec.Message)
		} else if err := r.runStep(ctx, e, i, s, false); err != nil {
			return err
		}
		if s.Name == until {
			r.printf("stopped after %s (--until)", s.Name)
			return nil
		}
	}
	r.printf("migration complete: every step passed its gate")
	return nil
}

// Rollback undoes the steps done after to ("" undoes every step), newest
// first, each waiting for its undo's gate. It refuses once the cluster runs
// a version without the in-tree provider.
func (r *Runner) Rollback(ctx context.Context, to string) error {
	if err := refuseKopsRun(r.Plan); err != nil {
		return err
	}
	stopAt := -1
	if to != "" {
		i, _, ok := r.Plan.Step(to)
		if !ok {
			return fmt.Errorf("--to %q: no such step; the plan's steps are %s", to, strings.Join(r.Plan.StepNames(), ", "))
		}
		stopAt = i
	}
	v, err := r.Client.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("read the apiserver version: %w", err)
	}
	if minor, err := serverMinor(v); err != nil || minor > MaxInTreeMinor {
		return fmt.Errorf("the apiserver is %s: Kubernetes 1.%d and later have no in-tree AWS provider to roll back to", v.GitVersion, MaxInTreeMinor+1)
	}
	ctx, stop, err := r.begin(ctx, false)
	if err != nil {
		return err
	}
	defer stop()
	j, err := r.Store.Load(ctx)
	if err != nil {
		return err
	}
	e := r.env(j)
	for i := len(r.Plan.Spec.Steps) - 1; i > stopAt; i-- {
		s := &r.Plan.Spec.Steps[i]
		rec := e.journal.Record(s.Name)
		if rec == nil || rec.State == StatePending || rec.State == StateUndone {
			continue
		}
		if err := r.runStep(ctx, e, i, s, true); err != nil {
			return err
		}
	}
	r.printf("rollback complete")
	return nil
}

// runStep runs a step's action (or undo) and waits at its gate.
func (r *Runner) runStep(ctx context.Context, e *env, i int, s *Step, undo bool) error {
	impl := implOf(s)
	if impl.gate == nil {
		return fmt.Errorf("step %s: unknown kind", s.Name)
	}
	verb, state, final := "step", StateRunning, StateDone
	action, gate, phase, scope := impl.action, impl.gate, s.Phase, ""
	if undo {
		verb, state, final = "undo", StateUndoing, StateUndone
		action, gate, phase, scope = impl.undo, impl.undoGate, impl.undoPhase, impl.undoScope
	}
	total := len(r.Plan.Spec.Steps)
	mutating := s.Mutating || undo
	if mutating && r.Approve != nil {
		ok, err := r.Approve(s, undo)
		if err != nil {
			return err
		}
		if !ok {
			return &NotApprovedError{Step: s.Name}
		}
	}
	e.stepStarted = r.now()
	e.cutOver, e.migrationReleased, e.ccmPods, e.stepUndo = cutOverMemory{}, nil, nil, undo
	var order []string
	if phase != "" && action == nil {
		order = e.nodeOrder(ctx, s, phase, scope)
	}
	if _, err := e.update(ctx, func(j *Journal) error {
		rec := j.Record(s.Name)
		if rec == nil {
			return fmt.Errorf("the journal has no step %s", s.Name)
		}
		started := metav1.NewTime(e.stepStarted)
		rec.State, rec.Started, rec.Finished, rec.Message, rec.Evidence, rec.Order = state, &started, nil, "", nil, order
		return nil
	}); err != nil {
		return err
	}
	r.printf("%s %d/%d %s: %s", verb, i+1, total, s.Name, describe(s, undo))
	if restartsCCM(s, undo) {
		// Before the Pods change: which Pods the leading CCM may be.
		if err := e.releaseGoneCCM(ctx); err != nil {
			r.printf("  %v (the Lease will expire instead)", err)
		}
	}
	if action != nil {
		if err := action(ctx, e, s); err != nil {
			return r.fail(ctx, e, s, undo, fmt.Errorf("%s %s: %w", verb, s.Name, err))
		}
	} else if phase != "" && r.NodePods == nil {
		cmd := fmt.Sprintf("awsccmctl migrate-from-intree node --phase %s", phase)
		if scope != "" {
			cmd += " --scope " + scope
		}
		if r.NodeCommand != nil {
			cmd = r.NodeCommand(phase, scope)
		}
		if len(order) > 1 {
			r.printf("  waiting for the node step: run `%s` on one node at a time, each after the previous one finished, in this order: %s", cmd, strings.Join(order, ", "))
			r.printf("  (%s)", e.orderReason)
		} else {
			r.printf("  waiting for the node step on %s: run there `%s`", strings.Join(s.Nodes, ", "), cmd)
		}
	}
	e.status = r.beginWait(verb, s)
	var res gateResult
	var err error
	if action == nil && phase != "" && r.NodePods != nil {
		res, err = r.waitNodePods(ctx, e, s, undo, phase, scope, order, gate)
	} else {
		res, err = r.waitGate(ctx, e, s, gate)
	}
	if err != nil {
		return r.fail(ctx, e, s, undo, err)
	}
	elapsed := r.now().Sub(e.stepStarted).Round(100 * time.Millisecond)

	if _, err := e.update(ctx, func(j *Journal) error {
		rec := j.Record(s.Name)
		fin := metav1.NewTime(r.now())
		rec.State, rec.Finished, rec.Evidence = final, &fin, res.evidence
		rec.Message = fmt.Sprintf("gate passed after %s", elapsed)
		return nil
	}); err != nil {
		return err
	}
	r.endf("✓ %s %s passed its gate after %s", verb, s.Name, elapsed)
	for _, ev := range res.evidence {
		r.printf("    %s", ev)
	}
	return nil
}

// waitNodePods runs a node step's Pods while its gate waits: the gate still
// decides, on the nodes' reports, as for an operator's run; a Pod that
// fails stops the step at once. The Pods are deleted once the gate passes
// and kept when the step fails, for their logs.
func (r *Runner) waitNodePods(ctx context.Context, e *env, s *Step, undo bool, phase, scope string, order []string, gate func(context.Context, *env, *Step) (gateResult, error)) (gateResult, error) {
	nodes := order
	if len(nodes) == 0 {
		nodes = s.Nodes
	}
	ro := &nodePodRollout{
		pods: r.NodePods, e: e, step: s.Name, undo: undo, phase: phase, scope: scope, nodes: nodes,
		concurrency: r.NodePods.concurrency(phase, scope, len(nodes)), poll: r.poll(), printf: r.printf,
	}
	how := fmt.Sprintf("at most %d at once", ro.concurrency)
	if ro.concurrency == 1 && len(nodes) > 1 {
		how = "one at a time, in this order: " + strings.Join(nodes, ", ")
		if e.orderReason != "" {
			how += " (" + e.orderReason + ")"
		}
	}
	r.printf("  running the node step as Pods in %s (image %s), %s", r.NodePods.namespace(), r.NodePods.Image, how)
	stepCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	rolled := make(chan struct{})
	go func() {
		defer close(rolled)
		if err := ro.run(stepCtx); err != nil {
			cancel(err)
		}
	}()
	res, err := r.waitGate(stepCtx, e, s, gate)
	// A failed Pod cancels the wait with its failure; the gate may have
	// seen only the cancelled context.
	if cause := context.Cause(stepCtx); err != nil && cause != nil && !errors.Is(cause, context.Canceled) {
		err = cause
	}
	cancel(nil)
	<-rolled
	if err == nil {
		ro.finalReport(ctx)
		ro.cleanup(ctx)
	}
	return res, err
}

func describe(s *Step, undo bool) string {
	if undo {
		return s.Undo
	}
	return s.Action
}

func (r *Runner) fail(ctx context.Context, e *env, s *Step, undo bool, err error) error {
	state := StateFailed
	if undo {
		state = StateUndoing
	}
	// Record with a fresh context: ctx may be the reason we fail.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, _ = e.update(wctx, func(j *Journal) error {
		if rec := j.Record(s.Name); rec != nil {
			rec.State, rec.Message = state, err.Error()
			var ge *GateError
			if errors.As(err, &ge) {
				rec.Evidence = ge.Evidence
			}
		}
		return nil
	})
	r.endf("✗ %s: %v", s.Name, err)
	return err
}

// waitGate polls the gate (and the guards, once verify-cluster took the
// baseline) until it passes, the step's timeout, or a guard breaks.
func (r *Runner) waitGate(ctx context.Context, e *env, s *Step, gate func(context.Context, *env, *Step) (gateResult, error)) (gateResult, error) {
	poll := r.poll()
	lastPrint, lastSeen := r.now(), ""
	var last gateResult
	var lastGuard time.Time
	for {
		// The guards compare every Node and Service with the baseline:
		// at most every guardEvery, not at every poll of the gate.
		if r.now().Sub(lastGuard) >= guardEvery {
			lastGuard = r.now()
			if err := e.checkGuards(ctx, r.now()); err != nil {
				return last, err
			}
		}
		if s.Runs == RunsNodes && s.Phase != PhaseKubeletExternal {
			// A node saw a Lease holder exit: release its Leases now
			// rather than a lease duration later. Only the control-plane
			// phases restart a kube-controller-manager; a kubelet step
			// over thousands of nodes reads no reports for it.
			if _, err := e.releaseDeparted(ctx, s.Nodes); err != nil {
				r.printf("  %v (the Lease will expire instead)", err)
			}
		}
		if restartsCCM(s, e.stepUndo) {
			if err := e.releaseGoneCCM(ctx); err != nil {
				r.printf("  %v (the Lease will expire instead)", err)
			}
		}
		res, err := gate(ctx, e, s)
		if err != nil {
			return res, err
		}
		if res.ok {
			// A step passes only with the guards intact at that moment.
			if err := e.checkGuards(ctx, r.now()); err != nil {
				return res, err
			}
			return res, nil
		}
		last = res
		if err := decideTimeout(s, e.stepStarted, r.now(), res); err != nil {
			return res, err
		}
		// Progress: what the gate waits for, on the status line at every
		// poll, or as a line when it changes and every 30 s.
		if seen := strings.Join(res.evidence, "; "); e.status != nil {
			e.status.setGate(seen)
		} else if seen != lastSeen || r.now().Sub(lastPrint) >= 30*time.Second {
			lastPrint, lastSeen = r.now(), seen
			r.printf("  waiting (%s): %s", r.now().Sub(e.stepStarted).Round(time.Second), seen)
		}
		select {
		case <-ctx.Done():
			if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
				return res, cause
			}
			return res, ctx.Err()
		case <-time.After(poll):
		}
	}
}

func (r *Runner) poll() time.Duration {
	if r.Poll <= 0 {
		return time.Second
	}
	return r.Poll
}

// decideTimeout: a gate still waiting after the step's timeout stops the
// run, with what it last saw.
func decideTimeout(s *Step, started, now time.Time, last gateResult) error {
	if !now.After(started.Add(s.Timeout.Duration)) {
		return nil
	}
	return &GateError{Step: s.Name, Timeout: s.Timeout.Duration, Evidence: last.evidence}
}

// Status is where a migration stands, for `status`.
type Status struct {
	Plan     string          `json:"plan"`
	Mode     Mode            `json:"mode"`
	Done     bool            `json:"done"`
	Current  string          `json:"current,omitempty"`
	Holder   *Holder         `json:"holder,omitempty"`
	Steps    []StepRecord    `json:"steps"`
	Handover *HandoverRecord `json:"handover,omitempty"`
}

// StatusOf summarises a journal.
func StatusOf(j *Journal) Status {
	st := Status{Plan: j.Plan, Mode: j.Mode, Done: j.Done(), Holder: j.Holder, Steps: j.Steps, Handover: j.Handover}
	for _, s := range j.Steps {
		if s.State != StateDone && s.State != StatePending {
			st.Current = s.Name
			break
		}
		if s.State == StatePending && st.Current == "" {
			st.Current = s.Name
			break
		}
	}
	if st.Done {
		st.Current = ""
	}
	return st
}
