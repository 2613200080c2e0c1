package awsemu

import (
	"context"
	"math"
	"net/http"
	"time"
)

// Fault makes matching requests fail or slow down. A request is counted by
// Calls before faults are applied.
type Fault struct {
	// Service and Action select requests ("" = any), e.g. "ec2" and
	// "DescribeInstances", or "imds" and "meta-data/instance-id".
	Service, Action string
	// Code is the AWS error code returned. Empty with an HTTPStatus of 500
	// or 503 means InternalError or Unavailable; empty with no HTTPStatus
	// means the fault only adds Latency.
	Code string
	// HTTPStatus of the error (default 400).
	HTTPStatus int
	// Rate is the share (0..1) of matching requests that are faulted.
	// 1 always fires; 0 is treated as 1 so a Fault literal without a Rate
	// always fires. Firing is spread evenly and deterministically (error
	// diffusion, not random draws): after n matching requests the fault has
	// fired round(n*Rate) times, so even a service that makes a handful of
	// calls sees its share, and a run is repeatable.
	Rate float64
	// Latency is added before the request is answered (or failed); it ends
	// early if the client cancels.
	Latency time.Duration
	// Remaining is how many more times the fault fires before it removes
	// itself; 0 = unlimited.
	Remaining int
}

type faultRec struct {
	id int
	f  Fault
	// matched and fired count matching requests and firings; a request
	// fires when round(matched*Rate) exceeds fired.
	matched, fired int
}

// Throttle returns a fault that throttles service at rate: EC2 answers
// RequestLimitExceeded with HTTP 503, IMDS HTTP 429, other services
// Throttling with HTTP 400.
func Throttle(service string, rate float64) Fault {
	switch service {
	case "ec2":
		return Fault{Service: service, Code: "RequestLimitExceeded", HTTPStatus: http.StatusServiceUnavailable, Rate: rate}
	case "imds":
		return Fault{Service: service, Code: "Throttling", HTTPStatus: http.StatusTooManyRequests, Rate: rate}
	default:
		return Fault{Service: service, Code: "Throttling", HTTPStatus: http.StatusBadRequest, Rate: rate}
	}
}

// InjectFault installs f and returns its ID for ClearFault.
func (s *Server) InjectFault(f Fault) int {
	s.ctl.Lock()
	defer s.ctl.Unlock()
	s.nextFaultID++
	s.faults = append(s.faults, faultRec{id: s.nextFaultID, f: f})
	return s.nextFaultID
}

// ClearFault removes the fault with the given ID.
func (s *Server) ClearFault(id int) {
	s.ctl.Lock()
	defer s.ctl.Unlock()
	for i, r := range s.faults {
		if r.id == id {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
			return
		}
	}
}

// ClearFaults removes all faults.
func (s *Server) ClearFaults() {
	s.ctl.Lock()
	defer s.ctl.Unlock()
	s.faults = nil
}

// pickFault decides which faults fire for one request: the latencies of all
// firing faults add up, and the first firing fault with an error supplies it.
func (s *Server) pickFault(service, action string) (time.Duration, *apiError) {
	s.ctl.Lock()
	defer s.ctl.Unlock()
	var latency time.Duration
	var apiErr *apiError
	kept := s.faults[:0]
	for _, r := range s.faults {
		f := &r.f
		fires := (f.Service == "" || f.Service == service) && (f.Action == "" || f.Action == action)
		errFault := f.Code != "" || f.HTTPStatus != 0
		if fires && errFault && apiErr != nil {
			fires = false // an earlier fault already fails the request
		}
		if fires && f.Rate > 0 && f.Rate < 1 {
			r.matched++
			fires = int(math.Floor(float64(r.matched)*f.Rate+0.5)) > r.fired
			if fires {
				r.fired++
			}
		}
		if fires {
			latency += f.Latency
			if errFault {
				apiErr = faultError(f)
			}
			if f.Remaining > 0 {
				f.Remaining--
				if f.Remaining == 0 {
					continue
				}
			}
		}
		kept = append(kept, r)
	}
	clear(s.faults[len(kept):])
	s.faults = kept
	return latency, apiErr
}

func faultError(f *Fault) *apiError {
	status, code := f.HTTPStatus, f.Code
	if status == 0 {
		status = http.StatusBadRequest
	}
	if code == "" {
		switch {
		case status == http.StatusServiceUnavailable:
			code = "Unavailable"
		case status >= 500:
			code = "InternalError"
		default:
			code = "InvalidRequest"
		}
	}
	return newAPIError(status, code, "awsemu: injected fault")
}

// applyFault runs the faults for one request after waiting base. ok is false
// when the client cancelled while waiting and nothing should be written.
func (s *Server) applyFault(ctx context.Context, service, action string, base time.Duration) (apiErr *apiError, ok bool) {
	latency, apiErr := s.pickFault(service, action)
	latency += base
	if latency > 0 {
		t := time.NewTimer(latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, false
		}
	}
	return apiErr, true
}
