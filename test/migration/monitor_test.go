package migration

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/testbed/staticpod"
)

// The monitor watches a migration from outside, as an operator would: every
// tick it reads each manager's /healthz?verbose (the controllers it runs) and
// the three Leases, in one concurrent snapshot. Sampling only records;
// analyze turns the samples into a report the e2e asserts on (no split brain,
// no migration-lease renewal by an external kube-controller-manager, how long
// no process ran the migrated loops, how long no kube-controller-manager led).

// Target kinds.
const (
	kindKCM = "kcm"
	kindCCM = "ccm"
)

// stampFormat is how the report prints instants.
const stampFormat = "15:04:05.000"

// monitorLeases are the Leases (in kube-system) each sample reads.
func monitorLeases() []string {
	return []string{leadermigration.KCMLeaseName, install.LeaseName, leadermigration.LeaseName}
}

// baseCheck reports whether a /healthz check is one every manager lists,
// leader or not: it says nothing about which controllers run.
func baseCheck(name string) bool {
	return name == "ping" || name == "log" || name == "leaderElection"
}

// migratedLoop maps a check named after a migrated controller, under either
// manager's name, to the loop (kube-controller-manager's name).
func migratedLoop(check string) (string, bool) {
	for _, c := range leadermigration.Controllers {
		if check == c.KCM || check == c.CCM {
			return c.KCM, true
		}
	}
	return "", false
}

// managerTarget is one manager process the monitor reads.
type managerTarget struct {
	Name     string // e.g. "kcm/ip-10-0-1-10.ec2.internal", "ccm"
	Kind     string // "kcm" or "ccm"
	Hostname string // kcm: the host name its leader-election identity starts with ("<hostname>_<uuid>")
	// Healthz returns the checks /healthz?verbose lists ok; an error when
	// unreachable (restarting). It must honour ctx.
	Healthz func(ctx context.Context) ([]string, error)
	// External (kcm) reports whether it runs --cloud-provider=external now;
	// nil for the CCM.
	External func() bool
}

// sample is one snapshot: every target and Lease read in the same tick.
type sample struct {
	Time    time.Time
	Targets []targetState
	// Leases by name; a Lease that does not exist is a zero leaseState.
	Leases map[string]leaseState
}

// targetState is one target as a sample saw it.
type targetState struct {
	Name, Kind, Hostname string
	External             bool
	Checks               []string
	// Err is why the target could not be read (restarting, no answer in
	// time); such a target lists nothing.
	Err string
}

// leaseState is one Lease as a sample saw it.
type leaseState struct {
	Holder                 string
	AcquireTime, RenewTime time.Time
	// Err is why the Lease could not be read; the other fields are then
	// unknown, not empty.
	Err string
}

// running is what the target lists, nothing when it was unreachable.
func (ts targetState) running() []string {
	if ts.Err != "" {
		return nil
	}
	return ts.Checks
}

// leads reports whether a kube-controller-manager holds its main lease, as
// its /healthz shows it: it lists a controller besides the base checks and
// the migrated loops.
func (ts targetState) leads() bool {
	if ts.Kind != kindKCM {
		return false
	}
	return slices.ContainsFunc(ts.running(), func(c string) bool {
		_, migrated := migratedLoop(c)
		return !baseCheck(c) && !migrated
	})
}

// window is a span between two samples.
type window struct{ From, To time.Time }

// Duration is the window's length.
func (w window) Duration() time.Duration { return w.To.Sub(w.From) }

func (w window) String() string {
	return fmt.Sprintf("%s for %s", w.From.Format(stampFormat), w.Duration().Round(time.Millisecond))
}

// monitorReport is what the monitor saw, for the e2e to assert on.
type monitorReport struct {
	Samples int
	// SplitBrain has one line per sample where two processes list the same
	// migrated loop (under either manager's name).
	SplitBrain []string
	// ExternalKCMRenews has one line per sample where the migration
	// Lease's renewTime advanced while its holder was a
	// kube-controller-manager running --cloud-provider=external (trap C).
	ExternalKCMRenews []string
	// Gaps are the maximal runs of samples, after the first where any
	// process listed a migrated loop, where none did. From is the first
	// sample of the run, To the first sample after it (the last sample for
	// a run still open at Stop): accurate to one sampling interval.
	Gaps []window
	// KCMLeaderless are the maximal runs of samples where no
	// kube-controller-manager lists its controllers: from the leader's end
	// until a new leader has started all of them (kube-controller-manager
	// adds their checks only once every controller started).
	KCMLeaderless []window
	// Handoffs are the changes of holder of the kube-controller-manager
	// and migration Leases: the new holder's acquireTime minus the last
	// renewTime of the one before, the Lease's own view of the leaderless
	// time.
	Handoffs []handoff
	Marks    []string
}

