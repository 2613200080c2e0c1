//go:build linux

package kubeletrun

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
	"github.com/awsccmctl/awsccmctl/internal/testbed/fakekubelet"
)

// fakeSystemd is a systemctl running a fake kubelet on port with flags,
// from an environment file as systemd would.
func fakeSystemd(t *testing.T, port int, healthz string, flags string) (systemctl, log string) {
	t.Helper()
	envFile := filepath.Join(t.TempDir(), "kubelet.env")
	if err := os.WriteFile(envFile, []byte("KUBELET_KUBEADM_ARGS="+strconv.Quote(flags)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return fakekubelet.Systemctl(t, port, healthz, envFile)
}

// TestRestartWaitsForTheNewKubelet: Restart runs daemon-reload and restart
// and returns the new kubelet, another process that runs the new flags and
// answers /healthz ok.
func TestRestartWaitsForTheNewKubelet(t *testing.T) {
	ctx := context.Background()
	port, err := childproc.FreePort(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e := Endpoint{Address: "127.0.0.1", Port: port}
	fs := newFS(t)
	systemctl, log := fakeSystemd(t, port, "ok", "--cloud-provider=external")
	s := Systemd{Systemctl: systemctl, Unit: "kubelet.service"}
	if err := s.run(ctx, "start"); err != nil {
		t.Fatal(err)
	}
	old, err := Restart(ctx, fs, e, Systemd{Systemctl: "true"}, false, nil, 10*time.Second) // only waits for the first
	if err != nil {
		t.Fatal(err)
	}
	r, err := Restart(ctx, fs, e, s, true, old, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if r.PID == old.PID || r.CloudProvider != "external" || !r.Healthy() {
		t.Errorf("Restart = %+v, want a new healthy kubelet (the old one was pid %d)", *r, old.PID)
	}
	calls, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(calls); got != "start\ndaemon-reload\nrestart kubelet.service\n" {
		t.Errorf("systemctl calls %q, want start, daemon-reload, restart kubelet.service", got)
	}
}

// TestRestartFailsOnAnUnhealthyKubelet: a kubelet that comes back but does
// not answer /healthz ok fails the restart within the wait, naming what it
// answered; a failing systemctl fails at once with its output.
func TestRestartFailsOnAnUnhealthyKubelet(t *testing.T) {
	ctx := context.Background()
	port, err := childproc.FreePort(ctx)
	if err != nil {
		t.Fatal(err)
	}
	systemctl, _ := fakeSystemd(t, port, "[-]syncloop failed", "--cloud-provider=external")
	s := Systemd{Systemctl: systemctl, Unit: "kubelet.service"}
	if err := s.run(ctx, "start"); err != nil {
		t.Fatal(err)
	}
	_, err = Restart(ctx, newFS(t), Endpoint{Address: "127.0.0.1", Port: port}, s, false, nil, 2*time.Second)
	if err == nil || !strings.Contains(err.Error(), "did not come back healthy within 2s") || !strings.Contains(err.Error(), "syncloop failed") {
		t.Errorf("Restart = %v, want a timeout naming the healthz answer", err)
	}
	start := time.Now()
	_, err = Restart(ctx, newFS(t), Endpoint{Address: "127.0.0.1", Port: port}, Systemd{Systemctl: "false", Unit: "kubelet.service"}, false, nil, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "false restart kubelet.service") || time.Since(start) > 10*time.Second {
		t.Errorf("Restart with a failing systemctl = %v after %s, want its failure at once", err, time.Since(start))
	}
	if err := s.run(ctx, "bogus"); err == nil || !strings.Contains(err.Error(), "unknown verb bogus") {
		t.Errorf("systemctl failure = %v, want its output in the error", err)
	}
}

func TestUnitOf(t *testing.T) {
	for in, want := range map[string]string{
		"/etc/systemd/system/kubelet.service.d/10-kubeadm.conf": "kubelet.service",
		"/lib/systemd/system/kubelet.service":                   "kubelet.service",
		"/etc/systemd/system/kubelet-custom.service":            "kubelet-custom.service",
		"": "kubelet.service",
	} {
		if got := UnitOf(in); got != want {
			t.Errorf("UnitOf(%q) = %q, want %q", in, got, want)
		}
	}
	if !IsUnitFile("/etc/systemd/system/kubelet.service.d/20-aws.conf") || IsUnitFile("/etc/default/kubelet") {
		t.Error("IsUnitFile: drop-ins are unit files, /etc/default/kubelet is not")
	}
}
