//go:build linux

package bench

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// The scenarios of targets.md, in the order `make bench` runs them. Each
// one that needs an earlier one's state (a joined cluster, NotReady Nodes)
// builds it itself when run alone (-bench Idle).

const (
	idleStatusPeriod  = 20 * time.Second
	idleCacheMaxAge   = 10 * time.Second
	idlePeriods       = 3
	lifecycleWindow   = 30 * time.Second
	throttleRate      = 0.3
	accountReadBudget = 20.0 // EC2 non-mutating refill per account and Region, calls/s
)

func le(x float64) func(float64) bool { return func(v float64) bool { return v <= x } }
func ge(x float64) func(float64) bool { return func(v float64) bool { return v >= x } }

// finish stops the scenario's CCM and reports its peak RSS.
func finish(b *testing.B, c *ccm) {
	b.Helper()
	c.stop()
	b.ReportMetric(c.peakMiB, "MiB-peak-rss")
	b.Logf("%s: CCM peak RSS (VmHWM) %.1f MiB; at stop RssAnon %.1f MiB, RssFile %.1f MiB", c.scenario, c.peakMiB, c.anonMiB, c.fileMiB)
}

// BenchmarkJoin: 1,000 kubelets register at once (private-DNS names, no
// providerID); EC2 calls per joining Node and time until all are initialized.
func BenchmarkJoin(b *testing.B) {
	requireEnv(b)
	if env.joined {
		b.Skip("the cluster has joined already")
	}
	s := beginScenario(b, "1 join")
	c := startCCM(b, "join")
	s.note(b, "join: production defaults except the cluster sizing %v (defaults: 1 worker, QPS 20 / burst 30)", sizingFlags)
	elapsed, n, breakdown := joinAll(b)
	b.Logf("calls during the join: %s", breakdown)
	s.record(b, figure{name: "EC2 calls per joining node", unit: "ec2-calls/joining-node", value: float64(n) / float64(clusterNodes),
		format: "%.4f", upstream: "2.00", target: "<= 0.01", meets: le(0.01)})
	s.record(b, figure{name: fmt.Sprintf("%d nodes joining at once, s to all initialized", clusterNodes), unit: fmt.Sprintf("s/%d-nodes-initialized", clusterNodes),
		value: elapsed.Seconds(), format: "%.1f", upstream: "148.5", target: "<= 15", meets: le(15)})
	finish(b, c)
}

// BenchmarkIdleStatusPeriod counts EC2 calls per pass of the node status
// loop over the joined, idle cluster, and what a CCM restart costs.
func BenchmarkIdleStatusPeriod(b *testing.B) {
	s := beginScenario(b, "2 idle status")
	ensureJoined(b)
	before := countCalls()
	c := startCCM(b, "idle", "--node-status-update-frequency="+idleStatusPeriod.String(), "--aws-instance-cache-max-age="+idleCacheMaxAge.String())
	s.note(b, "idle: --node-status-update-frequency=%s instead of 5m to keep the run short, and --aws-instance-cache-max-age=%s (default 30s) so that, as with 5m, every pass finds the cache expired; calls per period do not depend on the period's length", idleStatusPeriod, idleCacheMaxAge)
	c.waitStatusPasses(b, 1, time.Minute)
	restart, breakdown := before.since()
	b.Logf("calls from CCM start to the end of its first status pass: %s", breakdown)
	s.record(b, figure{name: fmt.Sprintf("EC2 calls at CCM restart (first status pass, %d nodes)", clusterNodes), unit: "ec2-calls/restart",
		value: float64(restart), format: "%.0f", upstream: fmt.Sprintf("%d (derived)", clusterNodes)})

	base, p0 := countCalls(), len(c.statusPasses())
	c.waitStatusPasses(b, p0+idlePeriods, idlePeriods*idleStatusPeriod+time.Minute)
	n, breakdown := base.since()
	b.Logf("calls over %d idle status periods: %s", idlePeriods, breakdown)
	var took time.Duration
	for _, d := range c.statusPasses()[p0 : p0+idlePeriods] {
		took += d
	}
	want := math.Ceil(float64(clusterNodes) / 1000)
	s.record(b, figure{name: "EC2 calls per idle status period", unit: "ec2-calls/status-period", value: float64(n) / idlePeriods,
		format: "%.2f", upstream: fmt.Sprintf("%d", clusterNodes), target: fmt.Sprintf("<= %.0f (ceil(N/1000))", want), meets: le(want)})
	s.record(b, figure{name: "status pass duration, s", unit: "s/status-pass", value: took.Seconds() / idlePeriods,
		format: "%.3f", upstream: "102"})
	finish(b, c)
}

