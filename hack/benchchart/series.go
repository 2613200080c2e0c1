package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Binary and flag-set names as the bench harness writes them.
const (
	binaryThis       = "this"
	binaryUpstream   = "upstream"
	flagsDefaults    = "defaults"
	flagsRendered    = "rendered"
	defaultScenario  = "join"
	defaultUpstream  = "upstream"
	defaultOutput    = "docs/benchmarks-chart.svg"
	defaultInputName = "results.json"
)

// figure is one charted figure: a key in a run's figures and how its panel
// is labelled.
type figure struct {
	key   string
	title string
	unit  string
}

// chartedFigures are the figures drawn, in panel order.
func chartedFigures() []figure {
	return []figure{
		{key: "seconds_initialized", title: "Time until all Nodes are initialized", unit: "seconds"},
		{key: "p99_seconds", title: "p99 per Node, registered to initialized", unit: "seconds"},
		{key: "ec2_calls_per_node", title: "EC2 calls per joining Node", unit: "EC2 calls per Node"},
		{key: "peak_rss_mib", title: "Peak RSS of the CCM", unit: "MiB"},
	}
}

// seriesKey identifies a series: one binary with one flag set.
type seriesKey struct {
	Binary string
	Flags  string
}

// labels says how binaries and flag sets are named on the chart.
type labels struct {
	upstream string
}

// binary names a binary for readers.
func (l labels) binary(b string) string {
	switch b {
	case binaryThis:
		return "this CCM"
	case binaryUpstream:
		return l.upstream
	}
	return b
}

// flags names a flag set for readers.
func (labels) flags(f string) string {
	switch f {
	case flagsDefaults:
		return "production defaults"
	case flagsRendered:
		return "flags install renders"
	}
	return fmt.Sprintf("flags %q", f)
}

// series names a series for the legend: the binary and the flag set.
func (l labels) series(k seriesKey) string {
	return l.binary(k.Binary) + ", " + l.flags(k.Flags)
}

// point is one value at a Node count.
type point struct {
	nodes, value float64
}

// series is one binary and flag set's values of one figure.
type series struct {
	key seriesKey
	// runs are every run's value, sorted by Node count.
	runs []point
	// line is the median of runs at each Node count, sorted by Node count.
	line []point
}

// panel is one figure's series.
type panel struct {
	fig    figure
	series []series
	// missing are series of the scenario that have no value of this figure.
	missing []seriesKey
}

// chartData is everything a chart shows.
type chartData struct {
	scenario string
	// keys are all series of the scenario, in legend order.
	keys []seriesKey
	// nodes are the distinct Node counts measured, ascending.
	nodes []float64
	// panels has one panel for each figure with at least one value.
	panels []panel
	// absent names the binaries and flag sets without runs.
	absent []string
	runs   int
}

// group arranges validated runs into panels of series.
func group(scenario string, runs []measuredRun, figs []figure, l labels) chartData {
	d := chartData{scenario: scenario, runs: len(runs)}
	seenKey := map[seriesKey]bool{}
	seenNodes := map[float64]bool{}
	for _, r := range runs {
		if !seenKey[r.key] {
			seenKey[r.key] = true
			d.keys = append(d.keys, r.key)
		}
		if !seenNodes[r.nodes] {
			seenNodes[r.nodes] = true
			d.nodes = append(d.nodes, r.nodes)
		}
	}
	sortKeys(d.keys)
	sort.Float64s(d.nodes)
	d.absent = absent(d.keys, l)

	for _, f := range figs {
		p := panel{fig: f}
		for _, k := range d.keys {
			var pts []point
			for _, r := range runs {
				if v, ok := r.figures[f.key]; ok && r.key == k {
					pts = append(pts, point{nodes: r.nodes, value: v})
				}
			}
			if len(pts) == 0 {
				p.missing = append(p.missing, k)
				continue
			}
			sort.SliceStable(pts, func(i, j int) bool { return pts[i].nodes < pts[j].nodes })
			p.series = append(p.series, series{key: k, runs: pts, line: medians(pts)})
		}
		if len(p.series) > 0 {
			d.panels = append(d.panels, p)
		}
	}
	return d
}

// medians returns the median value at each Node count of points sorted by
// Node count.
func medians(pts []point) []point {
	var out []point
	for i := 0; i < len(pts); {
		j := i
		var vals []float64
		for ; j < len(pts) && pts[j].nodes == pts[i].nodes; j++ {
			vals = append(vals, pts[j].value)
		}
		sort.Float64s(vals)
		m := vals[len(vals)/2]
		if len(vals)%2 == 0 {
			m = (vals[len(vals)/2-1] + m) / 2
		}
		out = append(out, point{nodes: pts[i].nodes, value: m})
		i = j
	}
	return out
}

// rank orders known names first, in the given order, then the rest by name.
func rank(name string, known ...string) int {
	for i, k := range known {
		if name == k {
			return i
		}
	}
	return len(known)
}

// sortKeys puts series in legend order: this CCM before upstream, the flags
// install renders before the defaults, unknown names after, by name.
func sortKeys(keys []seriesKey) {
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if ra, rb := rank(a.Binary, binaryThis, binaryUpstream), rank(b.Binary, binaryThis, binaryUpstream); ra != rb {
			return ra < rb
		}
		if a.Binary != b.Binary {
			return a.Binary < b.Binary
		}
		if ra, rb := rank(a.Flags, flagsRendered, flagsDefaults), rank(b.Flags, flagsRendered, flagsDefaults); ra != rb {
			return ra < rb
		}
		return a.Flags < b.Flags
	})
}

// absent names what is missing for a side-by-side comparison: a binary with
// no runs at all, or without runs for a flag set the other binary has.
func absent(keys []seriesKey, l labels) []string {
	have := map[seriesKey]bool{}
	binaries := map[string]bool{}
	var flagSets []string
	for _, k := range keys {
		have[k] = true
		binaries[k.Binary] = true
		if !slices.Contains(flagSets, k.Flags) {
			flagSets = append(flagSets, k.Flags)
		}
	}
	var out []string
	for _, b := range []string{binaryThis, binaryUpstream} {
		if !binaries[b] {
			out = append(out, "no "+l.binary(b)+" runs")
			continue
		}
		var without []string
		for _, f := range flagSets {
			if !have[seriesKey{Binary: b, Flags: f}] {
				without = append(without, l.flags(f))
			}
		}
		if len(without) > 0 {
			out = append(out, "no "+l.binary(b)+" runs with "+strings.Join(without, " or "))
		}
	}
	return out
}
