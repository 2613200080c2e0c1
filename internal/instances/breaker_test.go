package instances

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	clocktesting "k8s.io/utils/clock/testing"
)

// censusOf is a settable census; the awscloud tests take it from the view
// over the emulator, these test the counting alone.
type censusOf struct {
	mu    sync.Mutex
	c     Census
	err   error
	calls int
}

func (f *censusOf) set(nodes int, missing ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.c = Census{Nodes: nodes, Missing: missing}
}

func (f *censusOf) take(context.Context) (Census, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return f.c, f.err
}

func nodeNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("node-%d", i)
	}
	return out
}

func newTestBreaker(max int) (*Breaker, *censusOf, *clocktesting.FakePassiveClock, metrics.KubeRegistry) {
	census := &censusOf{}
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	reg := metrics.NewKubeRegistry()
	b := NewBreaker(BreakerOptions{
		Max: max, Window: 5 * time.Minute, Reuse: 30 * time.Second,
		Census: census.take, Clock: clk, Metrics: NewMetrics(reg),
	})
	return b, census, clk, reg
}

func wantBreakerMetrics(t *testing.T, reg metrics.KubeRegistry, tripped, withheld int) {
	t.Helper()
	want := fmt.Sprintf(`
# HELP aws_ccm_node_deletion_breaker_tripped [ALPHA] 1 while the CCM withholds the deletion of Nodes whose instances are missing from EC2 because more are missing at once than --aws-max-absent-node-deletions allows (check the cloud config's region and VPC, and the credentials' account); 0 otherwise.
# TYPE aws_ccm_node_deletion_breaker_tripped gauge
aws_ccm_node_deletion_breaker_tripped %d
# HELP aws_ccm_node_deletions_withheld_total [ALPHA] Nodes whose deletion the node deletion breaker withheld, each counted once per trip.
# TYPE aws_ccm_node_deletions_withheld_total counter
aws_ccm_node_deletions_withheld_total %d
`, tripped, withheld)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"aws_ccm_node_deletion_breaker_tripped", "aws_ccm_node_deletions_withheld_total"); err != nil {
		t.Fatal(err)
	}
}

func TestDefaultMaxMissing(t *testing.T) {
	for _, tc := range []struct{ nodes, want int }{{0, 3}, {1, 3}, {39, 3}, {40, 4}, {45, 4}, {1000, 100}} {
		if got := DefaultMaxMissing(tc.nodes); got != tc.want {
			t.Errorf("DefaultMaxMissing(%d) = %d, want %d", tc.nodes, got, tc.want)
		}
	}
}

func TestBreakerWithholdsEveryNodeWhenManyAreMissingAndResets(t *testing.T) {
	b, census, clk, reg := newTestBreaker(0)
	ctx := context.Background()
	names := nodeNames(40)
	census.set(40, names...)
	wantBreakerMetrics(t, reg, 0, 0)

	// Every Node is asked about, twice (two monitor passes): none is let
	// go, the breaker trips once, each Node is counted once.
	for pass := range 2 {
		for i, n := range names {
			v, err := b.Release(ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			if v.Release {
				t.Fatalf("pass %d: %s let go with %d of %d Nodes missing (bound %d)", pass, n, v.Missing, v.Nodes, v.Bound)
			}
			if v.Tripped != (pass == 0 && i == 0) || v.Missing != 40 || v.Bound != 4 {
				t.Fatalf("pass %d, %s: verdict %+v", pass, n, v)
			}
		}
	}
	if census.calls != 1 {
		t.Fatalf("census taken %d times within its reuse time, want 1", census.calls)
	}
	wantBreakerMetrics(t, reg, 1, 40)

	// The instances come back: the census is reused until it is stale,
	// then the breaker resets without any Node being up for deletion.
	census.set(40)
	if v, err := b.Recheck(ctx); err != nil || v.Reset || !b.Tripped() {
		t.Fatalf("Recheck within the census reuse time = %+v, %v; want still tripped", v, err)
	}
	clk.SetTime(clk.Now().Add(31 * time.Second))
	if v, err := b.Recheck(ctx); err != nil || !v.Reset || b.Tripped() {
		t.Fatalf("Recheck after the instances came back = %+v, %v; want a reset", v, err)
	}
	wantBreakerMetrics(t, reg, 0, 40)
	if v, err := b.Recheck(ctx); err != nil || v != (Verdict{}) || census.calls != 2 {
		t.Fatalf("Recheck of a closed breaker = %+v, %v, %d censuses; want nothing done", v, err, census.calls)
	}

	// One missing Node is let go again; a new trip counts Nodes afresh.
	census.set(40, names[7])
	clk.SetTime(clk.Now().Add(31 * time.Second))
	if v, err := b.Release(ctx, names[7]); err != nil || !v.Release || v.Missing != 1 {
		t.Fatalf("one missing of 40 after the reset = %+v, %v", v, err)
	}
	census.set(40, names...)
	clk.SetTime(clk.Now().Add(31 * time.Second))
	if v, err := b.Release(ctx, names[8]); err != nil || v.Release || !v.Tripped {
		t.Fatalf("second trip = %+v, %v", v, err)
	}
	wantBreakerMetrics(t, reg, 1, 41)
}

func TestBreakerLetsAFewMissingNodesGo(t *testing.T) {
	b, census, _, reg := newTestBreaker(0)
	names := nodeNames(40)
	census.set(40, names[3])
	v, err := b.Release(context.Background(), names[3])
	if err != nil || !v.Release || v.Tripped || v.Missing != 1 || v.Bound != 4 {
		t.Fatalf("1 of 40 missing: %+v, %v; want released", v, err)
	}
	wantBreakerMetrics(t, reg, 0, 0)
}

// TestBreakerCountsNodesLetGoWithinTheWindow: Nodes deleted one after the
// other still count for a grace period, so a slow drip cannot delete more
// than the bound per grace period.
func TestBreakerCountsNodesLetGoWithinTheWindow(t *testing.T) {
	b, census, clk, _ := newTestBreaker(3)
	ctx := context.Background()
	names := nodeNames(10)
	for _, n := range names[:3] {
		census.set(10, n) // only this one is missing now; the others are deleted
		clk.SetTime(clk.Now().Add(31 * time.Second))
		if v, err := b.Release(ctx, n); err != nil || !v.Release {
			t.Fatalf("%s: %+v, %v; want released", n, v, err)
		}
	}
	census.set(7, names[3])
	clk.SetTime(clk.Now().Add(31 * time.Second))
	if v, err := b.Release(ctx, names[3]); err != nil || v.Release || v.Missing != 4 {
		t.Fatalf("fourth Node within the window: %+v, %v; want withheld with 4 counted", v, err)
	}
	clk.SetTime(clk.Now().Add(5 * time.Minute))
	if v, err := b.Release(ctx, names[3]); err != nil || !v.Release || !v.Reset || v.Missing != 1 {
		t.Fatalf("after the window: %+v, %v; want released and reset", v, err)
	}
}

func TestBreakerCensusErrorReleasesNothing(t *testing.T) {
	b, census, _, _ := newTestBreaker(0)
	census.set(40, "node-1")
	census.err = errors.New("RequestLimitExceeded")
	v, err := b.Release(context.Background(), "node-1")
	if err == nil || v.Release || !strings.Contains(err.Error(), "RequestLimitExceeded") {
		t.Fatalf("Release while the census fails = %+v, %v; want an error carrying EC2's", v, err)
	}
}
