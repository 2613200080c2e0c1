package awsemu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// service is one emulated AWS API. Adding a service means writing one type
// that implements it and listing its constructor in builtinServices.
type service interface {
	// name is the key used by call accounting and fault injection.
	name() string
	// signingName is the service in the SigV4 credential scope.
	signingName() string
	// apiVersion is the Version form parameter; it separates services
	// that share a signing name (ELB classic and ELBv2).
	apiVersion() string
	protocol() protocol
	xmlns() string
	// handle runs one operation. The response is marshalled with
	// encoding/xml as the content of <ActionResponse> (ec2query) or
	// <ActionResult> (awsQuery); nil means no result element.
	handle(ctx context.Context, action string, form url.Values) (response any, err *apiError)
}

// builtinServices lists the emulated APIs.
var builtinServices = []func(*Server) service{
	func(s *Server) service { return &ec2Service{s: s} },
	func(s *Server) service { return &stsService{s: s} },
	func(s *Server) service { return &iamService{s: s} },
	func(s *Server) service { return &elbService{s: s} },
	func(s *Server) service { return &elbv2Service{s: s} },
}

// table is an insertion-ordered map of resources by ID.
type table[T any] struct {
	m     map[string]*T
	order []string
}

func (t *table[T]) put(id string, v *T) {
	if t.m == nil {
		t.m = map[string]*T{}
	}
	if _, ok := t.m[id]; !ok {
		t.order = append(t.order, id)
	}
	t.m[id] = v
}

func (t *table[T]) get(id string) (*T, bool) {
	v, ok := t.m[id]
	return v, ok
}

func (t *table[T]) remove(id string) {
	if _, ok := t.m[id]; !ok {
		return
	}
	delete(t.m, id)
	for i, o := range t.order {
		if o == id {
			t.order = append(t.order[:i], t.order[i+1:]...)
			break
		}
	}
}

func (t *table[T]) list() []*T {
	out := make([]*T, 0, len(t.order))
	for _, id := range t.order {
		out = append(out, t.m[id])
	}
	return out
}

// instanceRec is a stored instance and when Describe* starts to see it.
type instanceRec struct {
	Instance
	visibleAt time.Time
}

// Server is the emulator. It is safe for concurrent use.
type Server struct {
	services []service

	mu              sync.RWMutex // guards the state below
	region          string
	account         string
	callerArn       string
	callerUserID    string
	zones           []Zone
	vpcs            table[VPC]
	subnets         table[Subnet]
	securityGroups  table[SecurityGroup]
	routeTables     table[RouteTable]
	instances       table[instanceRec]
	eniOwner        map[string]string // ENI ID -> instance ID
	visibilityDelay time.Duration
	imdsInstance    string
	imdsAvailable   bool
	imdsTokens      map[string]time.Time
	idSeq           uint64
	responseDelay   time.Duration
	iam             *iamState
	elb             *elbState
	sgRuleLimit     int // ingress rules per security group

	ctl         sync.Mutex // guards accounting, faults and the logger
	calls       map[string]int
	callLog     []Call
	faults      []faultRec
	nextFaultID int
	reqSeq      uint64
	logw        io.Writer
}

// New returns a Server holding a deep copy of f (nil = empty us-east-1). It
// panics if f does not validate; use Start or Fixture.Validate to get the
// error instead.
func New(f *Fixture) *Server {
	if f == nil {
		f = &Fixture{}
	}
	f = f.clone()
	if err := f.Validate(); err != nil {
		panic("awsemu: invalid fixture: " + err.Error())
	}
	s := &Server{
		region:        f.Region,
		account:       f.Account,
		callerArn:     f.CallerArn,
		callerUserID:  f.CallerUserID,
		zones:         f.Zones,
		eniOwner:      map[string]string{},
		imdsAvailable: true,
		responseDelay: DefaultResponseDelay,
		imdsTokens:    map[string]time.Time{},
		calls:         map[string]int{},
		sgRuleLimit:   f.SecurityGroupRuleLimit,
	}
	for i := range f.VPCs {
		s.vpcs.put(f.VPCs[i].ID, &f.VPCs[i])
	}
	for i := range f.Subnets {
		s.subnets.put(f.Subnets[i].ID, &f.Subnets[i])
	}
	for i := range f.SecurityGroups {
		s.securityGroups.put(f.SecurityGroups[i].ID, &f.SecurityGroups[i])
	}
	for i := range f.RouteTables {
		s.routeTables.put(f.RouteTables[i].ID, &f.RouteTables[i])
	}
	for _, in := range f.Instances {
		s.storeInstance(in, time.Time{})
	}
	s.iam, _ = f.buildIAM() // f is valid
	s.elb, _ = f.buildELB()
	s.imdsInstance = f.IMDSInstanceID
	if s.imdsInstance == "" && len(f.Instances) > 0 {
		s.imdsInstance = f.Instances[0].ID
	}
	for _, mk := range builtinServices {
		s.services = append(s.services, mk(s))
	}
	return s
}

