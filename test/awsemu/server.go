package awsemu

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// service is one emulated AWS API: how requests find it and its action
// table. Adding a service means writing a constructor that returns one
// (see ec2Service, stsService, ...) and listing it in New.
type service struct {
	// name is the key used by call accounting and fault injection.
	name string
	// signingName is the service in the SigV4 credential scope.
	signingName string
	// apiVersion is the Version form parameter; it separates services
	// that share a signing name (ELB classic and ELBv2).
	apiVersion string
	protocol   protocol
	xmlns      string
	actions    actionTable
	// targetPrefix and jsonActions route JSON-protocol requests: the
	// X-Amz-Target header is <targetPrefix>.<Operation> (server_json.go).
	targetPrefix string
	jsonActions  map[string]jsonHandler
	// anonymous are the actions AWS serves unsigned (STS
	// AssumeRoleWithWebIdentity): found by Version alone, and never
	// authorized against a caller.
	anonymous map[string]bool
	// regions, when set, are the only regions (of the SigV4 credential
	// scope) the service answers in (ECR Public: us-east-1).
	regions []string
}

// actionTable maps each Action of a service to its handler.
type actionTable map[string]handler

// handler runs one operation. The response is marshalled with
// encoding/xml as the content of <ActionResponse> (ec2query) or
// <ActionResult> (awsQuery); nil means no result element.
type handler func(form url.Values) (response any, err *apiError)

// instanceRec is a stored instance and when Describe* starts to see it.
type instanceRec struct {
	Instance
	visibleAt time.Time
}

// Server is the emulator. It is safe for concurrent use.
//
// Each service keeps its state behind its own lock. Where one service
// reads another's (ELB reads EC2 subnets, security groups and instances;
// IMDS reads EC2 instances; EC2 asks ELB which load balancers use a
// security group), it goes through the other's methods, and locks are
// always taken in the order ELB, then EC2.
type Server struct {
	common   *common
	ec2      *ec2State
	elb      *elbState
	iam      *iamState
	imds     *imdsState
	services []*service
	auth     authState // IAM enforcement (enforce.go)

	ctl           sync.Mutex // guards accounting, faults, the response delay and the logger
	calls         map[string]int
	callLog       []Call
	faults        []faultRec
	nextFaultID   int
	reqSeq        uint64
	responseDelay time.Duration
	logw          io.Writer
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
	c := &common{region: f.Region, account: f.Account, callerArn: f.CallerArn, callerUserID: f.CallerUserID, zones: f.Zones}
	s := &Server{
		common:        c,
		ec2:           newEC2State(c, f),
		imds:          &imdsState{instance: f.IMDSInstanceID, available: true, tokens: map[string]time.Time{}},
		responseDelay: DefaultResponseDelay,
		calls:         map[string]int{},
	}
	s.iam, _ = f.buildIAM() // f is valid
	s.elb, _ = f.buildELB()
	s.iam.common, s.elb.common = c, c
	s.elb.ec2, s.ec2.lbs = s.ec2, s.elb
	s.imds.common, s.imds.ec2 = c, s.ec2
	if s.imds.instance == "" && len(f.Instances) > 0 {
		s.imds.instance = f.Instances[0].ID
	}
	// Services sharing a signing name are listed in the order a request
	// without a known Version picks them.
	sts := stsService(c)
	sts.actions["AssumeRoleWithWebIdentity"] = s.assumeRoleWithWebIdentity // reads IAM (sts_webidentity.go)
	sts.anonymous = map[string]bool{"AssumeRoleWithWebIdentity": true}
	s.services = []*service{ec2Service(s.ec2), sts, iamService(s.iam), elbService(s.elb), elbv2Service(s.elb), ecrService(c), ecrPublicService(c)}
	return s
}

// Region returns the emulated region.
func (s *Server) Region() string { return s.common.region }

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

