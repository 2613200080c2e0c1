package testbed

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"time"
)

// clusterEgress is the apiserver's "cluster" egress (the traffic it sends
// to nodes: nodes/proxy, logs, exec): an HTTP CONNECT proxy on a Unix socket
// (TCP would need mutual TLS: kube-apiserver v1.37 crashes on a TCP egress
// without a tlsConfig), as Konnectivity is in real clusters. It lets a test
// give a Node a routable address such as 10.200.0.7 — the apiserver refuses
// to proxy to loopback addresses — and answer for that node's kubelet with
// an http.Handler: the tunnel the apiserver opens to the address ends here,
// in TLS with the apiserver's own serving certificate (the apiserver has no
// --kubelet-certificate-authority, so it does not verify it). Targets
// without a handler are refused, so nothing ever leaves the machine.
type clusterEgress struct {
	ln    net.Listener
	proxy *http.Server
	tls   *tls.Config
	nodes *http.Server // serves the tunnels' TLS connections
	conns chanListener

	mu      sync.Mutex
	routes  map[string]http.Handler // "10.200.0.7:10250" -> the kubelet's handler
	targets map[net.Conn]string     // open tunnel -> its target
}

// egressSelectorConfig is the kube-apiserver --egress-selector-config-file
// that sends "cluster" traffic through the proxy on socket path addr.
func egressSelectorConfig(addr string) []byte {
	return fmt.Appendf(nil, `apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %s
`, addr)
}

func startClusterEgress(ctx context.Context, dir string, p *pki) (*clusterEgress, error) {
	cert, err := tls.X509KeyPair(p.ServingCert, p.ServingKey)
	if err != nil {
		return nil, fmt.Errorf("cluster egress certificate: %w", err)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "unix", filepath.Join(dir, "egress.sock"))
	if err != nil {
		return nil, fmt.Errorf("cluster egress proxy: %w", err)
	}
	e := &clusterEgress{
		ln:      ln,
		tls:     &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}},
		conns:   chanListener{conns: make(chan net.Conn), done: make(chan struct{}), addr: ln.Addr()},
		routes:  map[string]http.Handler{},
		targets: map[net.Conn]string{},
	}
	e.proxy = &http.Server{Handler: http.HandlerFunc(e.connect), ReadHeaderTimeout: 10 * time.Second}
	e.nodes = &http.Server{
		Handler:           http.HandlerFunc(e.serveNode),
		ReadHeaderTimeout: 10 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			e.mu.Lock()
			defer e.mu.Unlock()
			return context.WithValue(ctx, targetKey{}, e.targets[c])
		},
		ConnState: func(c net.Conn, s http.ConnState) {
			if s == http.StateClosed || s == http.StateHijacked {
				e.mu.Lock()
				delete(e.targets, c)
				e.mu.Unlock()
			}
		},
	}
	go func() { _ = e.proxy.Serve(ln) }()
	go func() { _ = e.nodes.Serve(&e.conns) }()
	return e, nil
}

type targetKey struct{}

// writeConfig writes the egress selector configuration into dir and returns
// the apiserver flag that loads it.
func (e *clusterEgress) writeConfig(dir string) (string, error) {
	path := filepath.Join(dir, "egress-selector.yaml")
	if err := writeFile(path, egressSelectorConfig(e.ln.Addr().String())); err != nil {
		return "", err
	}
	return "--egress-selector-config-file=" + path, nil
}

func (e *clusterEgress) route(target string, h http.Handler) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.routes[target] = h
}

func (e *clusterEgress) unroute(target string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.routes, target)
}

// connect answers the apiserver's CONNECT: with a handler for the target,
// the tunnel becomes a TLS connection to that handler; without one, 502, as
// a real network says when nothing listens there.
func (e *clusterEgress) connect(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		http.Error(w, "testbed cluster egress: CONNECT only", http.StatusMethodNotAllowed)
		return
	}
	e.mu.Lock()
	_, ok := e.routes[r.Host]
	e.mu.Unlock()
	if !ok {
		http.Error(w, fmt.Sprintf("testbed cluster egress: no route to %s", r.Host), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "testbed cluster egress: cannot hijack", http.StatusInternalServerError)
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		_ = conn.Close()
		return
	}
	tunnel := tls.Server(&bufferedConn{Conn: conn, r: buf.Reader}, e.tls)
	e.mu.Lock()
	e.targets[tunnel] = r.Host
	e.mu.Unlock()
	select {
	case e.conns.conns <- tunnel:
	case <-e.conns.done:
		_ = tunnel.Close()
	}
}

func (e *clusterEgress) serveNode(w http.ResponseWriter, r *http.Request) {
	target, _ := r.Context().Value(targetKey{}).(string)
	e.mu.Lock()
	h, ok := e.routes[target]
	e.mu.Unlock()
	if !ok {
		http.Error(w, fmt.Sprintf("testbed cluster egress: no handler for %s any more", target), http.StatusBadGateway)
		return
	}
	h.ServeHTTP(w, r)
}

func (e *clusterEgress) close() {
	if e == nil {
		return
	}
	_ = e.proxy.Close()
	_ = e.conns.Close()
	_ = e.nodes.Close()
}

// bufferedConn reads first what the CONNECT request's reader already
// buffered (the start of the TLS handshake may have come with it).
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// chanListener is a net.Listener fed with connections from a channel.
type chanListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	addr  net.Addr
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }
