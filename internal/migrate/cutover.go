package migrate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
)

// The cut-over gate, as an observation of the cluster and a decision on it.
//
// Trap C is a kube-controller-manager that runs external but still with
// leader migration: it contends the migration lease and, when it wins,
// runs nothing. Its flags show it in the mirror Pod, which is the first
// check. The second is the Lease itself: a kube-controller-manager
// renewing the migration lease at a time when none may. Until every node
// has reported that its kube-controller-manager came back external, the
// in-tree one that holds the lease renews it legitimately, for as long as
// the operator takes to reach its node (minutes, with a person at a
// terminal). So the Lease check starts at that moment, not at the step's
// start: from then on no in-tree process is left, and any renewal by a
// kube-controller-manager identity is trap C.

// kcmObserved is one planned node's kube-controller-manager as its mirror
// Pod shows it.
type kcmObserved struct {
	Node string
	// Mode is kcmMode of its flags; "" when the node has no mirror Pod.
	Mode string
	// LeaderMigrationConfig: it has --leader-migration-config.
	LeaderMigrationConfig bool
}

// cutOverObservation is one look at the cluster during the cut-over. Its
// parts are read in this order, so that a renewal made before a node's
// report was written is visible in Leases: reports, mirror Pods, Leases,
// the apiserver's flags, the CCM's /healthz.
type cutOverObservation struct {
	Now time.Time
	// Reports are the final reports of the phase written since the step
	// started, by node.
	Reports map[string]NodeReport
	KCMs    []kcmObserved
	Leases  leases
	// APIServerExternal: no kube-apiserver keeps the in-tree flags.
	APIServerExternal bool
	APIServerEvidence []string
	// CCMChecks is the CCM's /healthz?verbose, or CCMError why it was not
	// read.
	CCMChecks []string
	CCMError  string
}

// cutOverMemory is what the gate keeps between looks.
type cutOverMemory struct {
	// ExternalSince is the first look with every mirror Pod external: the
	// hand-over bound runs from there.
	ExternalSince time.Time
	// RestartedAt is the first look with every mirror Pod external and
	// every node's report in; Baseline is the migration lease then.
	RestartedAt time.Time
	Baseline    lease
	// KCMLastRenew is kube-controller-manager's last renewal of the
	// migration lease seen.
	KCMLastRenew time.Time
}

// cutOverPolicy is what the decision needs from the plan.
type cutOverPolicy struct {
	Step     string
	Phase    string
	Nodes    []string
	Bound    time.Duration
	Migrated []string // the CCM's migrated controllers that must run
}