// ServeHTTP serves IMDS under /latest/, the JSON APIs for requests with an
// X-Amz-Target header, and the query APIs everywhere else.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	var svc, action string
	if r.URL.Path == "/latest" || strings.HasPrefix(r.URL.Path, "/latest/") {
		svc, action = "imds", strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/latest"), "/")
		s.serveIMDS(sw, r, action, "")
	} else if target := r.Header.Get("X-Amz-Target"); target != "" {
		svc, action = s.serveJSON(sw, r, target)
	} else {
		svc, action = s.serveAPI(sw, r)
	}
	if sw.status == 0 {
		sw.status = http.StatusOK
	}
	s.logf("%s %s %d %s", svc, action, sw.status, time.Since(start).Round(time.Microsecond))
}

// serveIMDS answers the instance metadata service as instance as (""
// means the one SetIMDSInstance chose); path is below /latest/. IMDS
// requests are counted and faulted like API calls but never delayed.
func (s *Server) serveIMDS(w http.ResponseWriter, r *http.Request, path, as string) {
	s.countCall("imds", path)
	if apiErr, ok := s.applyFault(r.Context(), "imds", path, 0); !ok {
		return
	} else if apiErr != nil {
		http.Error(w, apiErr.Code, apiErr.Status)
		return
	}
	s.imds.serve(w, r, path, as)
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
	if scope == "" {
		svc = s.lookupAnonymous(r.Form.Get("Version"), action)
	}
	svcName, proto := scope, protoAWSQuery
	if svc != nil {
		svcName, proto = svc.name, svc.protocol
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
	var h handler
	if svc != nil {
		h = svc.actions[action]
	}
	switch {
	case svc == nil:
		proto.writeError(w, reqID, errInvalidAction(action, svcName))
	case action == "":
		proto.writeError(w, reqID, newAPIError(http.StatusBadRequest, "MissingAction", "The request must contain the parameter Action"))
	case h == nil:
		proto.writeError(w, reqID, errInvalidAction(action, svcName))
	default:
		var caller *principal
		var apiErr *apiError
		if !svc.anonymous[action] {
			caller, apiErr = s.authorize(r, svc, action)
		}
		if apiErr != nil {
			proto.writeError(w, reqID, apiErr)
			return svcName, action
		}
		resp, apiErr := h(r.Form)
		if apiErr != nil {
			proto.writeError(w, reqID, apiErr)
			return svcName, action
		}
		resp = s.asCaller(caller, svc, r.Form, resp)
		proto.writeResponse(w, action, svc.xmlns, reqID, resp)
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

// signingRegion extracts the region from the SigV4 credential scope, as
// signingName the service.
func signingRegion(r *http.Request) string {
	_, after, ok := strings.Cut(r.Header.Get("Authorization"), "Credential=")
	if !ok {
		return ""
	}
	cred, _, _ := strings.Cut(after, ",")
	parts := strings.Split(strings.TrimSpace(cred), "/")
	if len(parts) != 5 {
		return ""
	}
	return parts[2]
}

// lookupService finds the service for a signing name, using the API
// version to choose between services that share one.
func (s *Server) lookupService(signing, version string) *service {
	var found *service
	for _, svc := range s.services {
		if svc.signingName != signing {
			continue
		}
		if svc.apiVersion == version {
			return svc
		}
		if found == nil {
			found = svc
		}
	}
	return found
}

// lookupAnonymous finds the service of an unsigned request: only one
// whose Version matches and that serves action unsigned (nil otherwise, as
// for any other unsigned request).
func (s *Server) lookupAnonymous(version, action string) *service {
	for _, svc := range s.services {
		if svc.apiVersion == version && svc.anonymous[action] {
			return svc
		}
	}
	return nil
}

func (s *Server) requestID() string {
	s.ctl.Lock()
	s.reqSeq++
	n := s.reqSeq
	s.ctl.Unlock()
	return fmt.Sprintf("a11ce5e0-0000-4000-8000-%012x", n)
}
