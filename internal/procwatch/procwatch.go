package procwatch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// ErrNoListener is returned by ListenerOf when no socket listens on the port.
var ErrNoListener = errors.New("no process listens on the port")

// tcpListen is TCP_LISTEN in the kernel's tcp_states.h, the "st" column of
// /proc/net/tcp{,6}.
const tcpListen = 0x0A

// Process identifies one process across PID reuse.
type Process struct {
	PID       int    `json:"pid"`
	StartTime uint64 `json:"startTime"` // clock ticks since boot, /proc/<pid>/stat field 22
	Comm      string `json:"comm"`
}

// String names p in errors and logs with all three identifying fields.
func (p Process) String() string {
	return fmt.Sprintf("pid %d (%s, start time %d)", p.PID, p.Comm, p.StartTime)
}

// FS reads processes and sockets from one proc mount.
type FS struct {
	proc procfs.FS
}

// New returns an FS reading the proc filesystem mounted at procRoot; ""
// means /proc.
func New(procRoot string) (FS, error) {
	if procRoot == "" {
		procRoot = procfs.DefaultMountPoint
	}
	p, err := procfs.NewFS(procRoot)
	if err != nil {
		return FS{}, fmt.Errorf("open proc filesystem %s: %w", procRoot, err)
	}
	return FS{proc: p}, nil
}

// ListenerOf returns the process that has a TCP socket in LISTEN state on
// port, IPv4 or IPv6, on any local address, in the caller's network
// namespace. It returns ErrNoListener when no socket listens on the port, and
// an error naming both processes when two different processes hold
// listening sockets on it (SO_REUSEPORT, or a socket inherited across fork).
func (fs FS) ListenerOf(port int) (Process, error) {
	if port < 1 || port > 65535 {
		return Process{}, fmt.Errorf("port %d is not a TCP port", port)
	}
	targets, err := fs.listenTargets(port)
	if err != nil {
		return Process{}, err
	}
	if len(targets) == 0 {
		return Process{}, fmt.Errorf("port %d: %w", port, ErrNoListener)
	}
	owners, err := fs.owners(targets)
	if err != nil {
		return Process{}, fmt.Errorf("port %d: %w", port, err)
	}
	switch len(owners) {
	case 1:
		return owners[0], nil
	case 0:
		// The socket may have closed during the walk; only then is "no
		// listener" true. Otherwise a listener exists that we cannot see,
		// and claiming there is none would let the caller act as if
		// kube-controller-manager were not running.
		if again, err := fs.listenTargets(port); err == nil && len(again) == 0 {
			return Process{}, fmt.Errorf("port %d: %w", port, ErrNoListener)
		}
		return Process{}, fmt.Errorf("port %d has a listening socket but no readable process holds it "+
			"(run as root in the host PID namespace)", port)
	default:
		return Process{}, fmt.Errorf("port %d is listened on by more than one process: %s and %s",
			port, owners[0], owners[1])
	}
}

// listenTargets returns the fd link targets ("socket:[<inode>]") of the
// sockets listening on port.
func (fs FS) listenTargets(port int) (map[string]bool, error) {
	// A wildcard listener from Go (kube-controller-manager's default
	// --bind-address 0.0.0.0 included) is usually one dual-stack IPv6
	// socket, listed only in tcp6, so both tables are needed even for IPv4.
	// procfs marks NetTCP deprecated in favour of netlink, but netlink cannot
	// be pointed at another proc mount.
	v4, err := fs.proc.NetTCP() //nolint:staticcheck // SA1019: see above, netlink reads only the caller's own namespace
	if err != nil {
		return nil, fmt.Errorf("read TCP sockets: %w", err)
	}
	v6, err := fs.proc.NetTCP6() //nolint:staticcheck // SA1019: see above, netlink reads only the caller's own namespace
	// A kernel booted with ipv6.disable=1 has no tcp6 table.
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read TCP6 sockets: %w", err)
	}
	targets := map[string]bool{}
	if port < 0 { // no socket has one (and uint64 below would wrap it)
		return targets, nil
	}
	for _, s := range slices.Concat(v4, v6) {
		if s.St == tcpListen && s.LocalPort == uint64(port) {
			targets["socket:["+strconv.FormatUint(s.Inode, 10)+"]"] = true
		}
	}
	return targets, nil
}

// owners returns the processes holding a file descriptor on any of targets,
// at most one entry per process.
func (fs FS) owners(targets map[string]bool) ([]Process, error) {
	procs, err := fs.proc.AllProcs()
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var found []Process
	for _, p := range procs {
		// A process that exits mid-walk, or whose fds we may not read, is
		// skipped: ListenerOf reports it if that leaves a listener unowned.
		links, err := p.FileDescriptorTargets()
		if err != nil || !slices.ContainsFunc(links, func(l string) bool { return targets[l] }) {
			continue
		}
		st, err := p.Stat()
		if err != nil {
			continue
		}
		found = append(found, Process{PID: p.PID, StartTime: st.Starttime, Comm: st.Comm})
	}
	return found, nil
}

// Alive reports whether p still runs: the PID exists, has the same start
// time, and is not a zombie or dead (state Z or X). A stopped or traced
// process (state T or t) counts as alive.
func (fs FS) Alive(p Process) (bool, error) {
	// A zero Process would read as "gone" for every PID, which is the unsafe
	// answer; only a Process from ListenerOf is meaningful here.
	if p.PID <= 0 || p.StartTime == 0 {
		return false, fmt.Errorf("%s does not identify a process", p)
	}
	proc, err := fs.proc.Proc(p.PID)
	var st procfs.ProcStat
	if err == nil {
		st, err = proc.Stat()
	}
	switch {
	// ESRCH: the task was reaped between finding its directory and reading
	// its stat file.
	case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ESRCH):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read state of %s: %w", p, err)
	}
	// A different start time means the PID was reused. A zombie has exited
	// and runs no more code, though its entry stays until it is reaped.
	return st.Starttime == p.StartTime && !slices.Contains([]string{"Z", "X", "x"}, st.State), nil
}

// WaitExit polls Alive every poll until p is gone and returns the time it was
// first seen gone. It returns ctx's error, wrapped, if ctx ends first, and
// Alive's error if Alive fails.
func (fs FS) WaitExit(ctx context.Context, p Process, poll time.Duration) (time.Time, error) {
	if poll <= 0 {
		return time.Time{}, fmt.Errorf("poll interval %s is not positive", poll)
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		alive, err := fs.Alive(p)
		if err != nil {
			return time.Time{}, err
		}
		if !alive {
			return time.Now(), nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("wait for %s to exit: %w", p, ctx.Err())
		case <-tick.C:
		}
	}
}