// decideCutOver judges one look: passed, waiting (with what it waits
// for), or an error that stops the run (GuardError: the guard broke;
// GateError: the hand-over bound passed).
func decideCutOver(o cutOverObservation, m *cutOverMemory, p cutOverPolicy) (gateResult, error) {
	var ev []string
	external := len(o.KCMs) == len(p.Nodes)
	for _, k := range o.KCMs {
		switch k.Mode {
		case "external with leader migration":
			return gateResult{}, &GuardError{Problems: []string{fmt.Sprintf(
				"trap C: kube-controller-manager on %s was restarted with --cloud-provider=external but still with leader migration; it contends the migration lease and, when it wins, runs nothing: run `migrate-from-intree node --phase %s` there", k.Node, PhaseControlPlaneExternal)}}
		case "in-tree":
			return gateResult{}, &GuardError{Problems: []string{fmt.Sprintf(
				"split brain risk: kube-controller-manager on %s runs the in-tree provider without leader migration; it runs the cloud loops whenever it leads, while the CCM runs them under the migration lease: run `migrate-from-intree node --phase %s` there (or `--phase %s` to go on)", k.Node, PhaseControlPlaneLeaderMigration, PhaseControlPlaneExternal)}}
		case "external":
		case "":
			external = false
			ev = append(ev, k.Node+": no kube-controller-manager mirror Pod")
			continue
		default:
			external = false
		}
		ev = append(ev, fmt.Sprintf("%s: kube-controller-manager %s", k.Node, k.Mode))
	}
	if o.Leases.migrationHolder() == leadermigration.ComponentKCM && o.Leases.Migration.Renewed.After(m.KCMLastRenew) {
		m.KCMLastRenew = o.Leases.Migration.Renewed
	}

	var missing, unhealthy []string
	for _, n := range p.Nodes {
		r, ok := o.Reports[n]
		switch {
		case !ok:
			missing = append(missing, n)
		case r.KCMHealthzError != "":
			ev = append(ev, fmt.Sprintf("%s: reported, but its kube-controller-manager /healthz?verbose: %s", n, r.KCMHealthzError))
			unhealthy = append(unhealthy, n)
		default:
			if running := leadermigration.Running(r.KCMHealthz, leadermigration.KCMNames()); len(running) > 0 {
				return gateResult{}, &GuardError{Problems: []string{fmt.Sprintf("split brain: kube-controller-manager on %s still runs %v after the cut-over", n, running)}}
			}
		}
	}
	if external && m.ExternalSince.IsZero() {
		m.ExternalSince = o.Now
	}
	switch {
	case !external:
		// A node restarting its kube-controller-manager again (a restore
		// while apply waits): the in-tree one may renew until it reports.
		m.RestartedAt = time.Time{}
	case len(missing) == 0 && len(unhealthy) == 0 && m.RestartedAt.IsZero():
		m.RestartedAt, m.Baseline = o.Now, o.Leases.Migration
	}
	ev = append(ev, o.Leases.String())
	// From RestartedAt on, no kube-controller-manager may renew the
	// migration lease: each node reported its new one external.
	if !m.RestartedAt.IsZero() && o.Leases.migrationHolder() == leadermigration.ComponentKCM &&
		(o.Leases.Migration.Holder != m.Baseline.Holder || o.Leases.Migration.Renewed.After(m.Baseline.Renewed)) {
		return gateResult{}, &GuardError{Problems: []string{fmt.Sprintf(
			"trap C: kube-controller-manager %s renewed the migration lease at %s, after every control-plane node reported its kube-controller-manager back external (%s): a kube-controller-manager still runs with leader migration; find it (`ps -ef | grep kube-controller-manager` on each control-plane node) and restart it without --enable-leader-migration: %s",
			o.Leases.Migration.Holder, o.Leases.Migration.Renewed.UTC().Format(time.RFC3339Nano), m.RestartedAt.UTC().Format(time.RFC3339Nano), o.Leases)}}
	}
	ccmHolds := o.Leases.migrationHolder() == leadermigration.ComponentCCM && o.Leases.Migration.fresh(o.Now)
	if !external {
		return waiting(ev...), nil
	}
	if !ccmHolds && p.Bound > 0 && o.Now.Sub(m.ExternalSince) > p.Bound {
		return gateResult{}, &GateError{Step: p.Step, Timeout: p.Bound, Evidence: append(ev,
			fmt.Sprintf("the CCM did not take the migration lease within the hand-over bound %s of every kube-controller-manager going external", p.Bound))}
	}
	for _, n := range missing {
		ev = append(ev, fmt.Sprintf("%s: no report of phase %s yet (`migrate-from-intree node --phase %s --kubeconfig ...` writes it)", n, p.Phase, p.Phase))
	}
	ev = append(ev, o.APIServerEvidence...)
	if !ccmHolds || !o.APIServerExternal {
		return waiting(ev...), nil
	}
	if o.CCMError != "" {
		return waiting(append(ev, o.CCMError)...), nil
	}
	ev = append(ev, "CCM /healthz?verbose: "+strings.Join(o.CCMChecks, ", "))
	if got := leadermigration.Running(o.CCMChecks, p.Migrated); len(got) < len(p.Migrated) || len(missing) > 0 || len(unhealthy) > 0 {
		return waiting(ev...), nil
	}
	for _, n := range slices.Sorted(maps.Keys(o.Reports)) {
		if slices.Contains(p.Nodes, n) {
			ev = append(ev, fmt.Sprintf("%s: kube-controller-manager runs none of %v", n, leadermigration.KCMNames()))
		}
	}
	return passed(ev...), nil
}

