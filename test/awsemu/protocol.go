package awsemu

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"net/http"
	"strconv"
)

// protocol is the wire format family of a service.
type protocol int

const (
	// protoEC2Query: <XResponse><requestId/>...</XResponse>, errors in
	// <Response><Errors><Error>.
	protoEC2Query protocol = iota
	// protoAWSQuery: <XResponse><XResult>...</XResult><ResponseMetadata/>,
	// errors in <ErrorResponse><Error><Type/>.
	protoAWSQuery
	// protoJSON11: JSON bodies routed by X-Amz-Target (server_json.go).
	protoJSON11
)

// apiError is an AWS error response.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func newAPIError(status int, code, format string, args ...any) *apiError {
	return &apiError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func errInvalidParameterValue(format string, args ...any) *apiError {
	return newAPIError(http.StatusBadRequest, "InvalidParameterValue", format, args...)
}

func errMissingParameter(name string) *apiError {
	return newAPIError(http.StatusBadRequest, "MissingParameter", "The request must contain the parameter %s", name)
}

func errInvalidAction(action, service string) *apiError {
	return newAPIError(http.StatusBadRequest, "InvalidAction",
		"The action %s is not valid for this web service (%s is not emulated by awsemu).", action, service)
}

// innerXML marshals the fields of body without an enclosing element.
func innerXML(body any) ([]byte, error) {
	if body == nil {
		return nil, nil
	}
	var buf bytes.Buffer
	if err := xml.NewEncoder(&buf).EncodeElement(body, xml.StartElement{Name: xml.Name{Local: "x"}}); err != nil {
		return nil, err
	}
	b := buf.Bytes() // "<x>...</x>": encoding/xml never self-closes
	return b[len("<x>") : len(b)-len("</x>")], nil
}

// writeResponse writes a successful response for action.
func (p protocol) writeResponse(w http.ResponseWriter, action, xmlns, requestID string, body any) {
	inner, err := innerXML(body)
	if err != nil {
		p.writeError(w, requestID, newAPIError(http.StatusInternalServerError, "InternalError", "awsemu: encoding response: %v", err))
		return
	}
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	fmt.Fprintf(&buf, `<%sResponse xmlns="%s">`, action, xmlns)
	switch p {
	case protoEC2Query:
		buf.WriteString("<requestId>" + requestID + "</requestId>")
		buf.Write(inner)
	case protoAWSQuery:
		if body != nil {
			fmt.Fprintf(&buf, "<%sResult>", action)
			buf.Write(inner)
			fmt.Fprintf(&buf, "</%sResult>", action)
		}
		buf.WriteString("<ResponseMetadata><RequestId>" + requestID + "</RequestId></ResponseMetadata>")
	default:
		// JSON protocols do not answer in XML.
	}
	fmt.Fprintf(&buf, "</%sResponse>", action)
	writeBody(w, http.StatusOK, requestID, buf.Bytes())
}

// writeError writes an error response in the protocol's shape.
func (p protocol) writeError(w http.ResponseWriter, requestID string, e *apiError) {
	if p == protoJSON11 {
		writeJSONError(w, requestID, e)
		return
	}
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	code, msg := escape(e.Code), escape(e.Message)
	switch p {
	case protoEC2Query:
		fmt.Fprintf(&buf, "<Response><Errors><Error><Code>%s</Code><Message>%s</Message></Error></Errors><RequestID>%s</RequestID></Response>",
			code, msg, requestID)
	case protoAWSQuery:
		typ := "Sender"
		if e.Status >= 500 {
			typ = "Receiver"
		}
		fmt.Fprintf(&buf, "<ErrorResponse><Error><Type>%s</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>%s</RequestId></ErrorResponse>",
			typ, code, msg, requestID)
	default:
		// JSON protocols do not answer in XML.
	}
	status := e.Status
	if status == 0 {
		status = http.StatusBadRequest
	}
	writeBody(w, status, requestID, buf.Bytes())
}

func writeBody(w http.ResponseWriter, status int, requestID string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "text/xml;charset=UTF-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("X-Amzn-RequestId", requestID)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func escape(s string) string {
	var buf bytes.Buffer
	_ = xml.EscapeText(&buf, []byte(s))
	return buf.String()
}
