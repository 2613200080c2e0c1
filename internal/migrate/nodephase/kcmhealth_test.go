package nodephase

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/cli/termstatus"
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

// TestWaitKCMOnATerminal: on a terminal's status line the wait is one line
// that updates in place and ends with the answer; on a pipe it is a line
// per retry.
func TestWaitKCMOnATerminal(t *testing.T) {
	serve := func() *httptest.Server {
		calls := 0
		return httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			calls++
			if calls <= 2 {
				http.Error(w, "not ready", http.StatusInternalServerError)
				return
			}
			_, _ = io.WriteString(w, "[+]ping ok\nhealthz check passed\n")
		}))
	}
	srv := serve()
	defer srv.Close()
	var screen syncBuffer
	live := termstatus.New(&screen, termstatus.Options{Interval: 20 * time.Millisecond})
	if _, err := WaitKCM(context.Background(), srv.Client(), KCMEndpoint{URL: srv.URL}, PhaseControlPlaneExternal, 10*time.Second, live); err != nil {
		t.Fatal(err)
	}
	got := screen.String()
	if n := strings.Count(got, "\n"); n != 1 || !strings.Contains(got, "\r\x1b[Kkube-controller-manager ("+srv.URL+") answers after ") {
		t.Errorf("%d lines on the terminal, want the one result line:\n%q", n, got)
	}
	if !regexp.MustCompile(`\r\x1b\[Kwaiting for kube-controller-manager \(` + regexp.QuoteMeta(srv.URL) + `\) \(\ds\): HTTP 500`).MatchString(got) {
		t.Errorf("the status line never showed the retry's reason:\n%q", got)
	}

	srv2 := serve()
	defer srv2.Close()
	var plain bytes.Buffer
	if _, err := WaitKCM(context.Background(), srv2.Client(), KCMEndpoint{URL: srv2.URL}, PhaseControlPlaneExternal, 10*time.Second, &plain); err != nil {
		t.Fatal(err)
	}
	if want := strings.Repeat("waiting for kube-controller-manager ("+srv2.URL+"): HTTP 500\n", 2); plain.String() != want {
		t.Errorf("a pipe got\n%q\nwant\n%q", plain.String(), want)
	}
}

// syncBuffer is a buffer the status line's redraws and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
