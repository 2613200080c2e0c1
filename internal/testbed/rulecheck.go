package testbed

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/yaml"
)

// RuleScrape is one scrape of RuleCheckBinary's samples file: every series
// Prometheus would store from it, at one time.
type RuleScrape struct {
	TimeMs  int64        `json:"timeMs"`
	Samples []RuleSample `json:"samples"`
}

// RuleSample is one series' value. The value is a string, as in
// Prometheus' HTTP API: JSON numbers cannot hold +Inf or NaN.
type RuleSample struct {
	Labels map[string]string `json:"labels"`
	Value  string            `json:"value"`
}

// RuleCheckResult is RuleCheckBinary's answer: per alerting rule, when it
// first went pending and firing (evaluation times in ms, 0 = never) and
// its state at the last evaluation.
type RuleCheckResult struct {
	Rules  int `json:"rules"`
	Alerts []struct {
		Name           string `json:"name"`
		FirstPendingMs int64  `json:"firstPendingMs"`
		FirstFiringMs  int64  `json:"firstFiringMs"`
		FinalState     string `json:"finalState"`
		Error          string `json:"error"`
	} `json:"alerts"`
}

// NewRuleScrape turns gathered metric families into the series Prometheus
// stores for them (histograms and summaries flattened into their _bucket,
// _sum and _count series), with the target labels (job, instance) a
// scrape adds.
func NewRuleScrape(at time.Time, mfs []*dto.MetricFamily, target map[string]string) RuleScrape {
	s := RuleScrape{TimeMs: at.UnixMilli()}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			s.Samples = append(s.Samples, flatten(mf.GetName(), m, target)...)
		}
	}
	return s
}

func flatten(name string, m *dto.Metric, target map[string]string) []RuleSample {
	base := maps.Clone(target)
	if base == nil {
		base = map[string]string{}
	}
	for _, lp := range m.GetLabel() {
		base[lp.GetName()] = lp.GetValue()
	}
	series := func(suffix string, v float64, extra ...string) RuleSample {
		l := maps.Clone(base)
		l["__name__"] = name + suffix
		for i := 0; i+1 < len(extra); i += 2 {
			l[extra[i]] = extra[i+1]
		}
		return RuleSample{Labels: l, Value: strconv.FormatFloat(v, 'g', -1, 64)}
	}
	switch {
	case m.GetCounter() != nil:
		return []RuleSample{series("", m.GetCounter().GetValue())}
	case m.GetGauge() != nil:
		return []RuleSample{series("", m.GetGauge().GetValue())}
	case m.GetHistogram() != nil:
		h := m.GetHistogram()
		out := []RuleSample{series("_sum", h.GetSampleSum()), series("_count", float64(h.GetSampleCount())),
			series("_bucket", float64(h.GetSampleCount()), "le", "+Inf")}
		for _, b := range h.GetBucket() {
			out = append(out, series("_bucket", float64(b.GetCumulativeCount()), "le", strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)))
		}
		return out
	case m.GetSummary() != nil:
		sm := m.GetSummary()
		out := []RuleSample{series("_sum", sm.GetSampleSum()), series("_count", float64(sm.GetSampleCount()))}
		for _, q := range sm.GetQuantile() {
			out = append(out, series("", q.GetValue(), "quantile", strconv.FormatFloat(q.GetQuantile(), 'g', -1, 64)))
		}
		return out
	default:
		return []RuleSample{series("", m.GetUntyped().GetValue())}
	}
}

// WriteRulesFile writes a PrometheusRule object's spec (a Prometheus rules
// file: groups:) into the test's temporary folder and returns its path.
func WriteRulesFile(t testing.TB, prometheusRule map[string]any) string {
	t.Helper()
	b, err := yaml.Marshal(prometheusRule["spec"])
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// EvaluateRules runs RuleCheckBinary: the rules of rulesPath over scrapes,
// evaluated every step from the first scrape's time to the last one's.
// Like Tool, it skips the test when the binary is missing, unless $CI is
// set.
func EvaluateRules(t testing.TB, rulesPath string, step time.Duration, scrapes []RuleScrape) RuleCheckResult {
	t.Helper()
	in, err := json.Marshal(map[string]any{"evalIntervalMs": step.Milliseconds(), "scrapes": scrapes})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "samples.json")
	if err := os.WriteFile(p, in, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := RuleCheck(t, "-rules", rulesPath, "-samples", p)
	if err != nil {
		t.Fatal(err)
	}
	var r RuleCheckResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("rule-check's answer: %v\n%s", err, out)
	}
	return r
}