// Start validates f, then serves a new Server on 127.0.0.1 with a random
// port. It returns the server, its base URL (http://127.0.0.1:PORT) and a
// stop function that closes the listener and open connections.
func Start(f *Fixture) (*Server, string, func(), error) {
	if f != nil {
		f = f.clone()
		if err := f.Validate(); err != nil {
			return nil, "", nil, fmt.Errorf("awsemu: invalid fixture: %w", err)
		}
	}
	s := New(f)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, err
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logf("awsemu: serve: %v", err)
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = hs.Close()
			<-done
		})
	}
	return s, "http://" + l.Addr().String(), stop, nil
}

// SetLogOutput makes the server log one line per request to w (nil = off).
func (s *Server) SetLogOutput(w io.Writer) {
	s.ctl.Lock()
	defer s.ctl.Unlock()
	s.logw = w
}

func (s *Server) logf(format string, args ...any) {
	s.ctl.Lock()
	defer s.ctl.Unlock()
	if s.logw != nil {
		fmt.Fprintf(s.logw, format+"\n", args...)
	}
}

// statusWriter records the status code for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// ServeHTTP serves IMDS under /latest/ and the query APIs everywhere else.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	var svc, action string
	if r.URL.Path == "/latest" || strings.HasPrefix(r.URL.Path, "/latest/") {
		svc, action = "imds", strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/latest"), "/")
		s.serveIMDS(sw, r, action)
	} else {
		svc, action = s.serveAPI(sw, r)
	}
	if sw.status == 0 {
		sw.status = http.StatusOK
	}
	s.logf("%s %s %d %s", svc, action, sw.status, time.Since(start).Round(time.Microsecond))
}

// serveAPI handles one form-encoded query API request.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) (svcName, action string) {
	reqID := s.requestID()
	if err := r.ParseForm(); err != nil {
		protoAWSQuery.writeError(w, reqID, newAPIError(http.StatusBadRequest, "MalformedQueryString", "%v", err))
		return "unknown", ""
	}
	action = r.Form.Get("Action")
	scope := signingName(r)
	svc := s.lookupService(scope, r.Form.Get("Version"))
	svcName, proto := scope, protoAWSQuery
	if svc != nil {
		svcName, proto = svc.name(), svc.protocol()
	}
	if svcName == "" {
		svcName = "unknown"
	}
	s.countCall(svcName, action)
	s.logCall(svcName, action, r.UserAgent())
	if apiErr, ok := s.applyFault(r.Context(), svcName, action, s.ResponseDelay()); !ok {
		return svcName, action // client went away during injected latency
	} else if apiErr != nil {
		proto.writeError(w, reqID, apiErr)
		return svcName, action
	}
	switch {
	case svc == nil:
		proto.writeError(w, reqID, errInvalidAction(action, svcName))
	case action == "":
		proto.writeError(w, reqID, newAPIError(http.StatusBadRequest, "MissingAction", "The request must contain the parameter Action"))
	default:
		resp, apiErr := svc.handle(r.Context(), action, r.Form)
		if apiErr != nil {
			proto.writeError(w, reqID, apiErr)
		} else {
			proto.writeResponse(w, action, svc.xmlns(), reqID, resp)
		}
	}
	return svcName, action
}

// signingName extracts the service from the SigV4 credential scope
// (Credential=AKID/20260101/us-east-1/ec2/aws4_request), in the
// Authorization header or a presigned X-Amz-Credential parameter.
func signingName(r *http.Request) string {
	cred := r.Form.Get("X-Amz-Credential")
	if auth := r.Header.Get("Authorization"); auth != "" {
		_, after, ok := strings.Cut(auth, "Credential=")
		if !ok {
			return ""
		}
		cred, _, _ = strings.Cut(after, ",")
	}
	parts := strings.Split(strings.TrimSpace(cred), "/")
	if len(parts) != 5 {
		return ""
	}
	return parts[3]
}

// lookupService finds the service for a signing name, using the API
// version to choose between services that share one.
func (s *Server) lookupService(signing, version string) service {
	var found service
	for _, svc := range s.services {
		if svc.signingName() != signing {
			continue
		}
		if svc.apiVersion() == version {
			return svc
		}
		if found == nil {
			found = svc
		}
	}
	return found
}

func (s *Server) requestID() string {
	s.ctl.Lock()
	s.reqSeq++
	n := s.reqSeq
	s.ctl.Unlock()
	return fmt.Sprintf("a11ce5e0-0000-4000-8000-%012x", n)
}

// newID returns a fresh resource ID such as "i-0000000000000001a".
func (s *Server) newID(prefix string) string {
	s.idSeq++
	return fmt.Sprintf("%s-%017x", prefix, 0xe0000000+s.idSeq)
}

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