// handoff is one change of a Lease's holder.
type handoff struct {
	Lease, From, To     string
	LastRenew, Acquired time.Time
}

// Gap is how long no holder renewed the Lease.
func (h handoff) Gap() time.Duration { return h.Acquired.Sub(h.LastRenew) }

func (h handoff) String() string {
	return fmt.Sprintf("%s: %s -> %s at %s, %s after the last renewal", h.Lease, h.From, h.To,
		h.Acquired.Format(stampFormat), h.Gap().Round(time.Millisecond))
}

// handoffs lists the holder changes of lease over the samples.
func handoffs(samples []sample, lease string) []handoff {
	var out []handoff
	var holder string
	var lastRenew time.Time
	for _, s := range samples {
		l, ok := s.Leases[lease]
		if !ok || l.Err != "" || l.Holder == "" {
			continue // released or unreadable: the holder before counts
		}
		switch {
		case holder == "":
			holder, lastRenew = l.Holder, l.RenewTime
		case l.Holder != holder:
			out = append(out, handoff{Lease: lease, From: holder, To: l.Holder, LastRenew: lastRenew, Acquired: l.AcquireTime})
			holder, lastRenew = l.Holder, l.RenewTime
		case l.RenewTime.After(lastRenew):
			lastRenew = l.RenewTime
		}
	}
	return out
}

// LongestGap is the longest of Gaps, 0 without any.
func (r monitorReport) LongestGap() time.Duration {
	var longest time.Duration
	for _, g := range r.Gaps {
		longest = max(longest, g.Duration())
	}
	return longest
}

