// Command benchchart draws the bench's results as a chart: for one scenario,
// seconds until all Nodes are initialized, p99 seconds per Node, EC2 calls per
// joining Node and peak RSS against the Node count, one panel per figure, one
// series per binary ("this" CCM and "upstream") and flag set ("defaults" and
// "rendered"). It is drawn with gonum.org/v1/plot; the output's extension
// chooses SVG (.svg) or PNG (.png).
//
// The input is the bench harness's results file, $BENCH_OUT/results.json:
//
//	{"runs":[{"scenario":"join","flags":"defaults|rendered","binary":"this|upstream",
//	  "nodes":1000,"figures":{"seconds_initialized":3.3,"p99_seconds":1.2,...}}]}
//
// Unknown fields and figure keys are ignored and any figure may be missing.
// Series with runs at several Node counts are drawn as lines through the
// median of each count, every run as a point; a series with one Node count is
// drawn as points only. Binaries or flag sets without runs are named in the
// caption, and a panel's title names the series that lack its figure.
//
// It is its own Go module, so the product's go.mod does not pull in
// gonum/plot and its font and image dependencies. The harness (hack/bench.sh)
// builds it after a bench run and calls it from the repository root; by hand:
//
//	go -C hack/benchchart build -o "$PWD/_output/bin/benchchart" .
//	_output/bin/benchchart -in "$BENCH_OUT/results.json" -out docs/benchmarks-chart.svg -scenario join -upstream-label "upstream v1.37.0"
//
// -title replaces the title's first line; -upstream-label names the upstream
// binary in the legend (default "upstream"). The SVG does not embed its font
// (Liberation Sans) but names Arial, Helvetica and sans-serif as fallbacks.
//
// It exits 1 with a message naming the file and the problem when the input
// cannot be read, is not valid JSON, holds an invalid run, or has no runs
// (or none of the drawn figures) for the scenario.
//
// testdata/sample-chart.svg and .png are drawn from testdata/valid-sample.json,
// made-up figures labelled as sample data in the chart's title; regenerate
// them with `go -C hack/benchchart test . -run TestSampleChart -update`.
package main
