package fakekubelet

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
)

// serviceStopGrace is how long a stopped fake kubelet gets between SIGTERM
// and SIGKILL (it exits on SIGTERM at once).
const serviceStopGrace = 5 * time.Second

// startScript starts the fake kubelet as systemd starts kubelet.service
// from kubeadm's drop-in: the environment file read afresh (an optional
// one, as kubeadm's EnvironmentFile=-), then its $KUBELET_KUBEADM_ARGS and
// $KUBELET_EXTRA_ARGS split into words. exec keeps the pid: the process
// systemd would watch is the kubelet itself. The same semantics as the
// script Systemctl writes.
const startScript = `KUBELET_KUBEADM_ARGS= KUBELET_EXTRA_ARGS=
if [ -e "$1" ]; then . "$1"; fi
exec "$2" $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS`

// Service runs the fake kubelet as systemd runs kubelet.service, for a
// fake systemd (internal/testbed/fakesystemd.Units) to start, stop and
// restart: each start reads the node's kubeadm-flags.env afresh. The fake
// kubelet is a child of the test process (it dies with it) whoever asked
// for the start. Its methods are safe for concurrent use.
type Service struct {
	program string
	env     []string
	envFile string
	logPath string

	mu     sync.Mutex
	proc   *childproc.Process
	starts int
	delay  time.Duration
}

// SetStartDelay makes each fake kubelet started from now on answer
// /healthz only d after its start, as a real one takes a moment.
func (s *Service) SetStartDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// NewService returns the service of a fake kubelet serving healthz
// (answering healthz, see Program) on port, started from envFile
// (<root>/var/lib/kubelet/kubeadm-flags.env). Nothing runs until Start.
// The running fake kubelet is stopped when the test ends.
func NewService(t *testing.T, port int, healthz, envFile string) *Service {
	t.Helper()
	kubelet, env := Program(t, "kubelet", healthz, port)
	s := &Service{
		program: kubelet,
		env:     env,
		envFile: envFile,
		logPath: filepath.Join(t.TempDir(), "kubelet.log"),
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	return s
}

// Start starts the fake kubelet unless one runs.
func (s *Service) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil && !s.proc.Exited() {
		return nil
	}
	return s.startLocked(ctx)
}

// startLocked starts the fake kubelet; its life is not the caller's
// context's (systemd's services outlive systemctl).
func (s *Service) startLocked(ctx context.Context) error {
	cmd := exec.CommandContext(context.WithoutCancel(ctx), "/bin/sh", "-c", startScript, "sh", s.envFile, s.program)
	cmd.Env = append(os.Environ(), s.env...)
	if s.delay > 0 {
		cmd.Env = append(cmd.Env, envStartDelay+"="+s.delay.String())
	}
	p, err := childproc.StartLogged("kubelet", cmd, s.logPath)
	if err != nil {
		return err
	}
	s.proc = p
	s.starts++
	return nil
}

// Stop stops the fake kubelet (SIGTERM, then SIGKILL) and waits for it to
// exit; nothing running is fine.
func (s *Service) Stop(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopLocked()
}

func (s *Service) stopLocked() error {
	if s.proc == nil {
		return nil
	}
	if err := s.proc.Stop(serviceStopGrace); err != nil {
		return fmt.Errorf("stop the fake kubelet: %w", err)
	}
	s.proc = nil
	return nil
}

// Restart stops the running fake kubelet, waits for it to exit and starts
// a new one from the environment file as it is now.
func (s *Service) Restart(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stopLocked(); err != nil {
		return err
	}
	return s.startLocked(ctx)
}

// Active reports whether a fake kubelet runs.
func (s *Service) Active() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc != nil && !s.proc.Exited()
}

// PID is the running fake kubelet's process ID, 0 when none runs.
func (s *Service) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.proc.Exited() {
		return 0
	}
	return s.proc.Pid()
}

// Starts counts the fake kubelets started so far.
func (s *Service) Starts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.starts
}

// LogPath is the fake kubelets' output, one header line per start.
func (s *Service) LogPath() string { return s.logPath }
