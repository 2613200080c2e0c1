package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/sample-chart.svg and .png")

// sampleTitle marks the sample chart as made-up data.
const sampleTitle = "SAMPLE DATA: made up to test the chart, not measured"

// svgTexts parses an SVG document as XML and returns the content of its
// <text> elements in document order.
func svgTexts(t *testing.T, svg []byte) []string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var texts []string
	var in bool
	var cur strings.Builder
	sawRoot := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if tok.Name.Local == "svg" {
				sawRoot = true
			}
			if tok.Name.Local == "text" {
				in = true
				cur.Reset()
			}
		case xml.CharData:
			if in {
				cur.Write(tok)
			}
		case xml.EndElement:
			if tok.Name.Local == "text" {
				in = false
				texts = append(texts, cur.String())
			}
		}
	}
	if !sawRoot {
		t.Fatal("no <svg> element")
	}
	return texts
}

func chartTo(t *testing.T, in, out string, args ...string) {
	t.Helper()
	var stdout bytes.Buffer
	if err := run(append([]string{"-in", in, "-out", out}, args...), &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "wrote "+out) {
		t.Errorf("stdout = %q, want it to name %s", stdout.String(), out)
	}
}

func TestSVGNamesTheSeries(t *testing.T) {
	out := filepath.Join(t.TempDir(), "docs", "chart.svg")
	chartTo(t, "testdata/valid-sample.json", out, "-upstream-label", "upstream v1.37.0")
	svg, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, svg)
	for _, want := range []string{
		// The legend: each binary with each flag set.
		"this CCM, flags install renders",
		"this CCM, production defaults",
		"upstream v1.37.0, flags install renders",
		"upstream v1.37.0, production defaults",
		// Panel titles, axis labels with units, the Node counts.
		"Time until all Nodes are initialized",
		"p99 per Node, registered to initialized",
		"EC2 calls per joining Node",
		"Peak RSS of the CCM",
		"seconds (log scale)",
		"EC2 calls per Node (log scale)",
		"MiB",
		"Nodes (log scale)",
		"100", "1,000", "5,000",
		"This CCM and upstream on the bench, against the Node count",
	} {
		if !slices.Contains(texts, want) {
			t.Errorf("no <text> %q in the SVG; texts: %q", want, texts)
		}
	}
	for _, text := range texts {
		if strings.HasPrefix(text, "Not measured") || strings.HasPrefix(text, "no data") {
			t.Errorf("complete data, yet the chart says %q", text)
		}
	}
	if !bytes.Contains(svg, []byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")) {
		t.Error("the SVG names no fallback font for Liberation Sans")
	}
}

func TestSVGSaysWhatIsMissing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "chart.svg")
	chartTo(t, "testdata/valid-no-upstream.json", out)
	svg, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, svg)
	for _, want := range []string{
		"this CCM, flags install renders",
		"this CCM, production defaults",
		"Not measured: no upstream runs.",
		// Two panels lack the defaults run's value.
		"no data: this CCM, production defaults",
	} {
		if !slices.Contains(texts, want) {
			t.Errorf("no <text> %q in the SVG; texts: %q", want, texts)
		}
	}
	n := 0
	for _, text := range texts {
		if strings.HasPrefix(text, "upstream") {
			t.Errorf("no upstream runs, yet the legend has %q", text)
		}
		if text == "no data: this CCM, production defaults" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d panels say the defaults run lacks their figure, want 2 (p99 and RSS)", n)
	}
}

func TestPNG(t *testing.T) {
	out := filepath.Join(t.TempDir(), "chart.PNG")
	chartTo(t, "testdata/valid-sample.json", out)
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	b := img.Bounds()
	if b.Dx() < 1000 || b.Dy() < 800 {
		t.Errorf("PNG is %dx%d, want at least 1000x800 at %d dpi", b.Dx(), b.Dy(), pngDPI)
	}
	colours := binaryColours()
	for i, name := range []string{"this CCM", "upstream"} {
		if n := countColour(img, colours[i]); n < 100 {
			t.Errorf("%d pixels of %s's colour, want its series drawn", n, name)
		}
	}
}

func countColour(img image.Image, c color.Color) int {
	wr, wg, wb, _ := c.RGBA()
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r == wr && g == wg && bl == wb {
				n++
			}
		}
	}
	return n
}

func TestSVGIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.svg"), filepath.Join(dir, "b.svg")
	chartTo(t, "testdata/valid-sample.json", a)
	chartTo(t, "testdata/valid-sample.json", b)
	// Two files that could not be read (or are empty) would compare equal.
	read := func(path string) []byte {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte("<svg")) {
			t.Fatalf("%s is not an SVG (%d bytes)", path, len(data))
		}
		return data
	}
	if !bytes.Equal(read(a), read(b)) {
		t.Error("two charts of the same results differ")
	}
}