// observeCutOver reads what decideCutOver judges, in the order its
// observation requires.
func (e *env) observeCutOver(ctx context.Context, s *Step) (cutOverObservation, error) {
	o := cutOverObservation{}
	var err error
	if o.Reports, _, err = e.nodeReportsFor(ctx, s.Nodes, s.Phase); err != nil {
		return o, err
	}
	pods, _, err := e.kcmFlags(ctx)
	if err != nil {
		return o, err
	}
	for _, n := range s.Nodes {
		k := kcmObserved{Node: n}
		if i := slices.IndexFunc(pods, func(p staticPodFlags) bool { return p.Node == n }); i >= 0 {
			k.Mode = kcmMode(pods[i].Flags)
		}
		o.KCMs = append(o.KCMs, k)
	}
	if o.Leases, err = readLeases(ctx, e.client); err != nil {
		return o, err
	}
	if o.APIServerExternal, o.APIServerEvidence, err = e.apiserverExternal(ctx); err != nil {
		return o, err
	}
	if _, o.CCMChecks, err = ccmHealthz(ctx, e.client, e.ns); err != nil {
		o.CCMError, o.CCMChecks = err.Error(), nil
	}
	o.Now = e.now()
	return o, nil
}

// apiserverExternal: no kube-apiserver mirror Pod keeps the in-tree
// provider's flags or admission plugin.
func (e *env) apiserverExternal(ctx context.Context) (bool, []string, error) {
	pods, err := mirrorPodFlags(ctx, e.client, "kube-apiserver")
	if err != nil {
		return false, nil, err
	}
	ok := true
	var ev []string
	for _, p := range pods {
		var left []string
		for _, f := range []string{"cloud-provider", "cloud-config"} {
			if p.Flags.Has(f) {
				left = append(left, "--"+f)
			}
		}
		for _, v := range p.Flags.Values("enable-admission-plugins") {
			if slices.Contains(strings.Split(v, ","), "PersistentVolumeLabel") {
				left = append(left, "PersistentVolumeLabel")
			}
		}
		if len(left) > 0 {
			ok = false
			ev = append(ev, fmt.Sprintf("%s: kube-apiserver still has %s", p.Node, strings.Join(left, ", ")))
		} else {
			ev = append(ev, p.Node+": kube-apiserver without the in-tree provider")
		}
	}
	return ok, ev, nil
}

// cutOverGate: every kube-controller-manager runs external without leader
// migration and said so from its node, the apiserver lost the in-tree
// flags, the CCM took the migration lease and runs the migrated
// controllers. It records the hand-over.
func cutOverGate(ctx context.Context, e *env, s *Step) (gateResult, error) {
	o, err := e.observeCutOver(ctx, s)
	if err != nil {
		return gateResult{}, err
	}
	res, err := decideCutOver(o, &e.cutOver, cutOverPolicy{
		Step: s.Name, Phase: s.Phase, Nodes: s.Nodes,
		Bound: e.plan.Spec.Handover.GateBound.Duration, Migrated: e.migratedCCMControllers(),
	})
	if err != nil || !res.ok {
		return res, err
	}
	h := e.handover(o.Leases)
	if _, err := e.update(ctx, func(j *Journal) error { j.Handover = h; return nil }); err != nil {
		return gateResult{}, err
	}
	return passed(append(res.evidence, h.String(e.plan.Spec.Handover))...), nil
}

// handover records the CCM's taking of the migration lease: from the
// holder's exit when a node saw it (the Lease was released then), else from
// kube-controller-manager's last renewal seen.
func (e *env) handover(l leases) *HandoverRecord {
	acquired := metav1.NewMicroTime(l.Migration.Acquired)
	h := &HandoverRecord{CCMAcquired: &acquired, CCMIdentity: l.Migration.Holder}
	if last := e.cutOver.KCMLastRenew; !last.IsZero() {
		t := metav1.NewMicroTime(last)
		h.KCMLastRenew = &t
		h.Gap = metav1.Duration{Duration: l.Migration.Acquired.Sub(last)}
	}
	if r := e.migrationReleased; r != nil {
		exited := metav1.NewMicroTime(r.ExitedAt)
		h.HolderExited = &exited
		h.Gap = metav1.Duration{Duration: l.Migration.Acquired.Sub(r.ExitedAt)}
	}
	return h
}

// String says how the hand-over went, against the plan's expectation.
func (h *HandoverRecord) String(plan Handover) string {
	since := "kube-controller-manager's last renewal"
	if h.HolderExited != nil {
		since = "the holder's exit (its Lease released on the node's report)"
	}
	return fmt.Sprintf("hand-over: the CCM took the migration lease %s after %s (bound %s; without a release, about %s)",
		h.Gap.Round(10*time.Millisecond), since, plan.GateBound.Duration, plan.ExpectedGap.Duration)
}
