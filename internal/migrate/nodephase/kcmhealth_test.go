package nodephase

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
)

func TestKCMEndpointOf(t *testing.T) {
	cases := []struct {
		name     string
		argv     string
		wantURL  string
		wantPort int
		wantErr  bool
	}{
		{name: "default port when --secure-port is absent", argv: "kube-controller-manager --leader-elect=true",
			wantURL: "https://127.0.0.1:10257/healthz?verbose", wantPort: 10257},
		{name: "--secure-port is used when set", argv: "kube-controller-manager --secure-port=10999",
			wantURL: "https://127.0.0.1:10999/healthz?verbose", wantPort: 10999},
		{name: "--secure-port as a separate value", argv: "kube-controller-manager --secure-port 11257",
			wantURL: "https://127.0.0.1:11257/healthz?verbose", wantPort: 11257},
		{name: "--bind-address is used", argv: "kube-controller-manager --bind-address=10.0.0.5 --secure-port=10300",
			wantURL: "https://10.0.0.5:10300/healthz?verbose", wantPort: 10300},
		{name: "a wildcard bind address is read on loopback", argv: "kube-controller-manager --bind-address=0.0.0.0",
			wantURL: "https://127.0.0.1:10257/healthz?verbose", wantPort: 10257},
		{name: "an IPv6 bind address is bracketed", argv: "kube-controller-manager --bind-address=fd00::1",
			wantURL: "https://[fd00::1]:10257/healthz?verbose", wantPort: 10257},
		{name: "a port that is not a number", argv: "kube-controller-manager --secure-port=https", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ep, err := KCMEndpointOf(nodefiles.ParseFlags(strings.Fields(tc.argv)))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err == nil && (ep.URL != tc.wantURL || ep.Port != tc.wantPort) {
				t.Errorf("endpoint = %+v, want %s port %d", ep, tc.wantURL, tc.wantPort)
			}
		})
	}
}

// TestWaitKCMWaitsForTheMigratedControllersToStop answers first with a
// migrated controller still running, then without: after
// control-plane-external the wait returns only the second answer.
func TestWaitKCMWaitsForTheMigratedControllersToStop(t *testing.T) {
	calls := 0
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls++
		if calls == 1 {
			_, _ = io.WriteString(w, "[+]ping ok\n[+]cloud-node-lifecycle ok\nhealthz check passed\n")
			return
		}
		_, _ = io.WriteString(w, "[+]ping ok\n[+]leaderElection ok\nhealthz check passed\n")
	}))
	defer srv.Close()
	ep := KCMEndpoint{URL: srv.URL + "/healthz?verbose"}
	checks, err := WaitKCM(context.Background(), srv.Client(), ep, PhaseControlPlaneExternal, 10*time.Second, io.Discard)
	if err != nil {
		t.Fatalf("WaitKCM: %v", err)
	}
	if got := strings.Join(checks, ","); got != "ping,leaderElection" || calls != 2 {
		t.Errorf("checks = %s after %d answers, want ping,leaderElection after 2", got, calls)
	}
}

func TestWaitKCMTimesOutNamingTheLastAnswer(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "not ready", http.StatusInternalServerError)
	}))
	defer srv.Close()
	_, err := WaitKCM(context.Background(), srv.Client(), KCMEndpoint{URL: srv.URL}, PhaseControlPlaneExternal, 300*time.Millisecond, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "HTTP 500") {
		t.Errorf("err = %v, want a timeout naming HTTP 500", err)
	}
}