// BenchmarkLifecycleNotReady counts EC2 calls per pass of the node
// lifecycle loop with 100 NotReady Nodes whose instances run, and whether
// its 5 s period holds.
func BenchmarkLifecycleNotReady(b *testing.B) {
	s := beginScenario(b, "3 lifecycle")
	ensureJoined(b)
	c := startCCM(b, "lifecycle")
	s.note(b, "lifecycle: production defaults (--node-monitor-period=5s, --aws-instance-cache-max-age=30s)")
	names := ensureNotReady(b)
	del0 := env.nodes.deletions()
	c.nextLifecyclePass(b) // one pass that sees the NotReady nodes

	// A window from the end of one pass to the end of a later one, so the
	// mean period is exact whatever the phase.
	p0, sec0, start := c.nextLifecyclePass(b)
	base := countCalls()
	time.Sleep(lifecycleWindow - time.Second)
	p1, sec1, end := c.nextLifecyclePass(b)
	n, breakdown := base.since()
	passes, window := p1-p0, end.Sub(start)
	period := window.Seconds() / passes
	b.Logf("%d lifecycle passes over %d NotReady nodes in %s: %s", int(passes), len(names), window.Round(time.Millisecond), breakdown)
	s.record(b, figure{name: fmt.Sprintf("EC2 calls per lifecycle pass, %d NotReady", len(names)), unit: "ec2-calls/lifecycle-pass", value: float64(n) / passes,
		format: "%.2f", upstream: fmt.Sprintf("%d", 2*len(names)), target: "<= 1", meets: le(1)})
	s.record(b, figure{name: "lifecycle passes per 30 s (5 s period)", unit: "lifecycle-passes/30s", value: 30 / period,
		format: "%.2f", upstream: "1.2 (25.5 s period)", target: ">= 5.5 (period holds)", meets: ge(5.5)})
	s.record(b, figure{name: "lifecycle pass duration, s", unit: "s/lifecycle-pass", value: (sec1 - sec0) / passes, format: "%.4f", upstream: "~20.5 (derived)"})
	s.record(b, figure{name: "nodes deleted (instances running)", unit: "nodes-deleted", value: float64(env.nodes.deletions() - del0),
		format: "%.0f", upstream: "0", target: "0", meets: le(0)})
	finish(b, c)
}

// BenchmarkThrottling: 30% RequestLimitExceeded on EC2 while 100 Nodes are
// NotReady and 50 new Nodes join. Nothing may be deleted, the CCM's call
// rate must stay far inside the account budget, and the new Nodes join.
func BenchmarkThrottling(b *testing.B) {
	s := beginScenario(b, "4 throttling")
	ensureNotReady(b)
	c := startCCM(b, "throttle")
	s.note(b, "throttling: production defaults; %.0f%% of EC2 requests answer RequestLimitExceeded (HTTP 503) for %s, with %d NotReady nodes and %d nodes joining at the fault's start",
		throttleRate*100, faultWindow, len(env.notReady), joiningN)
	c.nextLifecyclePass(b)
	insts, err := addInstances(joiningN)
	if err != nil {
		b.Fatal(err)
	}

	del0, base, thr0 := env.nodes.deletions(), countCalls(), c.throttles(b)
	id := env.aws.InjectFault(awsemu.Throttle("ec2", throttleRate))
	b.Cleanup(func() { env.aws.ClearFault(id) })
	faultStart := time.Now()
	names, err := registerNodes(context.Background(), insts)
	if err != nil {
		b.Fatal(err)
	}
	allJoined := func() bool { return env.nodes.initializedCount(names) == len(names) }
	var joinedAt time.Duration
	for time.Since(faultStart) < faultWindow {
		if joinedAt == 0 && allJoined() {
			joinedAt = time.Since(faultStart)
		}
		time.Sleep(100 * time.Millisecond)
	}
	env.aws.ClearFault(id)
	faultLen := time.Since(faultStart)
	n, breakdown := base.since()
	throttled := c.throttles(b) - thr0
	b.Logf("calls during the %s fault (throttled ones included): %s; the CCM counted %.0f throttled attempts", faultLen.Round(time.Millisecond), breakdown, throttled)
	when := "during the fault"
	if joinedAt == 0 {
		after := waitUntil(b, 2*time.Minute, fmt.Sprintf("%d joining nodes initialized after the fault", len(names)), allJoined)
		joinedAt = faultLen + after
		when = fmt.Sprintf("%.1f s after the fault cleared", after.Seconds())
	}
	s.note(b, "throttling: the %d joining nodes were all initialized %.1f s after the fault began (%s)", len(names), joinedAt.Seconds(), when)

	s.record(b, figure{name: "nodes deleted under throttling", unit: "nodes-deleted", value: float64(env.nodes.deletions() - del0),
		format: "%.0f", upstream: "0", target: "0", meets: le(0)})
	s.record(b, figure{name: "EC2 calls/s during the fault", unit: "ec2-calls/s", value: float64(n) / faultLen.Seconds(),
		format: "%.3f", upstream: "throughput falls 5x", target: fmt.Sprintf("<= %.0f (account budget)", accountReadBudget), meets: le(accountReadBudget)})
	s.record(b, figure{name: "EC2 attempts throttled (CCM's count)", unit: "throttled-attempts", value: throttled, format: "%.0f", upstream: "-"})
	s.record(b, figure{name: fmt.Sprintf("s until the %d joining nodes initialized", len(names)), unit: "s/joined-under-fault", value: joinedAt.Seconds(),
		format: "%.1f", upstream: "-", target: "all join", meets: func(float64) bool { return true }})
	finish(b, c)
}

// BenchmarkLoadBalancers: Classic and NLB Services over the joined cluster
// (lb_test.go). Declared here, after the node scenarios, because benchmarks
// run in declaration order and lb_test.go sorts before this file.
func BenchmarkLoadBalancers(b *testing.B) { runLoadBalancers(b) }

// BenchmarkRoutes: the route controller over the joined cluster
// (routes_test.go), declared here to run after the load balancers.
func BenchmarkRoutes(b *testing.B) { runRoutes(b) }

// BenchmarkPeakRSS reports the largest peak RSS of the CCM processes the
// scenarios ran (each read from VmHWM before it was stopped).
func BenchmarkPeakRSS(b *testing.B) {
	s := beginScenario(b, "7 peak RSS")
	if max, _ := peakRSS(); max == 0 {
		ensureJoined(b) // run alone: at least the join's process
	}
	max, per := peakRSS()
	s.note(b, "peak RSS: VmHWM per CCM process, MiB: %s", per)
	s.record(b, figure{name: "CCM peak RSS, MiB (max over scenarios)", unit: "MiB-peak-rss", value: max,
		format: "%.1f", upstream: "74-90", target: "<= 74", meets: le(74)})
}
