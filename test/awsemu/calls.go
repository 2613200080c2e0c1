package awsemu

import (
	"strings"
	"time"
)

// Call accounting: counters by service and action, and the call log.

func (s *Server) countCall(service, action string) {
	s.ctl.Lock()
	defer s.ctl.Unlock()
	s.calls[service+":"+action]++
}

// Calls returns how many requests reached service (e.g. "ec2", "sts",
// "imds") and action, faulted ones included. An empty action sums all
// actions of the service.
func (s *Server) Calls(service, action string) int {
	s.ctl.Lock()
	defer s.ctl.Unlock()
	if action != "" {
		return s.calls[service+":"+action]
	}
	n := 0
	for k, v := range s.calls {
		if strings.HasPrefix(k, service+":") {
			n += v
		}
	}
	return n
}

// CallCounts returns a copy of all counters keyed "service:Action", e.g.
// "ec2:DescribeInstances" or "imds:meta-data/instance-id".
func (s *Server) CallCounts() map[string]int {
	s.ctl.Lock()
	defer s.ctl.Unlock()
	out := make(map[string]int, len(s.calls))
	for k, v := range s.calls {
		out[k] = v
	}
	return out
}

// ResetCalls zeroes all counters and empties the call log.
func (s *Server) ResetCalls() {
	s.ctl.Lock()
	defer s.ctl.Unlock()
	s.calls = map[string]int{}
	s.callLog = nil
}

// Call is one query-API request as the emulator received it.
type Call struct {
	Time    time.Time
	Service string
	Action  string
	// UserAgent tells the callers apart: the in-tree provider's aws-sdk-go
	// v1 ("kubernetes/v1.26.13 aws-sdk-go/1.44.116 ...") from this
	// project's aws-sdk-go-v2 ("aws-sdk-go-v2/1.x ...").
	UserAgent string
}

// SDKv1 reports whether the call came from aws-sdk-go v1 (the in-tree
// provider), SDKv2 from aws-sdk-go-v2.
func (c Call) SDKv1() bool { return strings.Contains(c.UserAgent, "aws-sdk-go/") }

// SDKv2 reports whether the call came from aws-sdk-go-v2.
func (c Call) SDKv2() bool { return strings.Contains(c.UserAgent, "aws-sdk-go-v2/") }

// Mutating reports whether the action changes state: anything but
// Describe*, Get*, List* and Simulate*.
func (c Call) Mutating() bool {
	for _, p := range []string{"Describe", "Get", "List", "Simulate"} {
		if strings.HasPrefix(c.Action, p) {
			return false
		}
	}
	return true
}

// maxCallLog bounds the call log (oldest entries are dropped).
const maxCallLog = 100000

func (s *Server) logCall(service, action, ua string) {
	s.ctl.Lock()
	defer s.ctl.Unlock()
	if len(s.callLog) >= maxCallLog {
		s.callLog = s.callLog[1:]
	}
	s.callLog = append(s.callLog, Call{Time: time.Now(), Service: service, Action: action, UserAgent: ua})
}

// CallLog returns a copy of the query-API calls received, oldest first
// (IMDS requests are not logged).
func (s *Server) CallLog() []Call {
	s.ctl.Lock()
	defer s.ctl.Unlock()
	return append([]Call(nil), s.callLog...)
}
