//go:build linux

package bench

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/sizing"
)

// The plan: which scenarios run at which size with which flags, on which
// binaries, and in what order.
//
// A group is one cluster size with one flag set; each group starts from a
// fresh state (ensureGroup). Within a group every scenario runs on each
// binary in turn, on the same control plane and the same emulator, with
// the same flags, the state restored in between (each scenario's reset,
// and settleNodes: a binary's node controller starts from the Nodes as
// that binary leaves them); the binary that goes first alternates from
// one scenario to the next.
//
// Bounds (a full run stays under 45 minutes on 2 cores):
//   - the production defaults run only at the main size, the largest size
//     of at most 1,000 Nodes: their join is bounded by the client-side rate
//     limit (QPS 20), 149 s at 1,000 and five times that at 5,000;
//   - load balancers and routes run only at the main size; larger sizes
//     run join, idle, lifecycle, throttling and preflight, smaller ones
//     join, idle, lifecycle and preflight;
//   - preflight runs with the rendered flags' group only (it has no CCM
//     flags), on this CCM only (upstream has no preflight).

// Flag sets.
const (
	flagsDefaults = "defaults" // production defaults: no sizing flags
	flagsRendered = "rendered" // what awsccmctl install renders for the size
)

// group is one size with one flag set.
type group struct {
	nodes int
	flags string
}

func (g group) String() string { return fmt.Sprintf("n=%d/%s", g.nodes, g.flags) }

// sizingArgs are the flags the group's flag set adds to every CCM.
func (g group) sizingArgs() []string {
	if g.flags == flagsRendered {
		return renderedFlags(g.nodes)
	}
	return nil
}

// renderedFlags are the sizing flags `awsccmctl install` renders for a
// cluster it counts n Nodes in (no --expected-nodes): sized for
// install.ExpectedNodesForCount(n), n rounded up to 1, 2 or 5 x 10^k and at
// least 1,000, by sizing.ForNodes.
func renderedFlags(n int) []string {
	return sizing.ForNodes(install.ExpectedNodesForCount(n)).Args()
}

// Scenario names (results.json's scenario).
const (
	scJoin      = "join"
	scIdle      = "idle"
	scLifecycle = "lifecycle"
	scThrottle  = "throttle"
	scLB        = "lb"
	scRoutes    = "routes"
	scPreflight = "preflight"
)

// scenario is one scenario of targets.md, run once per binary.
type scenario struct {
	name string
	// prepare builds the state the scenario starts from, before the first
	// binary (nil = none).
	prepare func(b *testing.B)
	// run runs the scenario on r.bin and records r's figures.
	run func(b *testing.B, r *result)
	// reset restores the state prepare left, between the binaries.
	reset func(b *testing.B)
	// ownNodes: the binary's node controller runs on the joined Nodes, so
	// they must start as that binary leaves them (settleNodes).
	ownNodes bool
	// thisOnly: upstream cannot run it; why, for the table.
	thisOnly string
}

func scenarios() map[string]scenario {
	return map[string]scenario{
		scJoin:      {name: scJoin, run: runJoin, reset: resetJoin},
		scIdle:      {name: scIdle, prepare: ensureJoined, run: runIdle, ownNodes: true},
		scLifecycle: {name: scLifecycle, prepare: func(b *testing.B) { ensureNotReady(b) }, run: runLifecycle, ownNodes: true},
		scThrottle:  {name: scThrottle, prepare: prepareThrottle, run: runThrottle, reset: resetThrottle, ownNodes: true},
		scLB:        {name: scLB, prepare: ensureJoined, run: runLoadBalancers, reset: resetLoadBalancers, ownNodes: true},
		scRoutes:    {name: scRoutes, prepare: prepareRoutes, run: runRoutes, reset: resetRoutes},
		scPreflight: {name: scPreflight, prepare: func(b *testing.B) { ensureNotReady(b) }, run: runPreflight, thisOnly: "upstream has no preflight"},
	}
}

// flagSets is $BENCH_FLAG_SETS (default "rendered"; make bench-compare:
// "defaults,rendered").
func flagSets() []string {
	v := os.Getenv("BENCH_FLAG_SETS")
	if v == "" {
		return []string{flagsRendered}
	}
	var out []string
	for _, f := range []string{flagsDefaults, flagsRendered} { // defaults first
		if slices.Contains(strings.Split(v, ","), f) {
			out = append(out, f)
		}
	}
	return out
}

