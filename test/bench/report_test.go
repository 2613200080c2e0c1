//go:build linux

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"
)

// figure is one measured number of one run.
type figure struct {
	key    string // results.json's figure key, snake_case
	label  string // what is measured, for the table
	format string // how to print the value, e.g. "%.4f"
	value  float64
}

// result is one scenario run on one binary with one flag set at one size.
type result struct {
	group    group
	scenario string
	binary   string // thisBinary or upstreamBinary
	bin      binary
	order    int // 1 = this binary went first
	figures  []figure
	notes    []string
	failed   bool
	skipped  string // why the scenario did not run on this binary

	peakMiB, anonMiB, fileMiB float64 // over the run's CCM processes
}

var (
	reportMu     sync.Mutex
	results      []*result
	skippedNotes []string
	runNotes     []string
	runStart     = time.Now()
)

func newResult(g group, scenario, bin string) *result {
	r := &result{group: g, scenario: scenario, binary: bin}
	reportMu.Lock()
	results = append(results, r)
	reportMu.Unlock()
	return r
}

func noteSkipped(s string) {
	reportMu.Lock()
	skippedNotes = append(skippedNotes, s)
	reportMu.Unlock()
}

func noteRun(s string) {
	reportMu.Lock()
	runNotes = append(runNotes, s)
	reportMu.Unlock()
}

func (r *result) markFailed() {
	reportMu.Lock()
	r.failed = true
	reportMu.Unlock()
}

// record keeps a figure for the table and results.json and reports it as
// a benchmark metric (unit: its key).
func (r *result) record(b *testing.B, key, label, format string, v float64) {
	b.Helper()
	b.ReportMetric(v, key)
	b.Logf("FIGURE %s/%s/%s: %s = "+format, r.group, r.scenario, r.binary, label, v)
	reportMu.Lock()
	r.figures = append(r.figures, figure{key: key, label: label, format: format, value: v})
	reportMu.Unlock()
}

// note adds a line under the table.
func (r *result) note(b *testing.B, format string, args ...any) {
	b.Helper()
	msg := fmt.Sprintf(format, args...)
	b.Log(msg)
	reportMu.Lock()
	r.notes = append(r.notes, msg)
	reportMu.Unlock()
}

// addProcess takes in a stopped CCM's memory figures.
func (r *result) addProcess(c *ccm) {
	reportMu.Lock()
	defer reportMu.Unlock()
	r.peakMiB = math.Max(r.peakMiB, c.peakMiB)
	r.anonMiB = math.Max(r.anonMiB, c.anonMiB)
	r.fileMiB = math.Max(r.fileMiB, c.fileMiB)
}

// finish stops the scenario's CCM processes and records their memory: the
// largest peak RSS (VmHWM) and the largest RssAnon and RssFile sampled
// while they ran.
func finish(b *testing.B, r *result, cs ...*ccm) {
	b.Helper()
	for _, c := range cs {
		c.stop()
		r.addProcess(c)
		b.Logf("%s: peak RSS (VmHWM) %.1f MiB; largest RssAnon %.1f MiB, RssFile %.1f MiB", c.name, c.peakMiB, c.anonMiB, c.fileMiB)
	}
	r.record(b, "peak_rss_mib", "peak RSS (VmHWM), MiB", "%.1f", r.peakMiB)
	r.record(b, "rss_anon_mib", "RssAnon, MiB (largest sampled)", "%.1f", r.anonMiB)
	r.record(b, "rss_file_mib", "RssFile, MiB (largest sampled)", "%.1f", r.fileMiB)
}

// target is this CCM's target for a figure (the issue's), if it has one.
type target struct {
	text  string
	meets func(v float64) bool
}

func le(x float64) func(float64) bool { return func(v float64) bool { return v <= x } }
func ge(x float64) func(float64) bool { return func(v float64) bool { return v >= x } }

