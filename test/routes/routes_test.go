package routes

import (
	"strings"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/routes"
)

// TestNodesGetRoutes: the route controller routes each pod CIDR of a Node
// (IPv4 and IPv6) to its instance, marks the Node's network available,
// and, once the routes exist, a sync costs one DescribeRouteTables and no
// DescribeInstances.
func TestNodesGetRoutes(t *testing.T) {
	ctx := syncCtx(t)
	a, ia := addNode(t, "10.244.1.0/24", "fd00:10:244:1::/64")
	b, ib := addNode(t, "10.244.2.0/24")
	for _, want := range []string{"10.244.1.0/24->" + ia + " active", "fd00:10:244:1::/64->" + ia + " active", "10.244.2.0/24->" + ib + " active"} {
		waitFor(t, ctx, want, func() bool { return hasRoute(t, want) })
	}
	for _, n := range []string{a, b} {
		waitFor(t, ctx, n+" NetworkUnavailable=False", func() bool { ok, err := networkAvailable(ctx, n); return err == nil && ok })
	}
	for _, id := range []string{ia, ib} {
		in, _ := env.aws.Instance(id)
		if in.SourceDestCheck == nil || *in.SourceDestCheck {
			t.Errorf("instance %s: source/destination check still on", id)
		}
	}

	// Steady state.
	rt, di, cr := calls("DescribeRouteTables"), calls("DescribeInstances"), calls("CreateRoute")
	time.Sleep(5 * syncPeriod)
	syncs := calls("DescribeRouteTables") - rt
	if syncs < 3 || syncs > 7 {
		t.Errorf("%d DescribeRouteTables in 5 sync periods, want about 5 (one per sync)", syncs)
	}
	if got := calls("DescribeInstances") - di; got != 0 {
		t.Errorf("%d DescribeInstances in steady syncs, want 0", got)
	}
	if got := calls("CreateRoute") - cr; got != 0 {
		t.Errorf("%d CreateRoute in steady syncs, want 0", got)
	}

	// A Node that goes takes its route with it.
	deleteNode(b)
	waitFor(t, ctx, "the route of the deleted Node to go", func() bool { return !hasRoute(t, "10.244.2.0/24->"+ib+" active") })
}

// TestTerminatedInstanceRouteCleaned: when a Node's instance terminates,
// its route turns blackhole; once the Node is gone (the lifecycle
// controller's work) the route controller deletes it.
func TestTerminatedInstanceRouteCleaned(t *testing.T) {
	ctx := syncCtx(t)
	n, id := addNode(t, "10.244.3.0/24")
	waitFor(t, ctx, "the route", func() bool { return hasRoute(t, "10.244.3.0/24->"+id+" active") })
	if err := env.aws.SetInstanceState(id, "terminated"); err != nil {
		t.Fatal(err)
	}
	if !hasRoute(t, "10.244.3.0/24->"+id+" blackhole") {
		t.Fatalf("route of the terminated instance is not blackhole: %q", tableRoutes(t))
	}
	deleteNode(n)
	waitFor(t, ctx, "the blackhole route to go", func() bool {
		for _, r := range tableRoutes(t) {
			if strings.HasPrefix(r, "10.244.3.0/24->") {
				return false
			}
		}
		return true
	})
}

// TestBlackholeReplacedForNewNode: a Node that gets the pod CIDR of a
// terminated instance's route gets that route, replaced in place.
func TestBlackholeReplacedForNewNode(t *testing.T) {
	ctx := syncCtx(t)
	old, id := addNode(t, "10.244.4.0/24")
	waitFor(t, ctx, "the route", func() bool { return hasRoute(t, "10.244.4.0/24->"+id+" active") })
	if err := env.aws.SetInstanceState(id, "terminated"); err != nil {
		t.Fatal(err)
	}
	deleteNode(old)
	_, id2 := addNode(t, "10.244.4.0/24")
	waitFor(t, ctx, "the route to the new Node", func() bool { return hasRoute(t, "10.244.4.0/24->"+id2+" active") })
}

// TestForeignRoutesNeverTouched: after syncs that created and deleted the
// controller's routes, the foreign routes are as the fixture made them.
func TestForeignRoutesNeverTouched(t *testing.T) {
	ctx := syncCtx(t)
	n, id := addNode(t, "10.244.5.0/24")
	waitFor(t, ctx, "the route", func() bool { return hasRoute(t, "10.244.5.0/24->"+id+" active") })
	deleteNode(n)
	waitFor(t, ctx, "the route to go", func() bool { return !hasRoute(t, "10.244.5.0/24->"+id+" active") })
	time.Sleep(2 * syncPeriod)
	for _, want := range []string{
		"10.244.250.0/24->vgw-0f0f0f0f0f0f0f0f1 active", "10.244.251.0/24->" + foreignInstance + " active",
		"10.244.252.0/24->igw-0f0f0f0f0f0f0f0f2 blackhole", "192.168.0.0/24->" + foreignInstance + " active",
	} {
		if !hasRoute(t, want) {
			t.Errorf("foreign route %s changed: routes now %q", want, tableRoutes(t))
		}
	}
}

// TestRouteLimit: a Node whose route does not fit gets the Warning event
// with the fix, and the rendered PrometheusRule's route-limit alert fires
// on the CCM's metrics (not before); CreateRoute is not called again on
// the following syncs; once a route is deleted the Node gets its route.
func TestRouteLimit(t *testing.T) {
	ctx := syncCtx(t)
	alerts := newAlertTimeline(t)
	alerts.scrape(t) // nothing wrong yet
	alerts.scrape(t)
	rt, _ := env.aws.RouteTable(tableID)
	env.aws.SetRouteLimit(len(rt.Routes)) // the local route is not counted: room for one
	t.Cleanup(func() { env.aws.SetRouteLimit(100) })
	first, id1 := addNode(t, "10.244.6.0/24")
	waitFor(t, ctx, "the first route", func() bool { return hasRoute(t, "10.244.6.0/24->"+id1+" active") })
	second, id2 := addNode(t, "10.244.7.0/24")
	waitFor(t, ctx, "the Warning event", func() bool {
		evs, err := nodeEvents(ctx, second, routes.ReasonRouteLimitExceeded)
		return err == nil && len(evs) > 0 && evs[0].Type == "Warning" && strings.Contains(evs[0].Message, "Routes per route table")
	})
	alerts.scrape(t)
	alerts.scrape(t)
	alerts.wantFiring(t, "AWSCCMRouteLimitExceeded", 2)
	before := calls("CreateRoute")
	time.Sleep(3 * syncPeriod)
	if got := calls("CreateRoute") - before; got != 0 {
		t.Errorf("%d CreateRoute calls in 3 syncs into the full table, want 0", got)
	}
	deleteNode(first)
	waitFor(t, ctx, "the second Node's route", func() bool { return hasRoute(t, "10.244.7.0/24->"+id2+" active") })
}
