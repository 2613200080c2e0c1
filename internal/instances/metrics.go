package instances

import "k8s.io/component-base/metrics"

// Metrics shows how well the view saves calls (lookups answered without
// asking EC2, and how many keys each EC2 call carried) and what the node
// deletion breaker withholds.
type Metrics struct {
	lookups *metrics.CounterVec
	batch   *metrics.HistogramVec
	// tripped is 1 while the Breaker withholds deletions; an alert on it
	// catches a misconfigured CCM before anyone reads its log.
	tripped  *metrics.Gauge
	withheld *metrics.Counter
}

// Registerer is what the metrics are registered with.
type Registerer interface {
	MustRegister(...metrics.Registerable)
}

// NewMetrics creates the view's metrics and registers them with r.
func NewMetrics(r Registerer) *Metrics {
	m := &Metrics{
		lookups: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem:      "aws_ccm",
			Name:           "instance_lookups_total",
			Help:           "Instance lookups by key kind (id, name) and whether the shared view answered from memory (hit) or had to ask EC2 (miss).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"kind", "result"}),
		batch: metrics.NewHistogramVec(&metrics.HistogramOpts{
			Subsystem:      "aws_ccm",
			Name:           "instance_describe_batch_size",
			Help:           "Instances listed per snapshot, or keys per batched lookup, by kind (snapshot, id, name).",
			Buckets:        []float64{1, 2, 5, 10, 25, 50, 100, 150, 500, 1000, 5000},
			StabilityLevel: metrics.ALPHA,
		}, []string{"kind"}),
		tripped: metrics.NewGauge(&metrics.GaugeOpts{
			Subsystem:      "aws_ccm",
			Name:           "node_deletion_breaker_tripped",
			Help:           "1 while the CCM withholds the deletion of Nodes whose instances are missing from EC2 because more are missing at once than --aws-max-absent-node-deletions allows (check the cloud config's region and VPC, and the credentials' account); 0 otherwise.",
			StabilityLevel: metrics.ALPHA,
		}),
		withheld: metrics.NewCounter(&metrics.CounterOpts{
			Subsystem:      "aws_ccm",
			Name:           "node_deletions_withheld_total",
			Help:           "Nodes whose deletion the node deletion breaker withheld, each counted once per trip.",
			StabilityLevel: metrics.ALPHA,
		}),
	}
	r.MustRegister(m.lookups, m.batch, m.tripped, m.withheld)
	return m
}

func (m *Metrics) lookup(kind string, hit bool) {
	if m == nil {
		return
	}
	result := "miss"
	if hit {
		result = "hit"
	}
	m.lookups.WithLabelValues(kind, result).Inc()
}

func (m *Metrics) batchSize(kind string, n int) {
	if m == nil {
		return
	}
	m.batch.WithLabelValues(kind).Observe(float64(n))
}

func (m *Metrics) breakerTripped(on bool) {
	if m == nil {
		return
	}
	if on {
		m.tripped.Set(1)
	} else {
		m.tripped.Set(0)
	}
}

func (m *Metrics) deletionWithheld() {
	if m == nil {
		return
	}
	m.withheld.Inc()
}