// targetFor returns the target of a figure of scenario in group g.
func targetFor(g group, scenario, key string) (target, bool) {
	switch scenario + "/" + key {
	case "join/ec2_calls_per_node":
		return target{"<= 0.01", le(0.01)}, true
	case "join/seconds_initialized":
		if g.flags == flagsRendered && g.nodes == 1000 {
			return target{"<= 5", le(5)}, true
		}
		if g.flags == flagsRendered && g.nodes == 5000 {
			return target{"<= 20", le(20)}, true
		}
	case "idle/ec2_calls_per_status_period":
		want := math.Ceil(float64(g.nodes) / 1000)
		return target{fmt.Sprintf("<= %.0f", want), le(want)}, true
	case "lifecycle/ec2_calls_per_lifecycle_pass":
		return target{"<= 1", le(1)}, true
	case "lifecycle/lifecycle_passes_per_30s":
		return target{">= 5.5 (5 s period holds)", ge(5.5)}, true
	case "lifecycle/nodes_deleted", "throttle/nodes_deleted", "lb/restart_mutating_calls", "lb/touch_mutating_calls", "lb/resources_left":
		return target{"0", le(0)}, true
	case "preflight/seconds":
		return target{"< 5", func(v float64) bool { return v < 5 }}, true
	}
	if strings.HasSuffix(key, "_rss_mib") || key == "peak_rss_mib" {
		return target{"below upstream", nil}, true
	}
	return target{}, false
}

// row is one figure of one scenario in one group, for both binaries.
type row struct {
	group    group
	scenario string
	key      string
	label    string
	format   string
	this     *result
	up       *result
}

// rows groups the results by group, scenario and figure, in run order.
func rows() []row {
	type id struct {
		g  group
		sc string
	}
	var order []id
	byID := map[id][]*result{}
	for _, r := range results {
		k := id{r.group, r.scenario}
		if _, ok := byID[k]; !ok {
			order = append(order, k)
		}
		byID[k] = append(byID[k], r)
	}
	var out []row
	for _, k := range order {
		var this, up *result
		for _, r := range byID[k] {
			if r.binary == thisBinary {
				this = r
			} else {
				up = r
			}
		}
		var keys []figure
		seen := map[string]bool{}
		for _, r := range []*result{this, up} {
			if r == nil {
				continue
			}
			for _, f := range r.figures {
				if !seen[f.key] {
					seen[f.key] = true
					keys = append(keys, f)
				}
			}
		}
		if len(keys) == 0 { // failed or skipped everywhere: one row says so
			keys = []figure{{key: "", label: "(no figure)"}}
		}
		for _, f := range keys {
			out = append(out, row{group: k.g, scenario: k.sc, key: f.key, label: f.label, format: f.format, this: this, up: up})
		}
	}
	return out
}

func (r *result) value(key string) (float64, bool) {
	if r == nil {
		return 0, false
	}
	for _, f := range r.figures {
		if f.key == key {
			return f.value, true
		}
	}
	return 0, false
}

// cell prints one binary's figure, or why there is none.
func cell(r *result, key, format string, bin string) string {
	switch {
	case r == nil && bin == upstreamBinary && !hasUpstream():
		return "not run"
	case r == nil:
		return "-"
	case r.skipped != "":
		return r.skipped
	}
	if v, ok := r.value(key); ok {
		return fmt.Sprintf(format, v)
	}
	if r.failed {
		return "FAILED (bench.log)"
	}
	return "-"
}

// ratio is upstream / this.
func ratio(rw row) string {
	t, okT := rw.this.value(rw.key)
	u, okU := rw.up.value(rw.key)
	switch {
	case !okT || !okU:
		return "-"
	case t == 0 && u == 0:
		return "both 0"
	case t == 0:
		return "inf (this 0)"
	}
	return fmt.Sprintf("%.2f", u/t)
}

func verdict(rw row) string {
	tg, ok := targetFor(rw.group, rw.scenario, rw.key)
	if !ok {
		return ""
	}
	t, okT := rw.this.value(rw.key)
	if !okT {
		return tg.text
	}
	meets := tg.meets
	if meets == nil { // below upstream
		u, okU := rw.up.value(rw.key)
		if !okU {
			return tg.text
		}
		meets = func(v float64) bool { return v < u }
	}
	if meets(t) {
		return tg.text + ": MEETS"
	}
	return tg.text + ": MISSES"
}

