package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchchart:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	in, out, scenario, title, upstream string
}

func run(args []string, stdout, stderr io.Writer) error {
	o := options{}
	fs := flag.NewFlagSet("benchchart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.in, "in", defaultInputName, "results file the bench wrote ($BENCH_OUT/results.json)")
	fs.StringVar(&o.out, "out", defaultOutput, "chart to write; the extension chooses the format: .svg or .png")
	fs.StringVar(&o.scenario, "scenario", defaultScenario, "scenario whose runs are charted")
	fs.StringVar(&o.title, "title", "", "first line of the chart's title (default names the scenario)")
	fs.StringVar(&o.upstream, "upstream-label", defaultUpstream, `name of the "upstream" binary in the legend, e.g. "upstream v1.37.0"`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return chartFile(o, stdout)
}

// chartFile reads o.in and writes the chart of o.scenario to o.out.
func chartFile(o options, stdout io.Writer) error {
	format, err := formatOf(o.out)
	if err != nil {
		return err
	}
	results, err := readResults(o.in)
	if err != nil {
		return err
	}
	figs := chartedFigures()
	runs, err := runsFor(o.in, results, o.scenario, figs)
	if err != nil {
		return err
	}
	l := labels{upstream: o.upstream}
	d := group(o.scenario, runs, figs, l)
	ch, err := newChart(d, l, o.title, filepath.Base(o.in))
	if err != nil {
		return fmt.Errorf("%s: %w", o.in, err)
	}
	data, err := encode(ch, format)
	if err != nil {
		return err
	}
	if err := writeFile(o.out, data); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "benchchart: wrote %s: %d panels, %d series, %d runs of scenario %q\n", o.out, len(d.panels), len(d.keys), d.runs, o.scenario)
	return nil
}
