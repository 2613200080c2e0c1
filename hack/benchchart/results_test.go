package main

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecodeIgnoresUnknownFields(t *testing.T) {
	const path = "testdata/valid-no-upstream.json"
	r, err := readResults(path)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := runsFor(path, r, "join", chartedFigures())
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("got %d runs, want 2", len(runs))
	}
	want := map[string]float64{"seconds_initialized": 3.3, "p99_seconds": 1.2, "ec2_calls_per_node": 0.002, "peak_rss_mib": 80.9}
	if !maps.Equal(runs[0].figures, want) {
		t.Errorf("run 0 figures = %v, want %v (the string under \"note\" ignored)", runs[0].figures, want)
	}
	// peak_rss_mib is null and p99_seconds absent: both missing, not zero.
	want = map[string]float64{"seconds_initialized": 148.7, "ec2_calls_per_node": 0.006}
	if !maps.Equal(runs[1].figures, want) {
		t.Errorf("run 1 figures = %v, want %v", runs[1].figures, want)
	}
	if got := (seriesKey{Binary: "this", Flags: "defaults"}); runs[1].key != got {
		t.Errorf("run 1 key = %+v, want %+v", runs[1].key, got)
	}
}

func TestDecodeSkipsOtherScenarios(t *testing.T) {
	const path = "testdata/valid-sample.json"
	r, err := readResults(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Runs) != 9 {
		t.Fatalf("decoded %d runs, want all 9", len(r.Runs))
	}
	join, err := runsFor(path, r, "join", chartedFigures())
	if err != nil {
		t.Fatal(err)
	}
	if len(join) != 8 {
		t.Errorf("join has %d runs, want 8", len(join))
	}
	// The idle run has no charted figure; asking for it names the problem.
	if _, err := runsFor(path, r, "idle", chartedFigures()); !errors.Is(err, ErrNoFigures) {
		t.Errorf("idle: err = %v, want ErrNoFigures", err)
	}
}

// TestBadInput runs the command on each kind of bad input: it fails with
// the error for that problem, naming the file and the detail, and writes no
// chart.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		in   string
		out  string
		want error
		// detail is part of the message that says what is wrong.
		detail string
	}{
		{name: "missing file", in: filepath.Join(dir, "absent.json"), want: ErrRead, detail: "no such file or directory"},
		{name: "directory", in: dir, want: ErrRead, detail: "is a directory"},
		{name: "empty file", in: "testdata/invalid-empty.json", want: ErrMalformed, detail: "line 1, column 1: unexpected end of JSON input"},
		{name: "syntax error", in: "testdata/invalid-syntax.json", want: ErrMalformed, detail: "line 3, column 43: invalid character '}'"},
		{name: "trailing data", in: "testdata/invalid-trailing-data.json", want: ErrMalformed, detail: "line 2, column 1"},
		{name: "runs not an array", in: "testdata/invalid-runs-not-array.json", want: ErrMalformed, detail: "runs is JSON object, want an array"},
		{name: "nodes a string", in: "testdata/invalid-nodes-string.json", want: ErrMalformed, detail: "runs.nodes is JSON string, want a number"},
		{name: "no runs", in: "testdata/invalid-no-runs.json", want: ErrNoRuns, detail: `"join" (the file has no runs)`},
		{name: "other scenarios only", in: "testdata/invalid-other-scenarios.json", want: ErrNoRuns, detail: `the file has runs for "idle", "lifecycle"`},
		{name: "nodes zero", in: "testdata/invalid-nodes-zero.json", want: ErrInvalidRun, detail: "runs[0] (binary \"this\", flags \"rendered\", nodes 0): nodes must be a whole number >= 1, got 0"},
		{name: "figure not a number", in: "testdata/invalid-figure-not-a-number.json", want: ErrInvalidRun, detail: `figure seconds_initialized must be a number, got "3.3 s"`},
		{name: "figure negative", in: "testdata/invalid-figure-negative.json", want: ErrInvalidRun, detail: "figure peak_rss_mib must not be negative, got -1"},
		{name: "binary missing", in: "testdata/invalid-binary-missing.json", want: ErrInvalidRun, detail: "binary is missing"},
		{name: "no charted figures", in: "testdata/invalid-no-charted-figures.json", want: ErrNoFigures, detail: "has any of seconds_initialized, p99_seconds, ec2_calls_per_node, peak_rss_mib"},
		{name: "unknown output format", in: "testdata/valid-sample.json", out: filepath.Join(dir, "chart.pdf"), want: ErrOutputFormat, detail: "must end in .svg or .png"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := tt.out
			if out == "" {
				out = filepath.Join(dir, "chart.svg")
			}
			var stdout, stderr bytes.Buffer
			err := run([]string{"-in", tt.in, "-out", out}, &stdout, &stderr)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			named := tt.in
			if errors.Is(tt.want, ErrOutputFormat) {
				named = out
			}
			if msg := err.Error(); !strings.HasPrefix(msg, named+": ") || !strings.Contains(msg, tt.detail) {
				t.Errorf("message %q does not start with the file %q and say %q", msg, named, tt.detail)
			}
			if _, statErr := os.Stat(out); !errors.Is(statErr, os.ErrNotExist) {
				t.Errorf("a chart was written despite the error (stat: %v)", statErr)
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
		})
	}
}

func TestLineColumn(t *testing.T) {
	data := []byte("ab\ncd\n")
	tests := []struct {
		offset        int64
		line, wantCol int
	}{
		{offset: -1, line: 1, wantCol: 1},
		{offset: 0, line: 1, wantCol: 1},
		{offset: 1, line: 1, wantCol: 2},
		{offset: 3, line: 2, wantCol: 1},
		{offset: 4, line: 2, wantCol: 2},
		{offset: 99, line: 3, wantCol: 1},
	}
	for _, tt := range tests {
		line, col := lineColumn(data, tt.offset)
		if line != tt.line || col != tt.wantCol {
			t.Errorf("lineColumn(%d) = %d:%d, want %d:%d", tt.offset, line, col, tt.line, tt.wantCol)
		}
	}
}

// FuzzDecode feeds arbitrary files through decoding, grouping and drawing:
// nothing panics, and what is accepted groups into panels with data.
func FuzzDecode(f *testing.F) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeResults("fuzz.json", data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("decode error %v is not ErrMalformed", err)
			}
			return
		}
		figs := chartedFigures()
		runs, err := runsFor("fuzz.json", r, "join", figs)
		if err != nil {
			return
		}
		l := labels{upstream: "upstream"}
		d := group("join", runs, figs, l)
		if len(d.panels) == 0 {
			t.Fatal("accepted runs grouped into no panel")
		}
		for _, p := range d.panels {
			for _, s := range p.series {
				if len(s.runs) == 0 || len(s.line) == 0 {
					t.Fatalf("panel %s: empty series %+v", p.fig.key, s.key)
				}
			}
		}
		ch, err := newChart(d, l, "", "fuzz.json")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := encode(ch, formatSVG); err != nil {
			t.Fatal(err)
		}
	})
}
