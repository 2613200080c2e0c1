package routes

import "k8s.io/component-base/metrics"

// Metrics show what keeps Nodes from their routes: a route table the CCM
// cannot find (a gauge to alert on) and the Warning events it posts on
// Nodes. A nil *Metrics records nothing.
type Metrics struct {
	problem  *metrics.GaugeVec
	warnings *metrics.CounterVec
}

// Registerer is what the metrics are registered with.
type Registerer interface {
	MustRegister(...metrics.Registerable)
}

// problemLabels are the problem label's values, by TableProblem (stable:
// users alert on them).
var problemLabels = map[TableProblem]string{
	NoTaggedTable:            "no_tagged_table",
	SeveralTaggedTables:      "several_tagged_tables",
	ConfiguredTableMissing:   "configured_table_missing",
	ConfiguredTableElsewhere: "configured_table_elsewhere",
}

// NewMetrics creates the routes' metrics and registers them with r.
func NewMetrics(r Registerer) *Metrics {
	m := &Metrics{
		problem: metrics.NewGaugeVec(&metrics.GaugeOpts{
			Subsystem: "aws_ccm",
			Name:      "route_table_problem",
			Help: "1 while the route controller has no route table to manage, by problem (no_tagged_table, several_tagged_tables, " +
				"configured_table_missing, configured_table_elsewhere); 0 otherwise. No route is created or deleted meanwhile.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"problem"}),
		warnings: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem:      "aws_ccm",
			Name:           "route_node_warnings_total",
			Help:           "Warning events the routes posted on Nodes whose route cannot be made, by reason (AWSRouteTableProblem, AWSRouteLimitExceeded).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"reason"}),
	}
	r.MustRegister(m.problem, m.warnings)
	// Every reason's series exists from the start, at 0: an alert on
	// increase() sees the first warning, which a series born at 1 would
	// hide (a series' first sample has nothing to increase from).
	for _, reason := range []string{ReasonRouteTableProblem, ReasonRouteLimitExceeded} {
		m.warnings.WithLabelValues(reason).Add(0)
	}
	return m
}

// setProblem records the current table problem (0: none).
func (m *Metrics) setProblem(current TableProblem) {
	if m == nil {
		return
	}
	for p, label := range problemLabels {
		v := 0.0
		if p == current {
			v = 1
		}
		m.problem.WithLabelValues(label).Set(v)
	}
}

func (m *Metrics) warned(reason string) {
	if m == nil {
		return
	}
	m.warnings.WithLabelValues(reason).Inc()
}
