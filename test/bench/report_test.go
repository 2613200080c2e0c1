//go:build linux

package bench

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"
)

// figure is one measured number next to upstream's and the target.
type figure struct {
	name     string  // what is measured
	unit     string  // b.ReportMetric unit
	value    float64 // the measurement
	format   string  // how to print value, e.g. "%.4f"
	upstream string  // upstream's figure (targets.md)
	target   string  // our target (targets.md); "" = for information
	meets    func(v float64) bool
}

type scenarioResult struct {
	name    string
	figures []figure
	notes   []string
	failed  bool
}

var (
	reportMu  sync.Mutex
	scenarios []*scenarioResult
	rssMiB    = map[string]float64{} // peak RSS per CCM process, by scenario
	rssSplit  = map[string]string{}  // RssAnon / RssFile when it stopped
	runStart  = time.Now()
)

// beginScenario registers a scenario in the report; a benchmark that fails
// is listed as FAILED.
func beginScenario(b *testing.B, name string) *scenarioResult {
	b.Helper()
	b.ReportMetric(0, "ns/op") // one run of a scenario: ns/op means nothing
	s := &scenarioResult{name: name}
	reportMu.Lock()
	scenarios = append(scenarios, s)
	reportMu.Unlock()
	b.Cleanup(func() {
		if b.Failed() {
			reportMu.Lock()
			s.failed = true
			reportMu.Unlock()
		}
	})
	return s
}

// record reports f as a benchmark metric, logs it and keeps it for the table.
func (s *scenarioResult) record(b *testing.B, f figure) {
	b.Helper()
	b.ReportMetric(f.value, f.unit)
	b.Logf("FIGURE %s: %s = "+f.format+" (upstream %s, target %s) %s", s.name, f.name, f.value, f.upstream, orDash(f.target), f.verdict())
	reportMu.Lock()
	s.figures = append(s.figures, f)
	reportMu.Unlock()
}

// note adds a line under the table (flags that differ from production, why).
func (s *scenarioResult) note(b *testing.B, format string, args ...any) {
	b.Helper()
	msg := fmt.Sprintf(format, args...)
	b.Log(msg)
	reportMu.Lock()
	s.notes = append(s.notes, msg)
	reportMu.Unlock()
}

func (f figure) verdict() string {
	switch {
	case f.meets == nil:
		return "info"
	case f.meets(f.value):
		return "MEETS"
	default:
		return "MISSES"
	}
}

func recordRSS(scenario string, peak, anon, file float64) {
	reportMu.Lock()
	defer reportMu.Unlock()
	rssMiB[scenario] = peak
	rssSplit[scenario] = fmt.Sprintf("anon %.0f + file %.0f", anon, file)
}

// peakRSS is the largest VmHWM of the CCM processes stopped so far.
func peakRSS() (max float64, per string) {
	reportMu.Lock()
	defer reportMu.Unlock()
	var parts []string
	for name, v := range rssMiB {
		parts = append(parts, fmt.Sprintf("%s %.1f (at stop: %s)", name, v, rssSplit[name]))
		if v > max {
			max = v
		}
	}
	sort.Strings(parts)
	return max, strings.Join(parts, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printReport prints the results table after all scenarios ran.
func printReport(w io.Writer) {
	reportMu.Lock()
	defer reportMu.Unlock()
	if len(scenarios) == 0 {
		return
	}
	fmt.Fprintf(w, "\n=== make bench: %d nodes, %s, run took %s ===\n", clusterNodes, time.Now().UTC().Format("2006-01-02 15:04 MST"), time.Since(runStart).Round(time.Second))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tFIGURE\tUPSTREAM\tTARGET\tMEASURED\tVERDICT")
	for _, s := range scenarios {
		if s.failed {
			fmt.Fprintf(tw, "%s\t(scenario did not complete)\t\t\t\tFAILED\n", s.name)
		}
		for _, f := range s.figures {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t"+f.format+"\t%s\n", s.name, f.name, f.upstream, orDash(f.target), f.value, f.verdict())
		}
	}
	tw.Flush()
	for _, s := range scenarios {
		for _, n := range s.notes {
			fmt.Fprintf(w, "  [%s] %s\n", s.name, n)
		}
	}
}