// String summarises the report over several lines.
func (r monitorReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "monitor: %d samples\n", r.Samples)
	lines := func(title string, ls []string) {
		fmt.Fprintf(&b, "%s: %d\n", title, len(ls))
		const shown = 10
		for i, l := range ls {
			if i == shown {
				fmt.Fprintf(&b, "  ... and %d more\n", len(ls)-shown)
				break
			}
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	windows := func(title string, ws []window) {
		var longest time.Duration
		for _, w := range ws {
			longest = max(longest, w.Duration())
		}
		fmt.Fprintf(&b, "%s: %d, longest %s\n", title, len(ws), longest.Round(time.Millisecond))
		for _, w := range ws {
			fmt.Fprintf(&b, "  %s\n", w)
		}
	}
	lines("split brain (samples where two processes run one migrated loop)", r.SplitBrain)
	lines("renewals of "+leadermigration.LeaseNamespace+"/"+leadermigration.LeaseName+" by an external kube-controller-manager", r.ExternalKCMRenews)
	windows("gaps (no process runs a migrated loop)", r.Gaps)
	windows("no kube-controller-manager lists its controllers", r.KCMLeaderless)
	fmt.Fprintf(&b, "lease hand-offs: %d\n", len(r.Handoffs))
	for _, h := range r.Handoffs {
		fmt.Fprintf(&b, "  %s\n", h)
	}
	fmt.Fprintf(&b, "marks: %d\n", len(r.Marks))
	for _, m := range r.Marks {
		fmt.Fprintf(&b, "  %s\n", m)
	}
	return b.String()
}

// analyze turns samples, in time order, into a report.
func analyze(samples []sample, marks []string) monitorReport {
	r := monitorReport{Samples: len(samples), Marks: slices.Clone(marks)}
	first := len(samples)
	for i, s := range samples {
		if line := splitBrain(s); line != "" {
			r.SplitBrain = append(r.SplitBrain, line)
		}
		if first == len(samples) && len(loopsRunning(s)) > 0 {
			first = i
		}
	}
	r.ExternalKCMRenews = externalKCMRenews(samples)
	r.Gaps = runs(samples[first:], func(s sample) bool { return len(loopsRunning(s)) == 0 })
	r.KCMLeaderless = runs(samples, func(s sample) bool { return !slices.ContainsFunc(s.Targets, targetState.leads) })
	r.Handoffs = append(handoffs(samples, leadermigration.KCMLeaseName), handoffs(samples, leadermigration.LeaseName)...)
	return r
}

// loopsRunning returns the migrated loops any process lists.
func loopsRunning(s sample) []string {
	var out []string
	for _, ts := range s.Targets {
		for _, c := range ts.running() {
			if loop, ok := migratedLoop(c); ok && !slices.Contains(out, loop) {
				out = append(out, loop)
			}
		}
	}
	return out
}

// splitBrain describes the loops two or more processes list in one sample,
// "" when there are none.
func splitBrain(s sample) string {
	byLoop := map[string][]string{}
	for _, ts := range s.Targets {
		var seen []string
		for _, c := range ts.running() {
			loop, ok := migratedLoop(c)
			if !ok || slices.Contains(seen, loop) {
				continue
			}
			seen = append(seen, loop)
			byLoop[loop] = append(byLoop[loop], fmt.Sprintf("%s (%s)", ts.Name, c))
		}
	}
	var parts []string
	for _, c := range leadermigration.Controllers {
		if by := byLoop[c.KCM]; len(by) > 1 {
			parts = append(parts, c.KCM+" on "+strings.Join(by, " and "))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return s.Time.Format(stampFormat) + " " + strings.Join(parts, "; ")
}

// externalKCMRenews finds the samples where the migration Lease's renewTime
// advanced since the last sample that read it while its holder was an
// external kube-controller-manager.
//
// Identities are "<hostname>_<uuid>" for both managers, and processes on
// one host share the host name, so the host name alone cannot tell a
// kube-controller-manager from the CCM, nor two kube-controller-managers
// apart. A manager uses one identity for its main Lease and the migration
// Lease, so an identity that ever held the CCM's Lease is the CCM; among
// kube-controller-managers on one host, the one that leads is the holder.
func externalKCMRenews(samples []sample) []string {
	ccmIDs := map[string]bool{}
	for _, s := range samples {
		if l, ok := s.Leases[install.LeaseName]; ok && l.Err == "" && l.Holder != "" {
			ccmIDs[l.Holder] = true
		}
	}
	var out []string
	var last leaseState
	seen := false
	// externalBefore: targets external in the sample before. The renewal
	// happened between the two samples: a target that turned external in
	// between may have renewed as its process of before (in-tree, about
	// to be stopped), so only one external at both ends counts.
	externalBefore := map[string]bool{}
	for _, s := range samples {
		l, ok := s.Leases[leadermigration.LeaseName]
		before := externalBefore
		externalBefore = map[string]bool{}
		for _, ts := range s.Targets {
			externalBefore[ts.Name] = ts.External
		}
		if !ok || l.Err != "" {
			continue
		}
		if seen && l.RenewTime.After(last.RenewTime) && !ccmIDs[l.Holder] {
			var external []string
			for _, ts := range holderKCMs(s, l.Holder) {
				if ts.External && before[ts.Name] {
					external = append(external, ts.Name)
				}
			}
			if len(external) > 0 {
				out = append(out, fmt.Sprintf("%s %s renewed by %s (%s, --cloud-provider=external): renewTime %s -> %s",
					s.Time.Format(stampFormat), leadermigration.LeaseName, l.Holder, strings.Join(external, " or "),
					stamp(last.RenewTime), stamp(l.RenewTime)))
			}
		}
		last, seen = l, true
	}
	return out
}

// holderKCMs returns the kube-controller-managers a Lease holder identity
// can be in a sample: those whose Hostname it starts with, narrowed to the
// leading one when several share the host.
func holderKCMs(s sample, identity string) []targetState {
	var out []targetState
	for _, ts := range s.Targets {
		if ts.Kind == kindKCM && ts.Hostname != "" && strings.HasPrefix(identity, ts.Hostname+"_") {
			out = append(out, ts)
		}
	}
	if len(out) > 1 {
		if leaders := slices.DeleteFunc(slices.Clone(out), func(ts targetState) bool { return !ts.leads() }); len(leaders) > 0 {
			out = leaders
		}
	}
	return out
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return t.Format(stampFormat)
}

// runs returns the maximal runs of samples where in holds: each from its
// first sample to the first sample after it, or to the last sample when the
// run is still open.
func runs(samples []sample, in func(sample) bool) []window {
	var out []window
	open := -1
	for i, s := range samples {
		switch {
		case in(s) && open < 0:
			open = i
		case !in(s) && open >= 0:
			out = append(out, window{From: samples[open].Time, To: s.Time})
			open = -1
		}
	}
	if open >= 0 {
		out = append(out, window{From: samples[open].Time, To: samples[len(samples)-1].Time})
	}
	return out
}

// monitor samples the managers and Leases until Stop.
type monitor struct {
	interval time.Duration
	timeout  time.Duration // per read, below interval
	targets  func() []managerTarget

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once

	mu      sync.Mutex
	samples []sample
	marks   []string
	report  monitorReport
}

// startMonitor samples every interval until Stop (t.Cleanup stops it too).
// targets is called each tick, from the monitor's goroutine, so the set of
// processes can change during the run.
func startMonitor(t *testing.T, interval time.Duration, targets func() []managerTarget) *monitor {
	t.Helper()
	if interval <= 0 {
		t.Fatalf("monitor interval %s", interval)
	}
	m := &monitor{interval: interval, timeout: interval * 4 / 5, targets: targets,
		stop: make(chan struct{}), done: make(chan struct{})}
	go m.loop()
	t.Cleanup(func() { m.Stop() })
	return m
}

// Stop ends sampling and returns the report; later calls return the same.
func (m *monitor) Stop() monitorReport {
	m.stopOnce.Do(func() {
		close(m.stop)
		<-m.done
		m.mu.Lock()
		defer m.mu.Unlock()
		m.report = analyze(m.samples, m.marks)
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.report
}

// Mark records a labelled instant for the report (before Stop).
func (m *monitor) Mark(label string) {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.marks = append(m.marks, now.Format(stampFormat)+" "+label)
}

func (m *monitor) loop() {
	defer close(m.done)
	for {
		start := time.Now()
		s := m.take()
		m.mu.Lock()
		m.samples = append(m.samples, s)
		m.mu.Unlock()
		// A tick that overran starts the next one at once, late.
		select {
		case <-m.stop:
			return
		case <-time.After(max(time.Until(start.Add(m.interval)), 0)):
		}
	}
}

// take reads every target and Lease at once. A read still out when the
// timeout passes counts as unanswered, so a tick never waits much longer
// than the timeout.
func (m *monitor) take() sample {
	s := sample{Time: time.Now(), Leases: map[string]leaseState{}}
	ctx, cancel := context.WithTimeout(context.Background(), m.timeout)
	defer cancel()
	noAnswer := fmt.Sprintf("no answer within %s", m.timeout)

	type reading struct {
		target int // index in s.Targets; -1 for a Lease
		state  targetState
		lease  string
		ls     leaseState
	}
	targets := m.targets()
	leases := monitorLeases()
	readings := make(chan reading, len(targets)+len(leases)) // buffered: late readers never block
	for i, tg := range targets {
		s.Targets = append(s.Targets, targetState{Name: tg.Name, Kind: tg.Kind, Hostname: tg.Hostname, Err: noAnswer})
		go func() {
			ts := targetState{Name: tg.Name, Kind: tg.Kind, Hostname: tg.Hostname}
			if tg.External != nil {
				ts.External = tg.External()
			}
			checks, err := tg.Healthz(ctx)
			if err != nil {
				ts.Err = err.Error()
			} else {
				ts.Checks = checks
			}
			readings <- reading{target: i, state: ts}
		}()
	}
	for _, name := range leases {
		s.Leases[name] = leaseState{Err: noAnswer}
		go func() { readings <- reading{target: -1, lease: name, ls: readLease(ctx, name)} }()
	}
	for range len(targets) + len(leases) {
		select {
		case r := <-readings:
			if r.target >= 0 {
				s.Targets[r.target] = r.state
			} else {
				s.Leases[r.lease] = r.ls
			}
		case <-ctx.Done():
			return s
		}
	}
	return s
}

// readLease reads one Lease in kube-system through the test's client.
func readLease(ctx context.Context, name string) leaseState {
	if env.kube == nil {
		return leaseState{Err: "no apiserver (the test bed is not running)"}
	}
	l, err := env.kube.CoordinationV1().Leases(leadermigration.LeaseNamespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return leaseState{}
	case err != nil:
		return leaseState{Err: err.Error()}
	}
	var out leaseState
	if h := l.Spec.HolderIdentity; h != nil {
		out.Holder = *h
	}
	if a := l.Spec.AcquireTime; a != nil {
		out.AcquireTime = a.Time
	}
	if r := l.Spec.RenewTime; r != nil {
		out.RenewTime = r.Time
	}
	return out
}

// healthzOverHTTPS reads /healthz?verbose of a manager's secure port (its
// self-signed serving certificate, on loopback) for managerTarget.Healthz.
// A 500 still lists the checks that pass, so it is read too.
func healthzOverHTTPS(baseURL string) func(ctx context.Context) ([]string, error) {
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // #nosec G402 -- the manager's self-signed serving cert, on loopback
	}}
	return func(ctx context.Context) ([]string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/healthz?verbose", http.NoBody)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if err != nil {
			return nil, fmt.Errorf("%s/healthz: %w", baseURL, err)
		}
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusInternalServerError {
			return nil, fmt.Errorf("%s/healthz: HTTP %d", baseURL, resp.StatusCode)
		}
		return leadermigration.HealthzChecks(string(body)), nil
	}
}

// processRunsExternal reports, for managerTarget.External, whether the
// kube-controller-manager process a static-Pod runner runs now has
// --cloud-provider=external: the process, not the manifest, which the node
// step edits before the old process stops.
func processRunsExternal(r *staticpod.Runner) func() bool {
	return func() bool {
		_, args, _, ok := r.Process("kube-controller-manager")
		return ok && slices.Contains(args, "--cloud-provider=external")
	}
}

// manifestRunsExternal reports, for managerTarget.External, whether a
// kube-controller-manager static Pod manifest says --cloud-provider=external
// now (false when it cannot be read).
func manifestRunsExternal(path string) func() bool {
	return func() bool {
		data, err := os.ReadFile(path)
		return err == nil && strings.Contains(string(data), "--cloud-provider=external")
	}
}