// TestSampleChart keeps testdata/sample-chart.svg, drawn from the sample
// results, in step with the code; -update redraws it and its PNG.
func TestSampleChart(t *testing.T) {
	const in, golden = "testdata/valid-sample.json", "testdata/sample-chart.svg"
	args := []string{"-title", sampleTitle}
	if *update {
		chartTo(t, in, golden, args...)
		chartTo(t, in, "testdata/sample-chart.png", args...)
	}
	out := filepath.Join(t.TempDir(), "sample.svg")
	chartTo(t, in, out, args...)
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to draw it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale; run go test ./hack/benchchart -run TestSampleChart -update", golden)
	}
	if texts := svgTexts(t, want); !slices.Contains(texts, sampleTitle) {
		t.Errorf("%s is not titled as sample data", golden)
	}
}

func TestNodeAxis(t *testing.T) {
	tests := []struct {
		name   string
		nodes  []float64
		log    bool
		labels []string
	}{
		{name: "decades", nodes: []float64{100, 1000, 5000}, log: true, labels: []string{"100", "1,000", "5,000"}},
		{name: "one count", nodes: []float64{1000}, labels: []string{"1,000"}},
		{name: "close counts", nodes: []float64{1000, 2000, 3000}, labels: []string{"1,000", "2,000", "3,000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := nodeAxis(tt.nodes)
			if s.log != tt.log {
				t.Errorf("log = %v, want %v", s.log, tt.log)
			}
			if s.min >= tt.nodes[0] || s.max <= tt.nodes[len(tt.nodes)-1] {
				t.Errorf("range %v..%v does not hold %v inside", s.min, s.max, tt.nodes)
			}
			var labels []string
			for _, tk := range s.ticks.Ticks(s.coord(s.min), s.coord(s.max)) {
				labels = append(labels, tk.Label)
				if want := s.coord(parseNumber(t, tk.Label)); math.Abs(tk.Value-want) > 1e-9 {
					t.Errorf("tick %q at %v, want %v", tk.Label, tk.Value, want)
				}
			}
			if !reflect.DeepEqual(labels, tt.labels) {
				t.Errorf("tick labels = %q, want %q", labels, tt.labels)
			}
		})
	}
}

func TestValueAxis(t *testing.T) {
	tests := []struct {
		name     string
		values   []float64
		log      bool
		min, max float64
		labels   []string
	}{
		{name: "decades", values: []float64{0.0008, 3.0}, log: true, min: 0.0001, max: 10, labels: []string{"0.0001", "0.001", "0.01", "0.1", "1", "10"}},
		{name: "three decades", values: []float64{0.6, 31}, log: true, min: 0.1, max: 100, labels: []string{"0.1", "1", "10", "100"}},
		{name: "two decades label 2 and 5", values: []float64{1.5, 60}, log: true, min: 1, max: 100, labels: []string{"1", "2", "5", "10", "20", "50", "100"}},
		{name: "a zero forbids log", values: []float64{0, 0.002, 3.0}, min: 0, max: 3.3},
		{name: "narrow range is linear from zero", values: []float64{62, 190}, min: 0, max: 209},
		{name: "all zero", values: []float64{0, 0}, min: 0, max: 1.1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := valueAxis(tt.values)
			if s.log != tt.log || math.Abs(s.min-tt.min) > 1e-9 || math.Abs(s.max-tt.max) > 1e-9 {
				t.Fatalf("axis log=%v %v..%v, want log=%v %v..%v", s.log, s.min, s.max, tt.log, tt.min, tt.max)
			}
			ticks := s.ticks.Ticks(s.coord(s.min), s.coord(s.max))
			var labels []string
			for _, tk := range ticks {
				if tk.Label == "" {
					continue
				}
				labels = append(labels, tk.Label)
				if want := s.coord(parseNumber(t, tk.Label)); math.Abs(tk.Value-want) > 1e-9 {
					t.Errorf("tick %q at %v, want %v", tk.Label, tk.Value, want)
				}
			}
			if tt.labels != nil && !reflect.DeepEqual(labels, tt.labels) {
				t.Errorf("labels = %q, want %q", labels, tt.labels)
			}
			if len(labels) < 2 {
				t.Errorf("labels = %q, want at least two", labels)
			}
		})
	}
}

func parseNumber(t *testing.T, label string) float64 {
	t.Helper()
	var v float64
	if _, err := fmt.Sscan(strings.ReplaceAll(label, ",", ""), &v); err != nil {
		t.Fatalf("tick label %q is not a number: %v", label, err)
	}
	return v
}

func TestFormatNumber(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{0, "0"}, {0.001, "0.001"}, {0.1 + 0.2, "0.3"}, {80.9, "80.9"}, {999, "999"},
		{1000, "1,000"}, {5000, "5,000"}, {1234567, "1,234,567"}, {-1000, "-1,000"}, {1500.5, "1500.5"},
		{1e-300, "1e-300"}, {1e300, "1e+300"}, {0.00001, "1e-05"},
	}
	for _, tt := range tests {
		if got := formatNumber(tt.v); got != tt.want {
			t.Errorf("formatNumber(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestGrid(t *testing.T) {
	for n, want := range map[int][2]int{1: {1, 1}, 2: {1, 2}, 3: {1, 3}, 4: {2, 2}} {
		if r, c := grid(n); r != want[0] || c != want[1] {
			t.Errorf("grid(%d) = %dx%d, want %dx%d", n, r, c, want[0], want[1])
		}
	}
}
