package coalesce

import (
	"context"
	"sync"
	"time"
)

// Group coalesces requests for keys that arrive within Window into one run
// of Run over all their keys. The run has its own context, bounded by
// Timeout, so one caller giving up does not fail the others. R is what a
// run returns to every waiter of its batch (callers pick their keys from
// it); use struct{} when the run records its answers elsewhere.
type Group[R any] struct {
	window  time.Duration
	timeout time.Duration
	run     func(ctx context.Context, keys []string) (R, error)

	mu      sync.Mutex
	pending *batch[R]
}

type batch[R any] struct {
	keys   map[string]struct{}
	done   chan struct{}
	result R
	err    error
}

// New returns a Group that waits window for a batch to fill and gives each
// run timeout.
func New[R any](window, timeout time.Duration, run func(ctx context.Context, keys []string) (R, error)) *Group[R] {
	return &Group[R]{window: window, timeout: timeout, run: run}
}

// Do adds keys to the open batch (opening one if none is) and waits for
// its run. A cancelled ctx returns ctx.Err() at once; the run goes on for
// the others.
func (g *Group[R]) Do(ctx context.Context, keys ...string) (R, error) {
	g.mu.Lock()
	b := g.pending
	if b == nil {
		b = &batch[R]{keys: map[string]struct{}{}, done: make(chan struct{})}
		g.pending = b
		go g.flush(b) //nolint:contextcheck // the run serves every caller of the batch, so no one caller's ctx may end it (see Group)
	}
	for _, k := range keys {
		b.keys[k] = struct{}{}
	}
	g.mu.Unlock()

	select {
	case <-b.done:
		return b.result, b.err
	case <-ctx.Done():
		var zero R
		return zero, ctx.Err()
	}
}

func (g *Group[R]) flush(b *batch[R]) {
	time.Sleep(g.window)
	g.mu.Lock()
	g.pending = nil
	keys := make([]string, 0, len(b.keys))
	for k := range b.keys {
		keys = append(keys, k)
	}
	g.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
	defer cancel()
	b.result, b.err = g.run(ctx, keys)
	close(b.done)
}
