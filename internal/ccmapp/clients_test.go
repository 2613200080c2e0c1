package ccmapp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	restclient "k8s.io/client-go/rest"
	"k8s.io/controller-manager/pkg/clientbuilder"
)

// apiServer answers every request after release is closed (or at once
// when release is nil), counting the requests open at the same time;
// watches answer at once.
type apiServer struct {
	*httptest.Server
	open, maxOpen atomic.Int64
	release       chan struct{}
}

func newAPIServer(t *testing.T, release chan struct{}) *apiServer {
	s := &apiServer{release: release}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" {
			_, _ = io.WriteString(w, `{"type":"ADDED","object":{"kind":"Node","apiVersion":"v1","metadata":{"name":"n"}}}`)
			return
		}
		n := s.open.Add(1)
		defer s.open.Add(-1)
		for m := s.maxOpen.Load(); n > m && !s.maxOpen.CompareAndSwap(m, n); m = s.maxOpen.Load() {
		}
		if s.release != nil {
			<-s.release
		} else {
			time.Sleep(5 * time.Millisecond)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"kind":"Node","apiVersion":"v1","metadata":{"name":"n"}}`)
	}))
	t.Cleanup(s.Close)
	return s
}

// boundedHTTPClient is the HTTP client of a controller client that the
// bounded builder makes for srv.
func boundedHTTPClient(t *testing.T, srv *apiServer, max int) *http.Client {
	t.Helper()
	b := boundedClientBuilder{inner: clientbuilder.SimpleControllerClientBuilder{ClientConfig: &restclient.Config{Host: srv.URL, QPS: -1}}, max: max}
	cfg, err := b.Config("route-controller")
	if err != nil {
		t.Fatal(err)
	}
	hc, err := restclient.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return hc
}

func get(ctx context.Context, hc *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	if err == nil && resp.StatusCode != http.StatusOK {
		err = errors.New(resp.Status)
	}
	return err
}

// TestControllerClientBoundsRequestsInFlight: a burst of 300 requests,
// as the route controller sends, reaches the apiserver at most max at a
// time, and every one completes.
func TestControllerClientBoundsRequestsInFlight(t *testing.T) {
	const max, burst = 8, 300
	srv := newAPIServer(t, nil)
	hc := boundedHTTPClient(t, srv, max)
	var wg sync.WaitGroup
	errs := make(chan error, burst)
	for range burst {
		wg.Go(func() {
			if err := get(context.Background(), hc, srv.URL+"/api/v1/nodes/n"); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("request failed: %v", err)
	}
	if got := srv.maxOpen.Load(); got > max || got < 2 {
		t.Errorf("requests open at once = %d, want 2..%d", got, max)
	}
}

// TestControllerClientBoundLeavesWatchesAndHonoursCancel: with every slot
// taken, a watch still goes through, and a request whose context ends
// while it waits for a slot returns the context's error.
func TestControllerClientBoundLeavesWatchesAndHonoursCancel(t *testing.T) {
	const max = 4
	release := make(chan struct{})
	srv := newAPIServer(t, release)
	hc := boundedHTTPClient(t, srv, max)
	var wg sync.WaitGroup
	for range max {
		wg.Go(func() {
			if err := get(context.Background(), hc, srv.URL+"/api/v1/nodes/n"); err != nil {
				t.Errorf("held request: %v", err)
			}
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for srv.open.Load() < max && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := srv.open.Load(); got != max {
		t.Fatalf("requests open = %d, want %d", got, max)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := get(ctx, hc, srv.URL+"/api/v1/nodes?watch=true"); err != nil {
		t.Errorf("watch with every slot taken: %v", err)
	}

	waitCtx, waitCancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer waitCancel()
	if err := get(waitCtx, hc, srv.URL+"/api/v1/nodes/n"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("request waiting for a slot past its deadline: err = %v, want %v", err, context.DeadlineExceeded)
	}
	if got := srv.open.Load(); got != max {
		t.Errorf("requests open at the apiserver = %d, want %d (the waiting one must not have been sent)", got, max)
	}
	close(release)
	wg.Wait()
}
