// Command systemctl is the test bed nodes' systemctl: it hands its command
// line to the node's fake systemd (internal/testbed/fakesystemd) over
// /run/fakesystemd.sock ($FAKESYSTEMD_SOCKET overrides it), prints the
// reply and exits with its status. It is built statically (CGO_ENABLED=0)
// so that it runs chrooted into a node's root, which holds no libc, as the
// node step's `--chroot-systemctl` runs the host's systemctl.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/testbed/fakesystemd/wire"
)

// timeout bounds one call: a restart waits for the old process to exit.
const timeout = 2 * time.Minute

func main() { os.Exit(run()) }

func run() int {
	path := wire.SocketPath
	if p := os.Getenv(wire.SocketEnv); p != "" {
		path = p
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := wire.Dial(ctx, path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "systemctl (test bed): the node's fake systemd does not answer at %s: %v\n", path, err)
		return 1
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	if err := json.NewEncoder(conn).Encode(wire.Request{Args: os.Args[1:]}); err != nil {
		fmt.Fprintf(os.Stderr, "systemctl (test bed): send to %s: %v\n", path, err)
		return 1
	}
	var reply wire.Reply
	if err := json.NewDecoder(bufio.NewReader(conn)).Decode(&reply); err != nil {
		fmt.Fprintf(os.Stderr, "systemctl (test bed): no reply from %s: %v\n", path, err)
		return 1
	}
	fmt.Fprint(os.Stdout, reply.Stdout)
	fmt.Fprint(os.Stderr, reply.Stderr)
	return reply.Code
}
