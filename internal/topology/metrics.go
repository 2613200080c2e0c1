package topology

import (
	"strconv"

	"k8s.io/component-base/metrics"
)

// Metrics count the Nodes initialized without network-node labels because
// IAM denies ec2:DescribeInstanceTopology. A nil *Metrics records nothing.
type Metrics struct {
	denials *metrics.CounterVec
}

// Registerer is what the metrics are registered with.
type Registerer interface {
	MustRegister(...metrics.Registerable)
}

// NewMetrics creates the reader's metrics and registers them with r.
func NewMetrics(r Registerer) *Metrics {
	m := &Metrics{
		denials: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem: "aws_ccm",
			Name:      "instance_topology_denied_total",
			Help: "Joining Nodes initialized without network-node labels because ec2:DescribeInstanceTopology is denied, " +
				"by whether their instance type matches SupportedTopologyInstanceTypePattern (required: true also gets a Warning event).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"required"}),
	}
	r.MustRegister(m.denials)
	// Both series exist from the start, at 0: an alert on increase() sees
	// the first denial, which a series born at 1 would hide.
	for _, required := range []bool{true, false} {
		m.denials.WithLabelValues(strconv.FormatBool(required)).Add(0)
	}
	return m
}

func (m *Metrics) denied(required bool) {
	if m == nil {
		return
	}
	m.denials.WithLabelValues(strconv.FormatBool(required)).Inc()
}
