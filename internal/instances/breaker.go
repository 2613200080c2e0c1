package instances

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// The default bound of the node deletion breaker: a tenth of the Nodes, but
// at least a few, so a small cluster that really loses two instances at
// once still gets its Nodes cleaned up.
const (
	defaultMissingPercent = 10
	defaultMissingFloor   = 3
)

// DefaultMaxMissing is the breaker's bound for a cluster of nodes Nodes
// when none is configured: max(10% of the Nodes, 3).
func DefaultMaxMissing(nodes int) int {
	return max(nodes*defaultMissingPercent/100, defaultMissingFloor)
}

// Census is what the breaker counts.
type Census struct {
	// Nodes is how many Nodes the cluster has.
	Nodes int
	// Missing names the Nodes whose instances successful lookups miss now,
	// whether or not the grace period has passed: within one more grace
	// period they would all be reported gone. Terminated instances are not
	// missing; termination is evidence.
	Missing []string
}

// BreakerOptions configure a Breaker.
type BreakerOptions struct {
	// Max is the most Nodes that may be missing at once (now, or let go
	// within the last Window); one more trips the breaker. 0 means
	// DefaultMaxMissing of the current Node count.
	Max int
	// Window is the absence grace period: a Node let go within it still
	// counts, so a steady trickle cannot empty the cluster one Node at a
	// time faster than Max per grace period.
	Window time.Duration
	// Reuse is how long one census answers; the instance cache's max age,
	// since the view answers the same within it anyway.
	Reuse time.Duration
	// Census counts the cluster's Nodes and missing instances.
	Census func(ctx context.Context) (Census, error)
	// Clock stamps censuses and releases (tests step it).
	Clock clock.PassiveClock
	// Metrics records trips and withheld deletions; nil records nothing.
	Metrics *Metrics
}

// Verdict is the breaker's answer about one Node, or about the cluster.
type Verdict struct {
	// Release is true when the Node may be reported gone.
	Release bool
	// Missing is how many Nodes counted against Bound; Nodes is the
	// cluster's Node count the bound came from.
	Missing, Bound, Nodes int
	// Tripped is true when this answer tripped the breaker, Reset when it
	// reset it: the caller logs the transition once.
	Tripped, Reset bool
}

// Breaker guards the cloud-node-lifecycle controller's deletions: a Node
// whose instance is missing (not terminated) from successful lookups past
// the grace period is let go only while few Nodes are missing. When every
// lookup succeeds and finds nothing — a cloud config naming the wrong region
// or VPC, or another account's credentials — every instance is missing at
// once, and deleting their Nodes would take the cluster down; the breaker
// keeps them all instead, until the count falls back within the bound.
// It is safe for concurrent use.
type Breaker struct {
	opts BreakerOptions

	censusMu sync.Mutex // serialises censuses; held while one is taken
	census   Census
	censusAt time.Time

	mu       sync.Mutex
	tripped  bool
	released map[string]time.Time // Node name -> when it was let go
	withheld map[string]bool      // Nodes withheld during the current trip
}

// NewBreaker returns a closed (not tripped) breaker.
func NewBreaker(o BreakerOptions) *Breaker {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return &Breaker{opts: o, released: map[string]time.Time{}, withheld: map[string]bool{}}
}

// Release decides whether node, whose instance has been missing past the
// grace period, may be reported gone. An error (the census could not be
// taken) means no: the caller must not report the Node gone.
func (b *Breaker) Release(ctx context.Context, node string) (Verdict, error) {
	c, err := b.takeCensus(ctx)
	if err != nil {
		return Verdict{}, err
	}
	return b.decide(c, node), nil
}

// Recheck counts again while the breaker is tripped, so it resets once the
// instances are back or their Nodes are gone, even when no Node is up for
// deletion any more. It costs nothing while the breaker is closed.
func (b *Breaker) Recheck(ctx context.Context) (Verdict, error) {
	if !b.Tripped() {
		return Verdict{}, nil
	}
	c, err := b.takeCensus(ctx)
	if err != nil {
		return Verdict{}, err
	}
	return b.decide(c, ""), nil
}

// Tripped reports whether the breaker withholds deletions now.
func (b *Breaker) Tripped() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tripped
}

func (b *Breaker) takeCensus(ctx context.Context) (Census, error) {
	b.censusMu.Lock()
	defer b.censusMu.Unlock()
	now := b.opts.Clock.Now()
	if !b.censusAt.IsZero() && now.Sub(b.censusAt) < b.opts.Reuse {
		return b.census, nil
	}
	c, err := b.opts.Census(ctx)
	if err != nil {
		return Census{}, fmt.Errorf("count the Nodes whose instances are missing: %w", err)
	}
	b.census, b.censusAt = c, now
	return c, nil
}

// decide counts c's missing Nodes, node and the Nodes let go within the
// window against the bound; node "" only updates the breaker's state.
func (b *Breaker) decide(c Census, node string) Verdict {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.opts.Clock.Now()
	counted := make(map[string]bool, len(c.Missing)+len(b.released)+1)
	for _, n := range c.Missing {
		counted[n] = true
	}
	for n, at := range b.released {
		if now.Sub(at) >= b.opts.Window {
			delete(b.released, n)
			continue
		}
		counted[n] = true
	}
	if node != "" {
		counted[node] = true
	}
	bound := b.opts.Max
	if bound <= 0 {
		bound = DefaultMaxMissing(c.Nodes)
	}
	v := Verdict{Missing: len(counted), Bound: bound, Nodes: c.Nodes}
	if v.Missing > bound {
		if !b.tripped {
			b.tripped, v.Tripped = true, true
			b.opts.Metrics.breakerTripped(true)
		}
		if node != "" && !b.withheld[node] {
			b.withheld[node] = true
			b.opts.Metrics.deletionWithheld()
		}
		return v
	}
	if b.tripped {
		b.tripped, v.Reset = false, true
		clear(b.withheld)
		b.opts.Metrics.breakerTripped(false)
	}
	if node != "" {
		v.Release = true
		b.released[node] = now
	}
	return v
}
