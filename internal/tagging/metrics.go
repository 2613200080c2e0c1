package tagging

import (
	"time"

	"k8s.io/component-base/metrics"
)

// Metrics counts what the controller did per Node and how long Nodes wait
// for their tags.
type Metrics struct {
	nodes *metrics.CounterVec
	delay *metrics.Histogram
}

// Registerer is what the metrics are registered with.
type Registerer interface {
	MustRegister(...metrics.Registerable)
}

// Outcomes of one Node in one pass (the outcome label).
const (
	outcomeTagged        = "tagged"         // CreateTags put the tags on
	outcomeAlreadyTagged = "already_tagged" // the view showed them there: no call
	outcomeTerminated    = "terminated"     // nothing to tag or untag
	outcomeGone          = "gone"           // EC2 does not know the instance
	outcomeFailed        = "failed"         // the batch's call failed (throttling, 5xx): retried
	outcomeUntagged      = "untagged"       // DeleteTags took the tags off
	// The instance's own failures, found by splitting the batch: the
	// Node gets a Warning event and is retried.
	outcomeTagLimit = "tag_limit_exceeded" // more than 50 tags with ours
	outcomeDenied   = "unauthorized"       // IAM or an SCP denies it for this instance
)

// refusedOutcome is the outcome of an instance refused with err: besides
// goneCodes (outcome gone), itemCodes hold only these two.
func refusedOutcome(err error) string {
	if errorCode(err) == codeTagLimitExceeded {
		return outcomeTagLimit
	}
	return outcomeDenied
}

// NewMetrics creates the controller's metrics and registers them with r.
func NewMetrics(r Registerer) *Metrics {
	m := &Metrics{
		nodes: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem:      "aws_ccm",
			Name:           "tagging_nodes_total",
			Help:           "Nodes the tagging controller handled, by action (tag, untag) and outcome (tagged, already_tagged: no call needed, untagged, terminated, gone: unknown to EC2, failed: the batch's call failed (throttling, 5xx), retried; the instance's own failures, retried with a Warning event on the Node: tag_limit_exceeded, unauthorized).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"action", "outcome"}),
		delay: metrics.NewHistogram(&metrics.HistogramOpts{
			Subsystem:      "aws_ccm",
			Name:           "tagging_initial_delay_seconds",
			Help:           "Time from a Node's creation to its first labelling by the tagging controller (its instance carries the tags).",
			Buckets:        metrics.ExponentialBuckets(1, 4, 6), // 1 s to about 17 min, as upstream's
			StabilityLevel: metrics.ALPHA,
		}),
	}
	r.MustRegister(m.nodes, m.delay)
	return m
}

func (m *Metrics) node(action, outcome string, n int) {
	if m == nil || n == 0 {
		return
	}
	m.nodes.WithLabelValues(action, outcome).Add(float64(n))
}

func (m *Metrics) labelled(age time.Duration) {
	if m == nil {
		return
	}
	m.delay.Observe(age.Seconds())
}
