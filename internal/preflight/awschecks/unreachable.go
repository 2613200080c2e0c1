package awschecks

import (
	"context"
	"errors"
	"net"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// unreachable reports whether err means AWS did not answer: the request
// could not be sent (connection refused, DNS, TLS, timeout) or the service
// kept failing with 5xx through every retry. Throttling is an answer, and so
// is any 4xx (a denied or invalid call is a problem to fix, not an outage).
func unreachable(err error) bool {
	if err == nil || awsapi.IsThrottle(err) {
		return false
	}
	var send *smithyhttp.RequestSendError
	var resp *awshttp.ResponseError
	var netErr net.Error
	switch {
	case errors.As(err, &send), errors.As(err, &netErr), errors.Is(err, context.DeadlineExceeded):
		return true
	case errors.As(err, &resp):
		return resp.HTTPStatusCode() >= 500
	}
	return false
}

// fixAWSDown is the remediation when AWS did not answer: granting the
// caller more would not help.
const fixAWSDown = "AWS did not answer: check the network, the proxy (HTTPS_PROXY), AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE>, " +
	"and the cloud config's [ServiceOverride] endpoints, then run preflight again"

// failedCall marks res, the result of a check whose AWS call returned err,
// as unreachable when AWS did not answer, so the run exits with the
// "cannot reach" code rather than "checks failed", and gives the fix for
// that instead of one for a refused call.
func failedCall(res preflight.Result, err error) preflight.Result {
	if res.Status == preflight.StatusFail && unreachable(err) {
		res.Unreachable, res.Remediation = true, fixAWSDown
	}
	return res
}
