package nodephase

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
)

// This file waits for the node's kube-controller-manager after a phase that
// restarted it, reading its /healthz?verbose where its own flags serve it.

// DefaultKCMSecurePort is kube-controller-manager's --secure-port default,
// used only when its static Pod does not set the flag.
const DefaultKCMSecurePort = 10257

// KCMEndpoint is where the node's kube-controller-manager answers
// /healthz?verbose.
type KCMEndpoint struct {
	URL  string
	Port int
}

// KCMEndpointOf reads the endpoint from the kube-controller-manager's static
// Pod flags: --secure-port (DefaultKCMSecurePort when absent) and
// --bind-address (loopback when unset or a wildcard, as kubeadm binds it).
func KCMEndpointOf(f nodefiles.Flags) (KCMEndpoint, error) {
	p, ok := f.Get("secure-port")
	if !ok {
		p = strconv.Itoa(DefaultKCMSecurePort)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return KCMEndpoint{}, fmt.Errorf("kube-controller-manager --secure-port=%s: %w", p, err)
	}
	host, _ := f.Get("bind-address")
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return KCMEndpoint{URL: "https://" + net.JoinHostPort(host, p) + "/healthz?verbose", Port: port}, nil
}

// LocalKCMEndpoint reads the endpoint from the kube-controller-manager
// static Pod under root; ok is false on a node without one.
func LocalKCMEndpoint(root string) (ep KCMEndpoint, ok bool, err error) {
	n, err := nodefiles.Read(root)
	if err != nil {
		return KCMEndpoint{}, false, err
	}
	pod := n.StaticPods[leadermigration.ComponentKCM]
	if pod == nil {
		return KCMEndpoint{}, false, nil
	}
	ep, err = KCMEndpointOf(pod.Flags)
	return ep, err == nil, err
}

// NewHealthzClient returns the client that reads a component's /healthz on
// this node.
func NewHealthzClient() *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		// The component's self-signed serving certificate, on this node.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // #nosec G402 -- loopback, read-only health endpoint
	}}
}

// GetHealthz returns the checks a /healthz?verbose answer lists as ok.
func GetHealthz(ctx context.Context, client *http.Client, url string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return leadermigration.HealthzChecks(string(body)), nil
}

// WaitKCM waits, up to wait, for the kube-controller-manager at ep to answer
// /healthz?verbose as the phase wants: after control-plane-external, with
// none of the migrated controllers. It logs each retry to log, or, when log
// is a terminal's status line (statusLine), shows the wait as one line that
// updates in place.
func WaitKCM(ctx context.Context, client *http.Client, ep KCMEndpoint, phase Phase, wait time.Duration, log io.Writer) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	start := time.Now()
	live, _ := log.(statusLine)
	if live != nil {
		live.Begin("waiting for kube-controller-manager (" + ep.URL + ")")
	}
	var last string
	for {
		checks, err := GetHealthz(ctx, client, ep.URL)
		switch {
		case err != nil:
			last = err.Error()
		case phase == PhaseControlPlaneExternal && len(leadermigration.Running(checks, leadermigration.KCMNames())) > 0:
			last = fmt.Sprintf("still runs %v", leadermigration.Running(checks, leadermigration.KCMNames()))
		default:
			if live != nil {
				live.End(fmt.Sprintf("kube-controller-manager (%s) answers after %s", ep.URL, time.Since(start).Round(100*time.Millisecond)))
			}
			return checks, nil
		}
		select {
		case <-ctx.Done():
			err := fmt.Errorf("%s after %s: %s", ep.URL, wait, last)
			if live != nil {
				live.End("kube-controller-manager: " + err.Error())
			}
			return nil, err
		case <-time.After(500 * time.Millisecond):
		}
		if live != nil {
			live.Update(last)
		} else {
			fmt.Fprintf(log, "waiting for kube-controller-manager (%s): %s\n", ep.URL, last)
		}
	}
}

// statusLine is a terminal's status line (internal/cli/termstatus.Line): a
// wait updates it in place rather than printing a line per retry.
type statusLine interface {
	Begin(title string)
	Update(state string)
	End(result string)
}
