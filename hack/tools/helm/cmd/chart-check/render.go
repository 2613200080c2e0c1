package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/yaml"
)

// renderResult is render's output.
type renderResult struct {
	Objects []json.RawMessage `json:"objects"`
	Hooks   []json.RawMessage `json:"hooks"`
	Notes   string            `json:"notes"`
	Error   string            `json:"error"`
}

// lintResult is lint's output.
type lintResult struct {
	Messages []lintMessage `json:"messages"`
	Errors   []string      `json:"errors"`
	Error    string        `json:"error"`
}

type lintMessage struct {
	Severity string `json:"severity"` // INFO, WARNING, ERROR or UNKNOWN
	Path     string `json:"path"`
	Message  string `json:"message"`
}

// schemaResult is schema's output.
type schemaResult struct {
	Error string `json:"error"`
}

func render(o options) (any, error) {
	res := renderResult{Objects: []json.RawMessage{}, Hooks: []json.RawMessage{}}
	chrt, vals, kv, err := loadInputs(o)
	if err != nil {
		return failed(&res, &res.Error, err)
	}
	// What `helm template` sets: a client-side dry run (fake kube client,
	// releases in memory) that does not check the name is free.
	i := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	i.DryRun, i.DryRunOption, i.ClientOnly, i.Replace = true, "true", true, true
	i.ReleaseName, i.Namespace, i.KubeVersion = o.release, o.namespace, kv
	rel, err := i.Run(chrt, vals)
	if err != nil {
		return failed(&res, &res.Error, err)
	}
	if res.Objects, err = decodeManifests(rel.Manifest); err != nil {
		return failed(&res, &res.Error, err)
	}
	for _, h := range rel.Hooks {
		obj, err := yaml.YAMLToJSON([]byte(h.Manifest))
		if err != nil {
			return failed(&res, &res.Error, fmt.Errorf("hook %s: %w", h.Path, err))
		}
		res.Hooks = append(res.Hooks, obj)
	}
	if rel.Info != nil {
		res.Notes = rel.Info.Notes
	}
	return res, nil
}

// decodeManifests turns a release's manifest (documents separated by
// "---", in install order) into one JSON object per non-empty document.
func decodeManifests(manifest string) ([]json.RawMessage, error) {
	docs := releaseutil.SplitManifests(manifest)
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	out := []json.RawMessage{}
	for _, k := range keys {
		// SplitManifests trims each document; Helm's own manifest ends
		// each with a line break again, which a block scalar ending the
		// document keeps (a text ending in "\n").
		obj, err := yaml.YAMLToJSON([]byte(docs[k] + "\n"))
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w\n%s", k, err, docs[k])
		}
		if bytes.Equal(obj, []byte("null")) {
			continue
		}
		out = append(out, obj)
	}
	return out, nil
}

func lint(o options) (any, error) {
	res := lintResult{Messages: []lintMessage{}, Errors: []string{}}
	// The linter loads the chart itself: a broken chart is one of its
	// messages, not a failure to start.
	vals, kv, err := loadValues(o)
	if err != nil {
		return failed(&res, &res.Error, err)
	}
	l := action.NewLint()
	l.Strict = true // a warning fails the lint, as `helm lint --strict`
	l.Namespace, l.KubeVersion = o.namespace, kv
	if l.Namespace == "" {
		l.Namespace = "default" // helm lint's namespace without a context
	}
	r := l.Run([]string{o.chart}, vals)
	severities := []string{"UNKNOWN", "INFO", "WARNING", "ERROR"}
	for _, m := range r.Messages {
		sev := "UNKNOWN"
		if m.Severity >= 0 && m.Severity < len(severities) {
			sev = severities[m.Severity]
		}
		res.Messages = append(res.Messages, lintMessage{Severity: sev, Path: m.Path, Message: m.Err.Error()})
	}
	for _, e := range r.Errors {
		res.Errors = append(res.Errors, e.Error())
	}
	if len(r.Errors) > 0 || action.HasWarningsOrErrors(r) {
		return failed(&res, &res.Error, fmt.Errorf("helm lint --strict: %d error(s), %d message(s) at warning or above", len(r.Errors), countAtLeast(r.Messages, support.WarningSev)))
	}
	return res, nil
}

func countAtLeast(msgs []support.Message, sev int) int {
	n := 0
	for _, m := range msgs {
		if m.Severity >= sev {
			n++
		}
	}
	return n
}

func schema(o options) (any, error) {
	var res schemaResult
	chrt, vals, _, err := loadInputs(o)
	if err != nil {
		return failed(&res, &res.Error, err)
	}
	// As an install does: the chart's values.yaml under the given values.
	coalesced, err := chartutil.CoalesceValues(chrt, vals)
	if err != nil {
		return failed(&res, &res.Error, err)
	}
	if err := chartutil.ValidateAgainstSchema(chrt, coalesced); err != nil {
		return failed(&res, &res.Error, err)
	}
	return res, nil
}

// failed records Helm's refusal in the result's error field.
func failed[R any](res *R, field *string, err error) (any, error) {
	if ue := (*usageError)(nil); errors.As(err, &ue) {
		return nil, err
	}
	*field = err.Error()
	return *res, &refusal{err}
}

// loadInputs loads the chart and its values (loadValues).
func loadInputs(o options) (*chart.Chart, map[string]any, *chartutil.KubeVersion, error) {
	vals, kv, err := loadValues(o)
	if err != nil {
		return nil, nil, nil, err
	}
	chrt, err := loader.Load(o.chart)
	if err != nil {
		return nil, nil, nil, err
	}
	return chrt, vals, kv, nil
}

// loadValues merges the values as helm's flags do and parses the
// Kubernetes version. A missing file is a usage error; what Helm makes of
// the files' contents is its answer.
func loadValues(o options) (map[string]any, *chartutil.KubeVersion, error) {
	if err := checkFiles(o); err != nil {
		return nil, nil, err
	}
	kv, err := chartutil.ParseKubeVersion(o.kubeVersion)
	if err != nil {
		return nil, nil, &usageError{fmt.Sprintf("--kube-version %q: %v", o.kubeVersion, err)}
	}
	vopts := values.Options{ValueFiles: o.valueFiles, Values: o.sets}
	vals, err := vopts.MergeValues(getter.Providers{})
	if err != nil {
		return nil, nil, err
	}
	return vals, kv, nil
}

// checkFiles reports a chart folder or values file that is not there.
func checkFiles(o options) error {
	paths := append([]string{}, o.valueFiles...)
	if o.chart != "" {
		paths = append(paths, o.chart)
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return &usageError{err.Error()}
		}
	}
	return nil
}
