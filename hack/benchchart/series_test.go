package main

import (
	"reflect"
	"testing"
)

func run1(binary, flags string, nodes float64, figs map[string]float64) measuredRun {
	return measuredRun{key: seriesKey{Binary: binary, Flags: flags}, nodes: nodes, figures: figs}
}

func TestGroup(t *testing.T) {
	l := labels{upstream: "upstream"}
	runs := []measuredRun{
		run1("upstream", "rendered", 1000, map[string]float64{"seconds_initialized": 6.1, "peak_rss_mib": 110}),
		run1("this", "defaults", 1000, map[string]float64{"seconds_initialized": 148.7}),
		run1("this", "rendered", 5000, map[string]float64{"seconds_initialized": 15, "peak_rss_mib": 130}),
		run1("this", "rendered", 100, map[string]float64{"seconds_initialized": 0.6, "peak_rss_mib": 60}),
		// Three repeats at 1,000: the line goes through their median.
		run1("this", "rendered", 1000, map[string]float64{"seconds_initialized": 3.5, "peak_rss_mib": 81}),
		run1("this", "rendered", 1000, map[string]float64{"seconds_initialized": 3.1, "peak_rss_mib": 80}),
		run1("this", "rendered", 1000, map[string]float64{"seconds_initialized": 3.3}),
	}
	d := group("join", runs, chartedFigures(), l)

	wantKeys := []seriesKey{{"this", "rendered"}, {"this", "defaults"}, {"upstream", "rendered"}}
	if !reflect.DeepEqual(d.keys, wantKeys) {
		t.Errorf("keys = %v, want %v", d.keys, wantKeys)
	}
	if want := []float64{100, 1000, 5000}; !reflect.DeepEqual(d.nodes, want) {
		t.Errorf("nodes = %v, want %v", d.nodes, want)
	}
	if want := []string{"no upstream runs with production defaults"}; !reflect.DeepEqual(d.absent, want) {
		t.Errorf("absent = %q, want %q", d.absent, want)
	}
	// p99 and EC2 calls have no values: no panels for them.
	if len(d.panels) != 2 || d.panels[0].fig.key != "seconds_initialized" || d.panels[1].fig.key != "peak_rss_mib" {
		t.Fatalf("panels = %+v, want seconds_initialized then peak_rss_mib", d.panels)
	}

	secs := d.panels[0]
	if len(secs.series) != 3 || len(secs.missing) != 0 {
		t.Fatalf("seconds panel: %d series, missing %v; want 3, none", len(secs.series), secs.missing)
	}
	this := secs.series[0]
	if this.key != (seriesKey{"this", "rendered"}) {
		t.Fatalf("first series = %+v", this.key)
	}
	wantRuns := []point{{100, 0.6}, {1000, 3.5}, {1000, 3.1}, {1000, 3.3}, {5000, 15}}
	if !reflect.DeepEqual(this.runs, wantRuns) {
		t.Errorf("runs = %v, want %v (every run, by Node count, in file order within one)", this.runs, wantRuns)
	}
	wantLine := []point{{100, 0.6}, {1000, 3.3}, {5000, 15}}
	if !reflect.DeepEqual(this.line, wantLine) {
		t.Errorf("line = %v, want %v", this.line, wantLine)
	}
	if got := secs.series[1].line; !reflect.DeepEqual(got, []point{{1000, 148.7}}) {
		t.Errorf("defaults line = %v, want its one point", got)
	}

	rss := d.panels[1]
	if want := []seriesKey{{"this", "defaults"}}; !reflect.DeepEqual(rss.missing, want) {
		t.Errorf("RSS panel missing = %v, want %v", rss.missing, want)
	}
	// Two values at 1,000 (the third run has no RSS): their mean.
	if got := rss.series[0].line[1]; got != (point{1000, 80.5}) {
		t.Errorf("RSS median at 1,000 = %v, want 80.5", got)
	}
}

func TestAbsent(t *testing.T) {
	l := labels{upstream: "upstream v1.37.0"}
	tests := []struct {
		name string
		keys []seriesKey
		want []string
	}{
		{name: "both, both flag sets", keys: []seriesKey{{"this", "rendered"}, {"this", "defaults"}, {"upstream", "rendered"}, {"upstream", "defaults"}}},
		{name: "no upstream", keys: []seriesKey{{"this", "rendered"}, {"this", "defaults"}}, want: []string{"no upstream v1.37.0 runs"}},
		{name: "no this", keys: []seriesKey{{"upstream", "rendered"}}, want: []string{"no this CCM runs"}},
		{name: "upstream lacks a flag set", keys: []seriesKey{{"this", "rendered"}, {"this", "defaults"}, {"upstream", "rendered"}}, want: []string{"no upstream v1.37.0 runs with production defaults"}},
		{name: "each lacks one", keys: []seriesKey{{"this", "rendered"}, {"upstream", "defaults"}}, want: []string{"no this CCM runs with production defaults", "no upstream v1.37.0 runs with flags install renders"}},
		{name: "unknown flag set", keys: []seriesKey{{"this", "rendered"}, {"this", "tuned"}, {"upstream", "rendered"}}, want: []string{`no upstream v1.37.0 runs with flags "tuned"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := absent(tt.keys, l); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("absent = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSortKeys(t *testing.T) {
	keys := []seriesKey{{"zz", "a"}, {"upstream", "defaults"}, {"this", "x"}, {"aa", "b"}, {"this", "defaults"}, {"upstream", "rendered"}, {"this", "rendered"}}
	sortKeys(keys)
	want := []seriesKey{{"this", "rendered"}, {"this", "defaults"}, {"this", "x"}, {"upstream", "rendered"}, {"upstream", "defaults"}, {"aa", "b"}, {"zz", "a"}}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("sorted = %v, want %v", keys, want)
	}
}

func TestSeriesLabels(t *testing.T) {
	l := labels{upstream: "upstream v1.37.0"}
	tests := []struct {
		key  seriesKey
		want string
	}{
		{seriesKey{"this", "rendered"}, "this CCM, flags install renders"},
		{seriesKey{"upstream", "defaults"}, "upstream v1.37.0, production defaults"},
		{seriesKey{"patched", "tuned"}, `patched, flags "tuned"`},
	}
	for _, tt := range tests {
		if got := l.series(tt.key); got != tt.want {
			t.Errorf("series(%+v) = %q, want %q", tt.key, got, tt.want)
		}
	}
}