// mainSize is the largest size of at most 1,000 Nodes (else the smallest).
func mainSize() int {
	best := slices.Min(sizes)
	for _, n := range sizes {
		if n <= 1000 && n > best {
			best = n
		}
	}
	return best
}

// planEntry is one group and its scenarios, in run order.
type planEntry struct {
	group     group
	scenarios []string
}

// plan lists the groups in run order: sizes as given, defaults before
// rendered, and the scenarios of each; skipped says what the bounds leave
// out.
func plan() (entries []planEntry, skipped []string) {
	main := mainSize()
	for _, n := range sizes {
		for _, fs := range flagSets() {
			if fs == flagsDefaults && n != main {
				skipped = append(skipped, fmt.Sprintf("n=%d with production defaults (only at %d Nodes: their join is rate-limited to ~149 s per 1,000 Nodes)", n, main))
				continue
			}
			scs := []string{scJoin, scIdle, scLifecycle}
			switch {
			case n == main:
				scs = append(scs, scThrottle, scLB, scRoutes)
			case n > main:
				scs = append(scs, scThrottle)
				skipped = append(skipped, fmt.Sprintf("n=%d/%s: load balancers and routes (run at %d Nodes only)", n, fs, main))
			default:
				skipped = append(skipped, fmt.Sprintf("n=%d/%s: throttling, load balancers and routes (run at %d Nodes only)", n, fs, main))
			}
			if fs == flagsRendered {
				scs = append(scs, scPreflight)
			}
			entries = append(entries, planEntry{group: group{nodes: n, flags: fs}, scenarios: scs})
		}
	}
	return entries, skipped
}

// noteFlags says, under the table, which sizing flags a group ran with.
func noteFlags(g group) {
	if g.flags == flagsDefaults {
		noteRun(fmt.Sprintf("%s: no sizing flags (the binaries' defaults: --concurrent-node-syncs=1, --concurrent-node-lifecycle-syncs=1, --kube-api-qps=20, --kube-api-burst=30)", g))
		return
	}
	noteRun(fmt.Sprintf("%s: %s (what install renders when it counts %d Nodes: sized for %d)", g, strings.Join(g.sizingArgs(), " "), g.nodes, install.ExpectedNodesForCount(g.nodes)))
}

// pairSeq counts the scenarios run on both binaries, to alternate which
// binary goes first.
var pairSeq int

// BenchmarkScenarios runs the plan. Sub-benchmarks are named
// n=<nodes>/<flags>/<scenario>/<binary>, so one scenario runs with, e.g.,
// -bench 'Scenarios/n=1000/rendered/idle'; it then builds the state it
// needs (a joined cluster, NotReady Nodes) without measuring that part.
func BenchmarkScenarios(b *testing.B) {
	requireEnv(b)
	entries, skipped := plan()
	for _, s := range skipped {
		noteSkipped(s)
	}
	all := scenarios()
	for _, e := range entries {
		noteFlags(e.group)
		b.Run(e.group.String(), func(b *testing.B) {
			for _, name := range e.scenarios {
				sc := all[name]
				b.Run(name, func(b *testing.B) { runScenario(b, e.group, sc) })
			}
		})
	}
}

// runScenario runs sc on every binary of the run, in alternating order.
func runScenario(b *testing.B, g group, sc scenario) {
	ensureGroup(b, g)
	if sc.prepare != nil {
		sc.prepare(b)
	}
	bins := env.binaries
	if sc.thisOnly != "" {
		bins = bins[:1]
		if hasUpstream() {
			r := newResult(g, sc.name, upstreamBinary)
			r.skipped = sc.thisOnly
		}
	} else if len(bins) > 1 {
		if pairSeq%2 == 1 {
			bins = []binary{bins[1], bins[0]}
		}
		pairSeq++
	}
	for i, bin := range bins {
		if i > 0 && sc.reset != nil {
			sc.reset(b)
		}
		r := newResult(g, sc.name, bin.name)
		r.bin, r.order = bin, i+1
		b.Run(bin.name, func(b *testing.B) {
			b.ReportMetric(0, "ns/op") // one run of a scenario: ns/op means nothing
			b.Cleanup(func() {
				if b.Failed() {
					r.markFailed()
				}
			})
			if sc.ownNodes {
				settleNodes(b, r)
			}
			sc.run(b, r)
		})
	}
}
