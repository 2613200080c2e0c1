//go:build linux

package kubeletrun

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/procwatch"
	"github.com/awsccmctl/awsccmctl/internal/testbed/fakekubelet"
)

func TestMain(m *testing.M) {
	fakekubelet.Serve()
	os.Exit(m.Run())
}

func newFS(t *testing.T) procwatch.FS {
	t.Helper()
	fs, err := procwatch.New("")
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestObserveReadsTheRunningProcess: what Observe reports is the running
// process's own command line, start time and /healthz answer.
func TestObserveReadsTheRunningProcess(t *testing.T) {
	before := time.Now()
	cmd, port := fakekubelet.Start(t, "kubelet", "ok",
		"--config=/var/lib/kubelet/config.yaml", "--cloud-provider=external",
		"--provider-id", "aws:///us-east-1a/i-0abc", "--hostname-override=ip-10-0-1-10.ec2.internal")
	r, err := Observe(t.Context(), newFS(t), Endpoint{Address: "127.0.0.1", Port: port})
	if err != nil {
		t.Fatal(err)
	}
	want := Running{PID: cmd.Process.Pid, CloudProvider: "external", ProviderID: "aws:///us-east-1a/i-0abc",
		HostnameOverride: "ip-10-0-1-10.ec2.internal", Healthz: "ok"}
	if r.PID != want.PID || r.CloudProvider != want.CloudProvider || r.ProviderID != want.ProviderID ||
		r.HostnameOverride != want.HostnameOverride || !r.Healthy() {
		t.Errorf("Observe = %+v, want %+v", *r, want)
	}
	if r.StartTime == 0 || r.Started.Before(before.Add(-time.Second)) || r.Started.After(time.Now().Add(time.Second)) {
		t.Errorf("start %d (%s), want the child's, after %s", r.StartTime, r.Started, before)
	}
}

func TestObserveUnhealthyAndInTree(t *testing.T) {
	_, port := fakekubelet.Start(t, "kubelet", "[-]syncloop failed", "--cloud-provider=aws")
	r, err := Observe(t.Context(), newFS(t), Endpoint{Address: "127.0.0.1", Port: port})
	if err != nil {
		t.Fatal(err)
	}
	if r.CloudProvider != "aws" || r.Healthy() || r.Healthz != "HTTP 500: [-]syncloop failed" {
		t.Errorf("Observe = %+v, want the in-tree provider and the failed healthz", *r)
	}
}

func TestObserveRefusesWhatIsNotAKubelet(t *testing.T) {
	_, port := fakekubelet.Start(t, "nginx", "ok", "--cloud-provider=external")
	_, err := Observe(t.Context(), newFS(t), Endpoint{Address: "127.0.0.1", Port: port})
	if err == nil || !strings.Contains(err.Error(), "not a kubelet") || !strings.Contains(err.Error(), "nginx") {
		t.Errorf("Observe = %v, want an error naming the other program", err)
	}
	free, err := childproc.FreePort(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Observe(t.Context(), newFS(t), Endpoint{Address: "127.0.0.1", Port: free}); err == nil || !strings.Contains(err.Error(), "no kubelet is running") {
		t.Errorf("Observe on a free port = %v, want no kubelet running", err)
	}
}

func TestEndpointOf(t *testing.T) {
	port := func(p int32) *int32 { return &p }
	for _, tc := range []struct {
		name    string
		argv    []string
		config  *nodefiles.KubeletConfig
		want    Endpoint
		wantErr string
	}{
		{name: "defaults", want: Endpoint{"127.0.0.1", 10248}},
		{name: "config file", config: &nodefiles.KubeletConfig{HealthzPort: port(11248), HealthzBindAddress: "10.0.0.5"}, want: Endpoint{"10.0.0.5", 11248}},
		{name: "flags win over the file", argv: []string{"--healthz-port=12248", "--healthz-bind-address", "127.0.0.2"},
			config: &nodefiles.KubeletConfig{HealthzPort: port(11248), HealthzBindAddress: "10.0.0.5"}, want: Endpoint{"127.0.0.2", 12248}},
		{name: "wildcard IPv4 is reached on loopback", argv: []string{"--healthz-bind-address=0.0.0.0"}, want: Endpoint{"127.0.0.1", 10248}},
		{name: "wildcard IPv6 is reached on loopback", argv: []string{"--healthz-bind-address=::"}, want: Endpoint{"::1", 10248}},
		{name: "turned off", config: &nodefiles.KubeletConfig{HealthzPort: port(0)}, wantErr: "turned off"},
		{name: "not a number", argv: []string{"--healthz-port=ten"}, wantErr: `--healthz-port="ten"`},
		{name: "out of range", argv: []string{"--healthz-port=70000"}, wantErr: "70000 is not a TCP port"},
		{name: "not an IP", argv: []string{"--healthz-bind-address=localhost"}, wantErr: `"localhost" is not an IP address`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EndpointOf(&nodefiles.Kubelet{Flags: nodefiles.ParseFlags(tc.argv), Config: tc.config})
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("EndpointOf = %v, %v; want an error with %q", got, err, tc.wantErr)
			case tc.wantErr == "" && (err != nil || got != tc.want):
				t.Errorf("EndpointOf = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestObserveOverIPv6: a kubelet whose healthz binds the IPv6 wildcard is
// found and asked on [::1] (skipped where the host has no IPv6 loopback).
func TestObserveOverIPv6(t *testing.T) {
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	_ = ln.Close()
	cmd, port := fakekubelet.StartOn(t, "::1", "kubelet", "ok", "--cloud-provider=external")
	e, err := EndpointOf(&nodefiles.Kubelet{Flags: nodefiles.ParseFlags([]string{"--healthz-bind-address=::", "--healthz-port=" + strconv.Itoa(port)})})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Observe(t.Context(), newFS(t), e)
	if err != nil {
		t.Fatal(err)
	}
	if r.PID != cmd.Process.Pid || !r.Healthy() || r.CloudProvider != "external" {
		t.Errorf("Observe over IPv6 = %+v, want pid %d, healthy, external", *r, cmd.Process.Pid)
	}
}
