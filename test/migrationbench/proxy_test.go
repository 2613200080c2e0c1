//go:build linux

package migrationbench

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/awsccmctl/awsccmctl/internal/migrate"
)

// countingProxy stands between the CLI and the apiserver: the CLI's
// kubeconfig points at it (plain HTTP on loopback), it forwards with the
// admin's credentials and counts each request and the bytes of its
// response as they cross the wire (gzip-compressed where the apiserver
// compresses, as a client sees them; a watch's bytes as its events
// arrive). The apiserver's own metrics count every client, the bench's
// report writes included; this counts the CLI alone.
type countingProxy struct {
	srv  *http.Server
	addr string

	mu     sync.Mutex
	counts map[string]*traffic
	// media counts the responses by media type (client-go asks for
	// protobuf for built-in kinds).
	media map[string]int64
}

// traffic is what one kind of request ("LIST nodes") cost: Bytes on the
// wire, Decoded once a gzip-compressed body is inflated (the apiserver
// compresses large responses for clients that accept it, as client-go
// does), which is what the apiserver serialised and the client decodes.
type traffic struct {
	Requests int64
	Bytes    int64
	Decoded  int64
}

func startProxy(ctx context.Context, cfg *rest.Config) (*countingProxy, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	p := &countingProxy{counts: map[string]*traffic{}, media: map[string]int64{}}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport:     rt,
		FlushInterval: -1, // watches stream
		ModifyResponse: func(resp *http.Response) error {
			t := p.entry(requestKind(resp.Request))
			media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
			p.mu.Lock()
			t.Requests++
			p.media[media]++
			p.mu.Unlock()
			resp.Body = p.count(resp, t)
			return nil
		},
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.addr = ln.Addr().String()
	p.srv = &http.Server{Handler: rp, ReadHeaderTimeout: 0}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func (p *countingProxy) entry(kind string) *traffic {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.counts[kind]
	if t == nil {
		t = &traffic{}
		p.counts[kind] = t
	}
	return t
}

func (p *countingProxy) close() { _ = p.srv.Close() }

// mediaTypes says how many responses came in each media type so far.
func (p *countingProxy) mediaTypes() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var parts []string
	for _, m := range slices.Sorted(maps.Keys(p.media)) {
		parts = append(parts, fmt.Sprintf("%s %d", m, p.media[m]))
	}
	return strings.Join(parts, ", ")
}

// snapshot copies the counts so far.
func (p *countingProxy) snapshot() usage {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := usage{}
	for k, t := range p.counts {
		out[k] = *t
	}
	return out
}

// writeKubeconfig writes a kubeconfig that reaches the apiserver through
// the proxy.
func (p *countingProxy) writeKubeconfig(path string) error {
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: bench
  cluster:
    server: http://%s
users:
- name: bench
  user: {}
contexts:
- name: bench
  context: {cluster: bench, user: bench}
current-context: bench
`, p.addr)
	return os.WriteFile(path, []byte(cfg), 0o600)
}

// count wraps resp's body so that what the client reads is counted; a
// gzip body is also inflated on the side to count its decoded bytes.
func (p *countingProxy) count(resp *http.Response, t *traffic) io.ReadCloser {
	b := &countingBody{ReadCloser: resp.Body, p: p, wire: &t.Bytes}
	if resp.Header.Get("Content-Encoding") != "gzip" {
		b.decoded = &t.Decoded
		return b
	}
	pr, pw := io.Pipe()
	b.side = pw
	go func() {
		n := int64(0)
		if gz, err := gzip.NewReader(pr); err == nil {
			n, _ = io.Copy(io.Discard, gz) //nolint:gosec // G110: the test bed's apiserver's own responses, counted and discarded
		}
		_, _ = io.Copy(io.Discard, pr) // never block the client's reads
		p.mu.Lock()
		t.Decoded += n
		p.mu.Unlock()
	}()
	return b
}

type countingBody struct {
	io.ReadCloser
	p             *countingProxy
	wire, decoded *int64
	side          *io.PipeWriter // the inflating side of a gzip body
}

func (b *countingBody) Read(buf []byte) (int, error) {
	n, err := b.ReadCloser.Read(buf)
	if n > 0 {
		b.p.mu.Lock()
		*b.wire += int64(n)
		if b.decoded != nil {
			*b.decoded += int64(n)
		}
		b.p.mu.Unlock()
		if b.side != nil {
			_, _ = b.side.Write(buf[:n])
		}
	}
	if err != nil && b.side != nil {
		_ = b.side.Close()
	}
	return n, err
}

func (b *countingBody) Close() error {
	if b.side != nil {
		_ = b.side.Close()
	}
	return b.ReadCloser.Close()
}

// requestKind names a request as the apiserver's metrics do: verb and
// resource ("LIST nodes", "GET configmaps", "WATCH services", "PUT
// configmaps", "GET nodes/proxy"), or the path of a non-resource request.
func requestKind(r *http.Request) string {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		rest = parts[3:]
	default:
		return r.Method + " " + r.URL.Path
	}
	if len(rest) >= 2 && rest[0] == "namespaces" && len(rest) > 2 {
		rest = rest[2:]
	}
	if len(rest) == 0 {
		return r.Method + " " + r.URL.Path // discovery
	}
	resource, named := rest[0], len(rest) >= 2
	if resource == "configmaps" && named {
		// The migration's own: its journal, and the nodes' reports the
		// kubelet gate reads.
		switch {
		case rest[1] == migrate.JournalName:
			resource += " (journal)"
		case strings.HasPrefix(rest[1], migrate.ReportsName):
			resource += " (reports)"
		}
	}
	if len(rest) >= 3 {
		resource += "/" + rest[2]
	}
	verb := r.Method
	switch {
	case r.Method == http.MethodGet && r.URL.Query().Get("watch") == "true":
		verb = "WATCH"
	case r.Method == http.MethodGet && !named:
		verb = "LIST"
	}
	return verb + " " + resource
}

// usage is traffic by kind of request.
type usage map[string]traffic

// since returns what u counted after before.
func (u usage) since(before usage) usage {
	out := usage{}
	for k, t := range u {
		d := traffic{Requests: t.Requests - before[k].Requests, Bytes: t.Bytes - before[k].Bytes, Decoded: t.Decoded - before[k].Decoded}
		if d.Requests > 0 || d.Bytes > 0 {
			out[k] = d
		}
	}
	return out
}

func (u usage) total() traffic {
	var out traffic
	for _, t := range u {
		out.Requests += t.Requests
		out.Bytes += t.Bytes
		out.Decoded += t.Decoded
	}
	return out
}

// String lists each kind, the costliest in decoded bytes first.
func (u usage) String() string {
	keys := slices.Collect(maps.Keys(u))
	slices.SortFunc(keys, func(a, b string) int {
		if u[a].Decoded != u[b].Decoded {
			return int(u[b].Decoded - u[a].Decoded)
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d (%s)", k, u[k].Requests, u[k].bytes()))
	}
	return strings.Join(parts, ", ")
}

// bytes says the decoded bytes, and the wire bytes when they differ.
func (t traffic) bytes() string {
	if t.Decoded == t.Bytes {
		return mib(t.Bytes)
	}
	return fmt.Sprintf("%s, %s on the wire", mib(t.Decoded), mib(t.Bytes))
}

func mib(b int64) string { return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20)) }
