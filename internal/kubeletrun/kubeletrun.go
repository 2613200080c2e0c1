package kubeletrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/procwatch"
)

// The kubelet's healthz defaults (KubeletConfiguration healthzPort and
// healthzBindAddress).
const (
	DefaultHealthzPort    = 10248
	DefaultHealthzAddress = "127.0.0.1"
)

// healthzTimeout bounds one /healthz request: the kubelet answers at once
// when it runs.
const healthzTimeout = 5 * time.Second

// Endpoint is where a kubelet serves /healthz.
type Endpoint struct {
	Address string
	Port    int
}

func (e Endpoint) String() string { return net.JoinHostPort(e.Address, strconv.Itoa(e.Port)) }

// EndpointOf returns the healthz endpoint the kubelet's files configure:
// --healthz-port and --healthz-bind-address win over the configuration
// file's healthzPort and healthzBindAddress, as the kubelet reads them. A
// port of 0 turns healthz off, and then the running kubelet cannot be
// found by it: an error says so.
func EndpointOf(k *nodefiles.Kubelet) (Endpoint, error) {
	e := Endpoint{Address: DefaultHealthzAddress, Port: DefaultHealthzPort}
	if c := k.Config; c != nil {
		if c.HealthzPort != nil {
			e.Port = int(*c.HealthzPort)
		}
		if c.HealthzBindAddress != "" {
			e.Address = c.HealthzBindAddress
		}
	}
	if v, ok := k.Flags.Get("healthz-port"); ok {
		p, err := strconv.Atoi(v)
		if err != nil {
			return Endpoint{}, fmt.Errorf("kubelet --healthz-port=%q: not a port number", v)
		}
		e.Port = p
	}
	if v, ok := k.Flags.Get("healthz-bind-address"); ok && v != "" {
		e.Address = v
	}
	switch {
	case e.Port == 0:
		return Endpoint{}, errors.New("the kubelet's healthz server is turned off (healthz port 0): its running process cannot be found or checked; set a healthz port")
	case e.Port < 0 || e.Port > 65535:
		return Endpoint{}, fmt.Errorf("kubelet healthz port %d is not a TCP port", e.Port)
	}
	// A wildcard bind is reached on loopback.
	switch ip := net.ParseIP(e.Address); {
	case ip == nil:
		return Endpoint{}, fmt.Errorf("kubelet healthz bind address %q is not an IP address", e.Address)
	case ip.IsUnspecified() && ip.To4() != nil:
		e.Address = "127.0.0.1"
	case ip.IsUnspecified():
		e.Address = "::1"
	}
	return e, nil
}

// Running is what the running kubelet runs.
type Running struct {
	PID       int       `json:"pid"`
	StartTime uint64    `json:"startTime"` // clock ticks since boot, with PID naming the process
	Started   time.Time `json:"started"`
	// CloudProvider is the process's --cloud-provider; "" when it has none
	// (no cloud provider at all).
	CloudProvider string `json:"cloudProvider"`
	// ProviderID and HostnameOverride are its --provider-id and
	// --hostname-override, "" when not given (providerID may also come from
	// its configuration file, which the process does not show).
	ProviderID       string `json:"providerID,omitempty"`
	HostnameOverride string `json:"hostnameOverride,omitempty"`
	// Healthz is /healthz's answer: "ok" when healthy, else what it said or
	// why it could not be asked.
	Healthz string `json:"healthz"`
}

// Healthy reports whether /healthz answered ok.
func (r *Running) Healthy() bool { return r.Healthz == "ok" }

// StartSlack is how much earlier than a moment a kubelet's start may look
// and still count as after it: /proc gives the start in clock ticks after
// a boot time known to the second.
const StartSlack = 2 * time.Second

// StartedBefore reports whether the kubelet surely started before t (its
// files' last modification): then it runs older flags than they say.
func (r *Running) StartedBefore(t time.Time) bool { return r.Started.Before(t.Add(-StartSlack)) }

// ProviderName names a --cloud-provider value for people: "(none)" for
// the absent one.
func ProviderName(provider string) string {
	if provider == "" {
		return "(none)"
	}
	return provider
}

// Observe finds the kubelet listening on e.Port and reads what it runs.
// The listener must be a kubelet (its program's base name): another
// program on the port is an error naming it, not a kubelet that is down.
func Observe(ctx context.Context, fs procwatch.FS, e Endpoint) (*Running, error) {
	p, err := fs.ListenerOf(e.Port)
	if errors.Is(err, procwatch.ErrNoListener) {
		return nil, fmt.Errorf("no kubelet is running: nothing listens on port %d, the healthz port the kubelet's files configure", e.Port)
	}
	if err != nil {
		return nil, fmt.Errorf("find the kubelet by its healthz port: %w", err)
	}
	d, err := fs.Describe(p)
	if err != nil {
		return nil, err
	}
	i := nodefiles.BinaryIndex(d.Argv, func(base string) bool { return base == "kubelet" })
	if i < 0 {
		return nil, fmt.Errorf("the kubelet's healthz port %d is held by %s, which runs %q, not a kubelet", e.Port, p, strings.Join(d.Argv, " "))
	}
	flags := nodefiles.ParseFlags(d.Argv[i+1:])
	r := &Running{PID: p.PID, StartTime: p.StartTime, Started: d.Started}
	r.CloudProvider, _ = flags.Get("cloud-provider")
	r.ProviderID, _ = flags.Get("provider-id")
	r.HostnameOverride, _ = flags.Get("hostname-override")
	r.Healthz = healthz(ctx, e)
	return r, nil
}

// healthzClient asks the kubelet itself: never through a proxy (HTTP_PROXY
// covers every address but loopback, and a kubelet may bind the node's IP),
// and never on to where a redirect points.
var healthzClient = &http.Client{
	Transport: &http.Transport{Proxy: nil},
	CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	},
}

// healthz returns "ok" or what went wrong, trimmed for a report.
func healthz(ctx context.Context, e Endpoint) string {
	ctx, cancel := context.WithTimeout(ctx, healthzTimeout)
	defer cancel()
	u := url.URL{Scheme: "http", Host: e.String(), Path: "/healthz"}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err.Error()
	}
	resp, err := healthzClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	text := strings.TrimSpace(string(body))
	if resp.StatusCode == http.StatusOK && text == "ok" {
		return "ok"
	}
	return fmt.Sprintf("HTTP %d: %s", resp.StatusCode, text)
}
