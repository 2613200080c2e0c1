package coalesce

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestConcurrentCallersShareOneRun: callers arriving within the window are
// served by one run over the union of their keys, and each sees its result.
func TestConcurrentCallersShareOneRun(t *testing.T) {
	var runs atomic.Int32
	var got []string
	g := New(200*time.Millisecond, time.Minute, func(_ context.Context, keys []string) (map[string]int, error) {
		runs.Add(1)
		got = slices.Sorted(slices.Values(keys))
		out := map[string]int{}
		for i, k := range keys {
			out[k] = i + 1
		}
		return out, nil
	})
	var wg sync.WaitGroup
	for _, k := range []string{"a", "b", "c", "a"} {
		wg.Go(func() {
			res, err := g.Do(context.Background(), k)
			if err != nil || res[k] == 0 {
				t.Errorf("Do(%s) = %v, %v; want an answer for %s", k, res, err, k)
			}
		})
	}
	wg.Wait()
	if n := runs.Load(); n != 1 {
		t.Errorf("runs = %d, want 1", n)
	}
	if want := []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("run keys = %v, want %v", got, want)
	}
	// A later call opens a new batch.
	if _, err := g.Do(context.Background(), "d"); err != nil {
		t.Fatal(err)
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("runs after a later call = %d, want 2", n)
	}
}

// TestCancelledCallerDoesNotFailTheBatch: one waiter giving up gets its
// context's error; the run goes on and the others get its result and error.
func TestCancelledCallerDoesNotFailTheBatch(t *testing.T) {
	release := make(chan struct{})
	boom := errors.New("boom")
	g := New(10*time.Millisecond, time.Minute, func(ctx context.Context, _ []string) (struct{}, error) {
		<-release
		return struct{}{}, errors.Join(boom, ctx.Err())
	})
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 2)
	go func() { _, err := g.Do(ctx, "a"); errs <- err }()
	go func() { _, err := g.Do(context.Background(), "b"); errs <- err }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled caller: err = %v, want context.Canceled", err)
	}
	close(release)
	err := <-errs
	if !errors.Is(err, boom) {
		t.Errorf("other caller: err = %v, want the run's error", err)
	}
	if errors.Is(err, context.Canceled) {
		t.Errorf("the run's context was cancelled by a caller: %v", err)
	}
}
