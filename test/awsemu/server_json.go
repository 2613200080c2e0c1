package awsemu

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The JSON 1.1 protocol (ECR): POST / with Content-Type
// application/x-amz-json-1.1, the operation in the X-Amz-Target header as
// <targetPrefix>.<Operation>, the input as a JSON object in the body. A
// response is the output as JSON; an error is {"__type": code, "message":
// ...} with the HTTP status, and the request ID in X-Amzn-RequestId.

// jsonHandler runs one JSON-protocol operation on the request body; the
// response is marshalled with encoding/json.
type jsonHandler func(body []byte) (response any, err *apiError)

// maxJSONBody bounds a request body; the operations emulated take a few
// parameters.
const maxJSONBody = 1 << 20

// serveJSON handles one JSON-protocol request; target is X-Amz-Target.
func (s *Server) serveJSON(w http.ResponseWriter, r *http.Request, target string) (svcName, action string) {
	reqID := s.requestID()
	prefix, action, _ := strings.Cut(target, ".")
	var svc *service
	for _, c := range s.services {
		if c.protocol == protoJSON11 && c.targetPrefix == prefix {
			svc = c
			break
		}
	}
	svcName = "unknown"
	if svc != nil {
		svcName = svc.name
	}
	s.countCall(svcName, action)
	s.logCall(svcName, action, r.UserAgent())
	if apiErr, ok := s.applyFault(r.Context(), svcName, action, s.ResponseDelay()); !ok {
		return svcName, action
	} else if apiErr != nil {
		writeJSONError(w, reqID, apiErr)
		return svcName, action
	}
	var h jsonHandler
	if svc != nil {
		h = svc.jsonActions[action]
	}
	if h == nil {
		writeJSONError(w, reqID, newAPIError(http.StatusBadRequest, "UnknownOperationException",
			"X-Amz-Target %q is not an operation awsemu emulates", target))
		return svcName, action
	}
	if apiErr := checkJSONRequest(r); apiErr != nil {
		writeJSONError(w, reqID, apiErr)
		return svcName, action
	}
	if region := signingRegion(r); len(svc.regions) > 0 && !slices.Contains(svc.regions, region) {
		writeJSONError(w, reqID, newAPIError(http.StatusBadRequest, "UnsupportedCommandException",
			"The action isn't supported in this Region (%s; %s answers in %s).", region, svc.name, strings.Join(svc.regions, ", ")))
		return svcName, action
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxJSONBody+1))
	if err != nil || len(body) > maxJSONBody {
		writeJSONError(w, reqID, newAPIError(http.StatusBadRequest, "SerializationException", "the request body could not be read (at most %d bytes)", maxJSONBody))
		return svcName, action
	}
	if _, apiErr := s.authorize(r, svc, action); apiErr != nil {
		writeJSONError(w, reqID, apiErr)
		return svcName, action
	}
	resp, apiErr := h(body)
	if apiErr != nil {
		writeJSONError(w, reqID, apiErr)
		return svcName, action
	}
	out, err := json.Marshal(resp)
	if err != nil {
		writeJSONError(w, reqID, newAPIError(http.StatusInternalServerError, "ServerException", "awsemu: encoding response: %v", err))
		return svcName, action
	}
	writeJSONBody(w, http.StatusOK, reqID, out)
	return svcName, action
}

// checkJSONRequest refuses what AWS refuses before reading the input.
func checkJSONRequest(r *http.Request) *apiError {
	if r.Method != http.MethodPost {
		return newAPIError(http.StatusMethodNotAllowed, "UnknownOperationException", "JSON protocol requests are POSTs, not %s", r.Method)
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-amz-json-1.1" {
		return newAPIError(http.StatusBadRequest, "SerializationException",
			"Content-Type %q: want application/x-amz-json-1.1", r.Header.Get("Content-Type"))
	}
	return nil
}

// jsonErrorCodes are the JSON services' names for the errors IAM
// enforcement (enforce.go) raises with the query protocols' codes.
var jsonErrorCodes = map[string]string{
	"AccessDenied":         "AccessDeniedException",
	"InvalidClientTokenId": "UnrecognizedClientException",
}

func writeJSONError(w http.ResponseWriter, requestID string, e *apiError) {
	code := e.Code
	if c, ok := jsonErrorCodes[code]; ok {
		code = c
	}
	body, _ := json.Marshal(struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}{code, e.Message}) // two strings: cannot fail
	status := e.Status
	if status == 0 {
		status = http.StatusBadRequest
	}
	writeJSONBody(w, status, requestID, body)
}

func writeJSONBody(w http.ResponseWriter, status int, requestID string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/x-amz-json-1.1")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("X-Amzn-RequestId", requestID)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