// writeReport prints the table and writes results.json and table.md into
// the output folder.
func writeReport(w io.Writer) error {
	reportMu.Lock()
	defer reportMu.Unlock()
	if len(results) == 0 {
		return nil
	}
	rs := rows()
	head := header()
	fmt.Fprintf(w, "\n=== %s ===\n", head)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODES\tFLAGS\tSCENARIO\tFIGURE\tTHIS CCM\tUPSTREAM\tUPSTREAM/THIS\tTARGET (THIS CCM)")
	for _, rw := range rs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", rw.group.nodes, rw.group.flags, rw.scenario, rw.label,
			cell(rw.this, rw.key, rw.format, thisBinary), cell(rw.up, rw.key, rw.format, upstreamBinary), ratio(rw), verdict(rw))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	notes := allNotes()
	for _, n := range notes {
		fmt.Fprintf(w, "  %s\n", n)
	}

	var md strings.Builder
	fmt.Fprintf(&md, "%s\n\n", head)
	md.WriteString("| nodes | flags | scenario | figure | this CCM | upstream | upstream/this | target (this CCM) |\n|---|---|---|---|---|---|---|---|\n")
	for _, rw := range rs {
		fmt.Fprintf(&md, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", rw.group.nodes, rw.group.flags, rw.scenario, rw.label,
			cell(rw.this, rw.key, rw.format, thisBinary), cell(rw.up, rw.key, rw.format, upstreamBinary), ratio(rw), verdict(rw))
	}
	md.WriteString("\n")
	for _, n := range notes {
		fmt.Fprintf(&md, "- %s\n", n)
	}
	if err := os.WriteFile(filepath.Join(env.outDir, "table.md"), []byte(md.String()), 0o644); err != nil {
		return err
	}
	return writeJSON(filepath.Join(env.outDir, "results.json"))
}

func header() string {
	up := "upstream: not run (AWS_CCM_UPSTREAM_BINARY unset; make bench-compare runs it)"
	if hasUpstream() {
		up = "upstream: " + binaryVersion(env.binaries[1].path)
	}
	return fmt.Sprintf("bench: sizes %v, flag sets %v, this CCM: %s, %s, %s; run took %s; %s, %d CPUs", sizes, flagSets(), binaryVersion(env.binaries[0].path), up,
		time.Now().UTC().Format("2006-01-02 15:04 MST"), time.Since(runStart).Round(time.Second), runtime.Version(), runtime.NumCPU())
}

// binaryVersion is the first line of `<path> --version`.
func binaryVersion(path string) string {
	out, err := exec.CommandContext(context.Background(), path, "--version").Output()
	if err != nil {
		return filepath.Base(path)
	}
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

// allNotes are the flag sets, the runs' notes, then what the bounds
// skipped.
func allNotes() []string {
	out := slices.Clone(runNotes)
	first := map[group][]string{}
	var groups []group
	for _, r := range results {
		for _, n := range r.notes {
			out = append(out, fmt.Sprintf("[%s %s %s] %s", r.group, r.scenario, r.binary, n))
		}
		if r.order == 1 && hasUpstream() && r.scenario != scPreflight {
			if _, ok := first[r.group]; !ok {
				groups = append(groups, r.group)
			}
			first[r.group] = append(first[r.group], r.scenario+" "+r.binary)
		}
	}
	for _, g := range groups {
		out = append(out, fmt.Sprintf("[%s] the binary that ran first: %s", g, strings.Join(first[g], ", ")))
	}
	for _, s := range skippedNotes {
		out = append(out, "skipped: "+s)
	}
	return out
}

// The results.json schema (the chart reads it).
type jsonRuns struct {
	Runs []jsonRun `json:"runs"`
}

type jsonRun struct {
	Scenario string             `json:"scenario"`
	Flags    string             `json:"flags"`
	Binary   string             `json:"binary"`
	Nodes    int                `json:"nodes"`
	Figures  map[string]float64 `json:"figures"`
}

// writeJSON writes every run that completed, with the figures it measured.
func writeJSON(path string) error {
	out := jsonRuns{Runs: []jsonRun{}}
	for _, r := range results {
		if r.failed || r.skipped != "" || len(r.figures) == 0 {
			continue
		}
		figs := map[string]float64{}
		for _, f := range r.figures {
			figs[f.key] = f.value
		}
		out.Runs = append(out.Runs, jsonRun{Scenario: r.scenario, Flags: r.group.flags, Binary: r.binary, Nodes: r.group.nodes, Figures: figs})
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
