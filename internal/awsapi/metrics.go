package awsapi

import (
	"context"
	"errors"
	"net"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	"k8s.io/component-base/metrics"
)

// Outcomes of one AWS request attempt (the "outcome" label).
const (
	OutcomeSuccess      = "success"
	OutcomeThrottled    = "throttled"
	OutcomeClientError  = "client_error"
	OutcomeServerError  = "server_error"
	OutcomeNetworkError = "network_error"
	OutcomeCanceled     = "canceled"
)

// throttleCodes are the error codes AWS services use for throttling. EC2 says
// RequestLimitExceeded; the query APIs of ELB, IAM and STS say Throttling.
var throttleCodes = map[string]bool{
	"RequestLimitExceeded":                   true,
	"Throttling":                             true,
	"ThrottlingException":                    true,
	"RequestThrottled":                       true,
	"RequestThrottledException":              true,
	"TooManyRequestsException":               true,
	"ProvisionedThroughputExceededException": true,
	"BandwidthLimitExceeded":                 true,
	"SlowDown":                               true,
	"PriorRequestNotComplete":                true,
	"EC2ThrottledException":                  true,
}

// IsThrottle reports whether err is an AWS throttling error.
func IsThrottle(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && throttleCodes[ae.ErrorCode()]
}

// Registerer is what metrics are registered with: the CCM passes the
// component-base legacy registry (served on /metrics), tests a fresh one.
type Registerer interface {
	MustRegister(...metrics.Registerable)
}

// Metrics records every AWS request attempt. Labels are bounded: service and
// operation come from the registry, never from request data such as IDs.
type Metrics struct {
	requests  *metrics.CounterVec
	duration  *metrics.HistogramVec
	throttles *metrics.CounterVec
}

// NewMetrics creates the AWS API metrics and registers them with r.
func NewMetrics(r Registerer) *Metrics {
	m := &Metrics{
		requests: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem:      "aws_ccm",
			Name:           "api_requests_total",
			Help:           "AWS API request attempts (retries count separately) by service, operation and outcome.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"service", "operation", "outcome"}),
		duration: metrics.NewHistogramVec(&metrics.HistogramOpts{
			Subsystem:      "aws_ccm",
			Name:           "api_request_duration_seconds",
			Help:           "Latency of AWS API request attempts by service, operation and outcome.",
			Buckets:        []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
			StabilityLevel: metrics.ALPHA,
		}, []string{"service", "operation", "outcome"}),
		throttles: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem:      "aws_ccm",
			Name:           "api_throttles_total",
			Help:           "AWS API attempts rejected by throttling, by service, operation and error code (RequestLimitExceeded for EC2, Throttling for ELB/IAM/STS).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"service", "operation", "code"}),
	}
	r.MustRegister(m.requests, m.duration, m.throttles)
	return m
}

// observe records one attempt.
func (m *Metrics) observe(service, operation string, d time.Duration, err error) {
	outcome, code := classify(err)
	m.requests.WithLabelValues(service, operation, outcome).Inc()
	m.duration.WithLabelValues(service, operation, outcome).Observe(d.Seconds())
	if outcome == OutcomeThrottled {
		m.throttles.WithLabelValues(service, operation, code).Inc()
	}
}

func classify(err error) (outcome, code string) {
	if err == nil {
		return OutcomeSuccess, ""
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return OutcomeCanceled, ""
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		if throttleCodes[ae.ErrorCode()] {
			return OutcomeThrottled, ae.ErrorCode()
		}
		if ae.ErrorFault() == smithy.FaultServer {
			return OutcomeServerError, ""
		}
		return OutcomeClientError, ""
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return OutcomeNetworkError, ""
	}
	// Transport errors the SDK wraps without a net.Error (connection reset,
	// unexpected EOF) are network errors too.
	return OutcomeNetworkError, ""
}

// metricsMiddleware sits right after the retry middleware, so each attempt
// is observed on its own: that is what AWS throttle budgets count.
func (m *Metrics) middleware(stack *middleware.Stack) error {
	return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("awsccm.metrics",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			start := time.Now()
			out, md, err := next.HandleFinalize(ctx, in)
			m.observe(awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx), time.Since(start), err)
			return out, md, err
		}), "Retry", middleware.After)
}

// guardMiddleware refuses operations missing from the registry before any
// request is built, so an unregistered call fails in every test that makes it.
func guardMiddleware(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("awsccm.registryGuard",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			service, op := awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx)
			if !Registered(service, op) {
				return middleware.InitializeOutput{}, middleware.Metadata{}, &UnregisteredActionError{Service: service, Operation: op}
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.Before)
}
