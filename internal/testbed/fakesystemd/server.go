package fakesystemd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/testbed/fakesystemd/wire"
)

// callTimeout bounds one call's handler.
const callTimeout = 90 * time.Second

// Reply is what systemctl prints and its exit status.
type Reply = wire.Reply

// Call is one systemctl command line the server answered.
type Call struct {
	// Args is the command line as given, without the program name.
	Args []string
	// Verb is the first word of Args that is not a flag ("restart").
	Verb string
	// Units are the words after Verb, a bare name given the ".service"
	// suffix as systemctl does ("kubelet" is "kubelet.service").
	Units []string
	// At is when the call arrived.
	At time.Time
	// Reply is what the handler answered.
	Reply Reply
}

// Handler answers one call. The server calls it for one call at a time.
type Handler func(ctx context.Context, c Call) Reply

// Options configures Start.
type Options struct {
	// Root is the node's root folder (required): the server listens on
	// Root + wire.SocketPath and logs to Root/var/log/fakesystemd.log.
	Root string
	// Handler answers the calls (required); Units builds one.
	Handler Handler
	// Logf, if set, receives a line per call.
	Logf func(format string, args ...any)
}

// Server is one node's fake systemd.
type Server struct {
	opts    Options
	path    string
	logPath string
	ln      net.Listener
	wg      sync.WaitGroup
	serve   sync.Mutex // one handler call at a time, as systemd queues jobs

	mu    sync.Mutex
	calls []Call

	stopOnce sync.Once
}

// Start listens on Root + wire.SocketPath (a socket left there by an
// earlier run is replaced) and serves until Stop.
func Start(opts Options) (*Server, error) {
	if opts.Root == "" || !filepath.IsAbs(opts.Root) {
		return nil, fmt.Errorf("fakesystemd: Root must be an absolute path, got %q", opts.Root)
	}
	if opts.Handler == nil {
		return nil, errors.New("fakesystemd: Handler is required")
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	s := &Server{
		opts:    opts,
		path:    filepath.Join(opts.Root, filepath.FromSlash(wire.SocketPath)),
		logPath: filepath.Join(opts.Root, "var", "log", "fakesystemd.log"),
	}
	for _, d := range []string{filepath.Dir(s.path), filepath.Dir(s.logPath)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("fakesystemd: %w", err)
		}
	}
	if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("fakesystemd: %w", err)
	}
	addr, release, err := wire.Reachable(s.path)
	if err != nil {
		return nil, fmt.Errorf("fakesystemd: %w", err)
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "unix", addr)
	release()
	if err != nil {
		return nil, fmt.Errorf("fakesystemd: listen on %s: %w", s.path, err)
	}
	// The socket file is the node's: the listener must not unlink it
	// through the /proc/self/fd name, which is gone by then.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	s.ln = ln
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// SocketPath is the socket's path on the host.
func (s *Server) SocketPath() string { return s.path }

// LogPath is the log of every call, one line each.
func (s *Server) LogPath() string { return s.logPath }

// Stop closes the socket, waits for the calls in progress and removes the
// socket file. It is safe to call more than once.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		_ = s.ln.Close()
		s.wg.Wait()
		_ = os.Remove(s.path)
	})
}

// Calls returns the calls answered so far, oldest first.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return // closed by Stop
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.handle(conn)
		}()
	}
}

func (s *Server) handle(conn net.Conn) {
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(callTimeout + 10*time.Second))
	var req wire.Request
	if err := json.NewDecoder(bufio.NewReader(conn)).Decode(&req); err != nil {
		s.opts.Logf("fakesystemd %s: bad request: %v", s.opts.Root, err)
		return
	}
	c := ParseCall(req.Args)
	c.At = time.Now()
	s.serve.Lock()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	c.Reply = s.opts.Handler(ctx, c)
	cancel()
	s.serve.Unlock()
	s.record(c)
	_ = json.NewEncoder(conn).Encode(c.Reply)
}

// record keeps the call and logs it.
func (s *Server) record(c Call) {
	line := fmt.Sprintf("%s systemctl %s -> %d%s%s", c.At.UTC().Format(time.RFC3339Nano), strings.Join(c.Args, " "),
		c.Reply.Code, oneLine(c.Reply.Stdout), oneLine(c.Reply.Stderr))
	s.opts.Logf("fakesystemd %s: %s", s.opts.Root, line)
	s.mu.Lock()
	s.calls = append(s.calls, c)
	if f, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
		_, _ = fmt.Fprintln(f, line)
		_ = f.Close()
	}
	s.mu.Unlock()
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return " " + strings.ReplaceAll(s, "\n", " | ")
}

// ParseCall splits a systemctl command line into its verb and units:
// flags (words starting with "-") are skipped, the first other word is
// the verb and the rest are units, a name without a suffix getting
// ".service".
func ParseCall(args []string) Call {
	c := Call{Args: slices.Clone(args)}
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "-"):
		case c.Verb == "":
			c.Verb = a
		case !strings.Contains(a, "."):
			c.Units = append(c.Units, a+".service")
		default:
			c.Units = append(c.Units, a)
		}
	}
	return c
}
