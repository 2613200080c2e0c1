package routes

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

// TestMutationsBounded: the route controller starts a create per Node at
// once (up to 200); at most maxMutations EC2 changes are in flight, and
// every route is still created.
func TestMutationsBounded(t *testing.T) {
	e := newEmu(t, emuOptions{})
	a := e.node(emuA)
	e.list()
	var inFlight, peak atomic.Int32
	create := e.m.ec2.CreateRoute
	e.m.ec2.CreateRoute = func(ctx context.Context, in *ec2.CreateRouteInput, o ...func(*ec2.Options)) (*ec2.CreateRouteOutput, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(5 * time.Millisecond) // long enough for the others to pile up
		return create(ctx, in, o...)
	}
	const routes = 4 * maxMutations
	var wg sync.WaitGroup
	errs := make(chan error, routes)
	for i := range routes {
		wg.Go(func() { errs <- e.create(a, fmt.Sprintf("10.244.%d.0/24", 100+i)) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if p := peak.Load(); p > maxMutations || p < 2 {
		t.Errorf("peak CreateRoute calls in flight = %d, want 2..%d", p, maxMutations)
	}
	wantEq(t, "CreateRoute calls", e.srv.Calls("ec2", "CreateRoute"), routes)
}
