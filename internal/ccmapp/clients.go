package ccmapp

import (
	"io"
	"net/http"
	"strings"
	"sync"

	clientset "k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"
)

// MaxInFlightPerController bounds the Kubernetes API requests one
// controller's client has open at once (watches excepted).
//
// The library's route controller patches every Node's NetworkUnavailable
// condition in a goroutine of its own, 1,000 at once in a 1,000-node
// cluster, and a --kube-api-burst sized for such a cluster lets them all
// through. An HTTP/2 connection carries 100 streams until the server's
// settings arrive (then 250 to 1,000), so client-go dialled hundreds of
// extra TLS connections for the burst, each with its buffers and
// handshake: in the route bench (test/bench, 1,000 Nodes) the CCM's peak
// RSS was 169-185 MiB, 101-109 MiB with this bound. 32 requests in flight
// carry 3,200 requests/s at 10 ms each, more than any --kube-api-qps a
// controller is given, so the bound narrows bursts without slowing them.
const MaxInFlightPerController = 32

// boundedClientBuilder builds the controllers' clients like the one it
// wraps, each bounded to max requests in flight.
type boundedClientBuilder struct {
	inner cloudprovider.ControllerClientBuilder
	max   int
}

var _ cloudprovider.ControllerClientBuilder = boundedClientBuilder{}

// Config is the wrapped builder's config with the in-flight bound.
func (b boundedClientBuilder) Config(name string) (*restclient.Config, error) {
	cfg, err := b.inner.Config(name)
	if err != nil {
		return nil, err
	}
	max := b.max
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return newInFlightLimiter(rt, max) })
	return cfg, nil
}

// ConfigOrDie is Config, exiting on an error as the library's builders do.
func (b boundedClientBuilder) ConfigOrDie(name string) *restclient.Config {
	cfg, err := b.Config(name)
	if err != nil {
		klog.Fatal(err)
	}
	return cfg
}

// Client is a clientset on Config.
func (b boundedClientBuilder) Client(name string) (clientset.Interface, error) {
	cfg, err := b.Config(name)
	if err != nil {
		return nil, err
	}
	return clientset.NewForConfig(cfg)
}

// ClientOrDie is Client, exiting on an error as the library's builders do.
func (b boundedClientBuilder) ClientOrDie(name string) clientset.Interface {
	c, err := b.Client(name)
	if err != nil {
		klog.Fatal(err)
	}
	return c
}

// inFlightLimiter holds a request until fewer than cap(slots) are open; a
// request stays open until its response body is closed (client-go closes
// every body it reads). Watches pass unbounded: they stay open for minutes.
type inFlightLimiter struct {
	next  http.RoundTripper
	slots chan struct{}
}

func newInFlightLimiter(next http.RoundTripper, max int) *inFlightLimiter {
	return &inFlightLimiter{next: next, slots: make(chan struct{}, max)}
}

// RoundTrip implements http.RoundTripper.
func (l *inFlightLimiter) RoundTrip(req *http.Request) (*http.Response, error) {
	if isWatch(req) {
		return l.next.RoundTrip(req)
	}
	select {
	case l.slots <- struct{}{}:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	resp, err := l.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		<-l.slots
		return resp, err
	}
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: func() { <-l.slots }}
	return resp, nil
}

// WrappedRoundTripper lets client-go reach the transport beneath
// (k8s.io/apimachinery/pkg/util/net.RoundTripperWrapper).
func (l *inFlightLimiter) WrappedRoundTripper() http.RoundTripper { return l.next }

// isWatch reports whether req is a watch (?watch=true or a /watch/ path).
func isWatch(req *http.Request) bool {
	switch req.URL.Query().Get("watch") {
	case "true", "1":
		return true
	}
	return strings.Contains(req.URL.Path, "/watch/")
}

// releasingBody frees its request's slot once, when closed.
type releasingBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}
