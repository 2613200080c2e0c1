package awsemu

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// Several instances' metadata at once: the emulator's main listener
// answers IMDS as one instance (SetIMDSInstance), as a real IMDS answers
// as the machine that asks. Processes that play different instances at
// the same time (one kubelet per node in the test bed) each need their
// own IMDS, so IMDSFor serves one instance's on a listener of its own.

// IMDSHandler answers IMDS requests (below /latest/) as instance id,
// whatever SetIMDSInstance chose; any other path is 404. It shares the
// emulator's state: its tokens, SetIMDSAvailable, faults and call counts.
func (s *Server) IMDSHandler(id string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if r.URL.Path != "/latest" && !strings.HasPrefix(r.URL.Path, "/latest/") {
			http.NotFound(w, r)
			return
		}
		sw := &statusWriter{ResponseWriter: w}
		path := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/latest"), "/")
		s.serveIMDS(sw, r, path, id)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		s.logf("imds(%s) %s %d %s", id, path, sw.status, time.Since(start).Round(time.Microsecond))
	})
}

// IMDSFor serves IMDS as instance id on a new listener on 127.0.0.1 and
// returns its base URL, for a process's AWS_EC2_METADATA_SERVICE_ENDPOINT
// (IMDSEnvFor). The listener closes with the emulator. An instance the
// emulator does not hold is an error.
func (e *Emulator) IMDSFor(id string) (string, error) {
	if _, ok := e.Instance(id); !ok {
		return "", fmt.Errorf("awsemu: IMDSFor: no instance %q", id)
	}
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	hs := &http.Server{Handler: e.IMDSHandler(id), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			e.logf("awsemu: serve IMDS of %s: %v", id, err)
		}
	}()
	e.onClose(func() {
		_ = hs.Close()
		<-done
	})
	return "http://" + l.Addr().String(), nil
}
