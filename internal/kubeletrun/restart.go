package kubeletrun

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/procwatch"
)

// restartPoll is how often Restart looks for the new kubelet: it answers
// /healthz well under a second after it starts.
const restartPoll = 250 * time.Millisecond

// Systemd restarts the kubelet the way the node runs it.
type Systemd struct {
	// Systemctl is the systemctl program ("" is systemctl from PATH).
	Systemctl string
	// Unit is the kubelet's unit (UnitOf).
	Unit string
	// Root, when set, runs the host's own systemctl chrooted into this
	// folder: the node command in a Pod sees the host's file system there,
	// and its image has no systemctl (or the libraries one needs).
	Root string
}

// chrootSystemctl are where a host keeps systemctl, as paths inside Root.
var chrootSystemctl = []string{"/usr/bin/systemctl", "/bin/systemctl"}

// UnitOf returns the systemd unit that starts the kubelet from the node
// path of the unit file or drop-in holding its ExecStart=
// (nodefiles.Kubelet.Unit): /etc/systemd/system/kubelet.service.d/10-kubeadm.conf
// and /lib/systemd/system/kubelet.service are both kubelet.service, as is
// "" (a command line assembled from environment files alone).
func UnitOf(unitFile string) string {
	switch dir, base := path.Dir(unitFile), path.Base(unitFile); {
	case strings.HasSuffix(dir, ".service.d"):
		return strings.TrimSuffix(path.Base(dir), ".d")
	case strings.HasSuffix(base, ".service"):
		return base
	default:
		return "kubelet.service"
	}
}

// IsUnitFile reports whether a node path is a systemd unit file or drop-in,
// whose change systemd reads only after daemon-reload (an environment file
// is read at each start).
func IsUnitFile(p string) bool {
	for _, dir := range []string{"/etc/systemd/", "/run/systemd/", "/lib/systemd/", "/usr/lib/systemd/"} {
		if strings.HasPrefix(p, dir) {
			return true
		}
	}
	return false
}

// Restart restarts the kubelet (daemon-reload first when reload is set)
// and waits, up to wait, for a kubelet other than old to answer /healthz
// ok on e, which it returns: the restart is proven by the new process, not
// by systemctl's exit status.
func Restart(ctx context.Context, fs procwatch.FS, e Endpoint, s Systemd, reload bool, old *Running, wait time.Duration) (*Running, error) {
	if reload {
		if err := s.run(ctx, "daemon-reload"); err != nil {
			return nil, err
		}
	}
	if err := s.run(ctx, "restart", s.Unit); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	last := "nothing read yet"
	for {
		r, err := Observe(ctx, fs, e)
		if ctx.Err() != nil {
			// The wait ended during this look: what it saw is the
			// deadline, not the kubelet; report the look before.
			return nil, fmt.Errorf("the kubelet did not come back healthy within %s after systemctl restart %s: %s", wait, s.Unit, last)
		}
		switch {
		case err != nil:
			last = err.Error()
		case old != nil && r.PID == old.PID && r.StartTime == old.StartTime:
			last = fmt.Sprintf("the kubelet that ran before (pid %d) still runs", r.PID)
		case !r.Healthy():
			last = fmt.Sprintf("the new kubelet (pid %d) answers /healthz: %s", r.PID, r.Healthz)
		default:
			return r, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the kubelet did not come back healthy within %s after systemctl restart %s: %s", wait, s.Unit, last)
		case <-time.After(restartPoll):
		}
	}
}

func (s Systemd) run(ctx context.Context, args ...string) error {
	prog := s.Systemctl
	if prog == "" {
		prog = "systemctl"
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, prog, args...) //nolint:gosec // G204: systemctl from PATH, with the verbs above and the unit the kubelet's own files name
	if s.Root != "" {
		if err := s.chroot(cmd); err != nil {
			return err
		}
		prog = "chroot " + s.Root + " " + cmd.Path
	}
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", prog, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// chroot makes cmd run the host's systemctl inside s.Root: the path is
// looked up under Root (a program named in Systemctl is taken as a path
// inside it), and the child chroots before it execs, so the host's loader
// and libraries are the ones it finds.
func (s Systemd) chroot(cmd *exec.Cmd) error {
	candidates := chrootSystemctl
	if s.Systemctl != "" {
		candidates = []string{s.Systemctl}
	}
	for _, p := range candidates {
		if st, err := os.Stat(filepath.Join(s.Root, p)); err == nil && !st.IsDir() {
			cmd.Path, cmd.Err = p, nil
			cmd.Args[0] = p
			cmd.Dir = "/"
			cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: s.Root}
			return nil
		}
	}
	return fmt.Errorf("no systemctl under %s (looked for %s): the host's root file system must be mounted there", s.Root, strings.Join(candidates, ", "))
}
