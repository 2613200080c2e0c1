// Package wire is the protocol between the test bed's fake systemd
// (internal/testbed/fakesystemd) and its systemctl client: one JSON
// request line, one JSON reply line, over a unix socket. It is a package
// of its own so that the static client links nothing else.
package wire

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// SocketPath is where the client looks for the server, as a node path:
// inside a chroot into the node's root it is <root>/run/fakesystemd.sock.
const SocketPath = "/run/fakesystemd.sock"

// SocketEnv names the variable that, when set, overrides SocketPath for
// the client (a test that runs it outside a chroot points it at the node's
// socket).
const SocketEnv = "FAKESYSTEMD_SOCKET"

// Request is systemctl's command line, without the program name.
type Request struct {
	Args []string `json:"args"`
}

// Reply is what systemctl prints and its exit status.
type Reply struct {
	Code   int    `json:"code"`
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
}

// maxSocketPath is the longest path a unix socket address holds on Linux
// (sun_path is 108 bytes with its terminating NUL).
const maxSocketPath = 107

// Reachable returns a path by which a socket at path can be bound or
// dialled: path itself when it fits in a socket address, else
// /proc/self/fd/<n>/<name> through an open descriptor of its folder
// (test folders under long test names do not fit). release closes that
// descriptor; call it once the bind or dial is done.
func Reachable(path string) (addr string, release func(), err error) {
	if len(path) <= maxSocketPath {
		return path, func() {}, nil
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return "", nil, fmt.Errorf("socket %s: %w", path, err)
	}
	addr = "/proc/self/fd/" + strconv.Itoa(int(dir.Fd())) + "/" + filepath.Base(path)
	if len(addr) > maxSocketPath {
		_ = dir.Close()
		return "", nil, fmt.Errorf("socket %s: its name is too long even through /proc/self/fd", path)
	}
	return addr, func() { _ = dir.Close() }, nil
}

// Dial connects to the socket at path.
func Dial(ctx context.Context, path string) (net.Conn, error) {
	addr, release, err := Reachable(path)
	if err != nil {
		return nil, err
	}
	defer release()
	return (&net.Dialer{}).DialContext(ctx, "unix", addr)
}
