//go:build linux

package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// The node scenarios of targets.md (plan_test.go runs them; lb_test.go,
// routes_test.go and preflight_test.go hold the others). Each run function
// measures one binary; the reset functions restore, between the binaries,
// the state the scenario started from.

const (
	idleStatusPeriod = 20 * time.Second
	idleCacheMaxAge  = 10 * time.Second
	// idlePeriods: one period after the start-up pass. Upstream's pass at
	// 1,000 Nodes with the defaults takes about 100 s (one DescribeInstances
	// and one Node write per Node through the QPS 20 limit), and the next
	// starts a period after it ends.
	idlePeriods     = 1
	lifecycleWindow = 30 * time.Second
	throttleRate    = 0.3
)

// passTimeout bounds one status pass over n Nodes: upstream's takes about
// 100 ms per Node with the production defaults.
func passTimeout(n int) time.Duration { return time.Minute + time.Duration(n)*200*time.Millisecond }

// runJoin: every base instance's kubelet registers at once (private-DNS
// names, no providerID). Time until all are initialized, each Node's time
// from registration to initialized, EC2 calls and kube-API requests per
// joining Node.
func runJoin(b *testing.B, r *result) {
	if env.joined { // run alone after another scenario
		resetJoin(b)
	}
	c := startCCM(b, r, ccmArgs{})
	req0 := apiserverRequests(b)
	j := joinAll(b, r.binary)
	reqs := req0.since(b)
	n := float64(len(env.base))
	if reqs["POST nodes"] -= n; reqs["POST nodes"] <= 0 { // the kubelets' registrations
		delete(reqs, "POST nodes")
	}
	r.note(b, "calls during the join: %s", j.breakdown)
	r.note(b, "kube-API requests during the join, the %d registrations left out: %s", len(env.base), reqs)
	r.record(b, "seconds_initialized", fmt.Sprintf("s until all %d Nodes initialized (registration included)", len(env.base)), "%.1f", j.elapsed.Seconds())
	r.record(b, "registration_seconds", "s to register them (32 kubelet workers)", "%.1f", j.registered.Seconds())
	r.record(b, "p50_seconds", "per Node, registration to initialized: p50, s", "%.2f", percentile(j.latencies, 50).Seconds())
	r.record(b, "p99_seconds", "per Node, registration to initialized: p99, s", "%.2f", percentile(j.latencies, 99).Seconds())
	r.record(b, "ec2_calls_per_node", "EC2 calls per joining Node", "%.4f", float64(j.ec2)/n)
	r.record(b, "kube_requests_per_node", "kube-API requests per initialized Node (apiserver_request_total, registrations left out)", "%.2f", reqs.total()/n)
	finish(b, r, c)
}

// resetJoin deletes the base instances' Nodes: the next binary joins them
// again.
func resetJoin(b *testing.B) {
	b.Helper()
	if err := deleteNodes(context.Background(), nodeNames(env.base)); err != nil {
		b.Fatal(err)
	}
	env.joined, env.notReady = false, nil
}

// runIdle counts EC2 calls per pass of the node status loop over the
// joined, idle cluster, and what a CCM restart costs.
func runIdle(b *testing.B, r *result) {
	before := countCalls()
	c := startCCM(b, r, ccmArgs{
		args:     []string{"--node-status-update-frequency=" + idleStatusPeriod.String()},
		thisOnly: []string{"--aws-instance-cache-max-age=" + idleCacheMaxAge.String()},
	})
	if r.binary == thisBinary {
		r.note(b, "--node-status-update-frequency=%s instead of 5m to keep the run short, and --aws-instance-cache-max-age=%s (default 30s) so that, as with 5m, every pass finds the cache expired", idleStatusPeriod, idleCacheMaxAge)
	} else {
		r.note(b, "--node-status-update-frequency=%s; upstream has no --aws-instance-cache-max-age and runs without it", idleStatusPeriod)
	}
	n := len(env.base)
	c.waitStatusPasses(b, 1, passTimeout(n))
	restart, breakdown := before.since()
	b.Logf("calls from CCM start to the end of its first status pass: %s", breakdown)
	r.record(b, "ec2_calls_restart", "EC2 calls from CCM start to the end of its first status pass", "%.0f", float64(restart))

	base, p0 := countCalls(), len(c.statusPasses())
	c.waitStatusPasses(b, p0+idlePeriods, idlePeriods*idleStatusPeriod+passTimeout(n))
	calls, breakdown := base.since()
	r.note(b, "calls over %d idle status periods: %s", idlePeriods, breakdown)
	var took time.Duration
	for _, d := range c.statusPasses()[p0 : p0+idlePeriods] {
		took += d
	}
	r.record(b, "ec2_calls_per_status_period", "EC2 calls per idle status period", "%.2f", float64(calls)/idlePeriods)
	r.record(b, "status_pass_seconds", "status pass duration, s", "%.3f", took.Seconds()/idlePeriods)
	finish(b, r, c)
}

