// Command rule-check evaluates Prometheus alerting rules with Prometheus'
// own rule engine (rules, promql, tsdb) over samples a test scraped from
// the CCM, and prints what each alert did, as JSON.
//
//	rule-check -rules rules.yaml                   # parse and validate only
//	rule-check -rules rules.yaml -samples s.json   # evaluate
//
// The rules file is a Prometheus rules file (groups:, the spec of a
// PrometheusRule); it is parsed with rulefmt, which parses every expr with
// the PromQL parser. The samples file is
//
//	{"evalIntervalMs": 30000,
//	 "scrapes": [{"timeMs": 1700000000000,
//	              "samples": [{"labels": {"__name__": "up", "job": "x"}, "value": "1"}]}]}
//
// Values are strings, as in Prometheus' HTTP API, so that +Inf, -Inf and
// NaN (which JSON numbers cannot hold) pass through.
// Every alerting rule is evaluated from the first scrape's time to the last
// one's, every evalIntervalMs, as a Prometheus rule group would be. The
// output lists, per alert, when it first went pending and firing and its
// state at the last evaluation.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/tsdb"
)

type sample struct {
	Labels map[string]string `json:"labels"`
	Value  string            `json:"value"`
}

type scrape struct {
	TimeMs  int64    `json:"timeMs"`
	Samples []sample `json:"samples"`
}

type input struct {
	EvalIntervalMs int64    `json:"evalIntervalMs"`
	Scrapes        []scrape `json:"scrapes"`
}

// alertResult is one alerting rule's course over the evaluations.
type alertResult struct {
	Name string `json:"name"`
	// FirstPendingMs and FirstFiringMs are evaluation times, 0 = never.
	FirstPendingMs int64 `json:"firstPendingMs,omitempty"`
	FirstFiringMs  int64 `json:"firstFiringMs,omitempty"`
	// FinalState is inactive, pending or firing at the last evaluation.
	FinalState string `json:"finalState"`
	// Error is the last evaluation error, if any.
	Error string `json:"error,omitempty"`
}

type output struct {
	Rules       int           `json:"rules"`
	Evaluations int           `json:"evaluations,omitempty"`
	Alerts      []alertResult `json:"alerts"`
}

func main() {
	rulesPath := flag.String("rules", "", "Prometheus rules file (groups:)")
	samplesPath := flag.String("samples", "", "samples JSON; without it the rules are only parsed and validated")
	flag.Parse()
	out, err := run(*rulesPath, *samplesPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rule-check:", err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "rule-check:", err)
		os.Exit(1)
	}
}

func run(rulesPath, samplesPath string) (*output, error) {
	if rulesPath == "" {
		return nil, errors.New("-rules is required")
	}
	content, err := os.ReadFile(rulesPath)
	if err != nil {
		return nil, err
	}
	p := parser.NewParser(parser.Options{})
	groups, errs := rulefmt.Parse(content, false, model.UTF8Validation, p, slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %w", rulesPath, errors.Join(errs...))
	}
	var alerting []*rules.AlertingRule
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			expr, err := p.ParseExpr(r.Expr)
			if err != nil {
				return nil, fmt.Errorf("alert %s: %w", r.Alert, err)
			}
			alerting = append(alerting, rules.NewAlertingRule(r.Alert, expr, time.Duration(r.For), time.Duration(r.KeepFiringFor),
				labels.FromMap(r.Labels), labels.FromMap(r.Annotations), labels.EmptyLabels(), "", false, slog.New(slog.DiscardHandler)))
		}
	}
	out := &output{Rules: len(alerting)}
	if samplesPath == "" {
		for _, r := range alerting {
			out.Alerts = append(out.Alerts, alertResult{Name: r.Name(), FinalState: rules.StateInactive.String()})
		}
		return out, nil
	}
	in, err := readSamples(samplesPath)
	if err != nil {
		return nil, err
	}
	return evaluate(alerting, in, out)
}

func readSamples(path string) (*input, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var in input
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(in.Scrapes) == 0 || in.EvalIntervalMs <= 0 {
		return nil, fmt.Errorf("%s: want scrapes and a positive evalIntervalMs", path)
	}
	sort.Slice(in.Scrapes, func(i, j int) bool { return in.Scrapes[i].TimeMs < in.Scrapes[j].TimeMs })
	return &in, nil
}

// evaluate appends the scrapes to a TSDB in a temporary folder and runs
// every rule over them.
func evaluate(alerting []*rules.AlertingRule, in *input, out *output) (*output, error) {
	dir, err := os.MkdirTemp("", "rule-check-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	opts := tsdb.DefaultOptions()
	// One long block: the samples may span days of (compressed) time.
	opts.MinBlockDuration = int64(24 * time.Hour / time.Millisecond)
	opts.MaxBlockDuration = opts.MinBlockDuration
	db, err := tsdb.Open(dir, nil, nil, opts, nil)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ctx := context.Background()
	for _, s := range in.Scrapes {
		app := db.Appender(ctx)
		for _, smp := range s.Samples {
			v, err := strconv.ParseFloat(smp.Value, 64)
			if err != nil {
				_ = app.Rollback()
				return nil, fmt.Errorf("sample %v at %d: value %q: %w", smp.Labels, s.TimeMs, smp.Value, err)
			}
			if _, err := app.Append(0, labels.FromMap(smp.Labels), s.TimeMs, v); err != nil {
				_ = app.Rollback()
				return nil, fmt.Errorf("append %v at %d: %w", smp.Labels, s.TimeMs, err)
			}
		}
		if err := app.Commit(); err != nil {
			return nil, err
		}
	}
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 50_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	query := rules.EngineQueryFunc(engine, db)
	results := make([]alertResult, len(alerting))
	first, last := in.Scrapes[0].TimeMs, in.Scrapes[len(in.Scrapes)-1].TimeMs
	for ts := first; ts <= last; ts += in.EvalIntervalMs {
		out.Evaluations++
		at := time.UnixMilli(ts)
		for i, r := range alerting {
			res := &results[i]
			res.Name = r.Name()
			if _, err := r.Eval(ctx, 0, at, query, nil, 0); err != nil {
				res.Error = err.Error()
			}
			// What a rule group records after each evaluation; State
			// reads it.
			r.SetEvaluationTimestamp(at)
			state := r.State()
			res.FinalState = state.String()
			if state == rules.StatePending && res.FirstPendingMs == 0 {
				res.FirstPendingMs = ts
			}
			if state == rules.StateFiring && res.FirstFiringMs == 0 {
				res.FirstFiringMs = ts
				if res.FirstPendingMs == 0 { // for: 0s fires at once
					res.FirstPendingMs = ts
				}
			}
		}
	}
	out.Alerts = results
	return out, nil
}
