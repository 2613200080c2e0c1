package instances

import (
	"context"
	"sync"
	"time"
)

// group coalesces requests for keys that arrive within window into one run,
// like a group commit: the first request opens a batch, later ones join it,
// and every waiter gets the run's error. The run has its own context, so one
// caller giving up does not fail the others.
type group struct {
	window  time.Duration
	timeout time.Duration
	run     func(ctx context.Context, keys []string) error

	mu      sync.Mutex
	pending *batch
}

type batch struct {
	keys map[string]struct{}
	done chan struct{}
	err  error
}

// do adds keys to the open batch (opening one if none is) and waits for
// its run.
func (g *group) do(ctx context.Context, keys ...string) error {
	g.mu.Lock()
	b := g.pending
	if b == nil {
		b = &batch{keys: map[string]struct{}{}, done: make(chan struct{})}
		g.pending = b
		go g.flush(b)
	}
	for _, k := range keys {
		b.keys[k] = struct{}{}
	}
	g.mu.Unlock()

	select {
	case <-b.done:
		return b.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *group) flush(b *batch) {
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
	b.err = g.run(ctx, keys)
	close(b.done)
}