// runLifecycle counts EC2 calls per pass of the node lifecycle loop with
// 100 NotReady Nodes whose instances run, and whether its 5 s period
// holds.
func runLifecycle(b *testing.B, r *result) {
	c := startCCM(b, r, ccmArgs{})
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
	r.note(b, "%d lifecycle passes over %d NotReady nodes in %s: %s", int(passes), len(names), window.Round(time.Millisecond), breakdown)
	r.record(b, "ec2_calls_per_lifecycle_pass", fmt.Sprintf("EC2 calls per lifecycle pass, %d NotReady", len(names)), "%.2f", float64(n)/passes)
	r.record(b, "lifecycle_passes_per_30s", "lifecycle passes per 30 s (5 s period)", "%.2f", 30/period)
	r.record(b, "lifecycle_pass_seconds", "lifecycle pass duration, s", "%.4f", (sec1-sec0)/passes)
	r.record(b, "nodes_deleted", "Nodes deleted (instances running)", "%.0f", float64(env.nodes.deletions()-del0))
	finish(b, r, c)
}

// prepareThrottle: 100 NotReady Nodes, and the instances of the Nodes that
// join during the fault.
func prepareThrottle(b *testing.B) {
	ensureNotReady(b)
	if env.joiners == nil {
		insts, err := addInstances(joiningN)
		if err != nil {
			b.Fatal(err)
		}
		env.joiners = insts
	}
}

// runThrottle: 30% RequestLimitExceeded on EC2 while 100 Nodes are
// NotReady and 50 new Nodes join. Nothing may be deleted, the CCM's call
// rate must stay far inside the account budget, and the new Nodes join.
func runThrottle(b *testing.B, r *result) {
	c := startCCM(b, r, ccmArgs{})
	r.note(b, "%.0f%% of EC2 requests answer RequestLimitExceeded (HTTP 503) for %s, with %d NotReady nodes and %d nodes registering at the fault's start",
		throttleRate*100, faultWindow, len(env.notReady), len(env.joiners))
	c.nextLifecyclePass(b)

	del0, base := env.nodes.deletions(), countCalls()
	id := env.aws.InjectFault(awsemu.Throttle("ec2", throttleRate))
	b.Cleanup(func() { env.aws.ClearFault(id) })
	faultStart := time.Now()
	names, err := registerNodes(context.Background(), env.joiners)
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
	r.note(b, "calls during the %s fault (throttled ones included): %s", faultLen.Round(time.Millisecond), breakdown)
	when := "during the fault"
	if joinedAt == 0 {
		after := waitUntil(b, 2*time.Minute, fmt.Sprintf("%d joining nodes initialized after the fault", len(names)), allJoined)
		joinedAt = faultLen + after
		when = fmt.Sprintf("%.1f s after the fault cleared", after.Seconds())
	}
	r.note(b, "the %d joining nodes were all initialized %.1f s after the fault began (%s)", len(names), joinedAt.Seconds(), when)
	r.record(b, "nodes_deleted", fmt.Sprintf("Nodes deleted under %.0f%% throttling, %s", throttleRate*100, faultWindow), "%.0f", float64(env.nodes.deletions()-del0))
	r.record(b, "ec2_calls_per_second", "EC2 calls/s during the fault (throttled ones included)", "%.3f", float64(n)/faultLen.Seconds())
	r.record(b, "seconds_joiners_initialized", fmt.Sprintf("s until the %d joining Nodes initialized", len(names)), "%.1f", joinedAt.Seconds())
	finish(b, r, c)
}

// resetThrottle deletes the joining Nodes: the next binary sees them join.
func resetThrottle(b *testing.B) {
	b.Helper()
	if err := deleteNodes(context.Background(), nodeNames(env.joiners)); err != nil {
		b.Fatal(err)
	}
}
