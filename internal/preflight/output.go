package preflight

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// Output formats of the report.
const (
	FormatText  = "text"
	FormatJSON  = "json"
	FormatJUnit = "junit"
)

// Write renders the report in format. Color adds ANSI colours to text
// (only when writing to a terminal).
func Write(w io.Writer, r Report, format string, color bool) error {
	switch format {
	case FormatText:
		return WriteText(w, r, color)
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case FormatJUnit:
		return WriteJUnit(w, r)
	default:
		return fmt.Errorf("output format %q: want %s, %s or %s", format, FormatText, FormatJSON, FormatJUnit)
	}
}

var marks = map[Status]string{StatusPass: "✓", StatusWarn: "!", StatusFail: "✗", StatusSkip: "-"}

var colors = map[Status]string{StatusPass: "\x1b[32m", StatusWarn: "\x1b[33m", StatusFail: "\x1b[31m", StatusSkip: "\x1b[90m"}

// WriteText writes one line per check, grouped by category in first-seen
// order, with the fix under each problem and a summary line.
func WriteText(w io.Writer, r Report, color bool) error {
	var b strings.Builder
	for i, cat := range categories(r) {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(cat + "\n" + strings.Repeat("-", len(cat)) + "\n")
		for _, f := range r.Findings {
			if f.Category != cat {
				continue
			}
			mark := marks[f.Status]
			if color {
				mark = colors[f.Status] + mark + "\x1b[0m"
			}
			fmt.Fprintf(&b, "%s %s [%s]", mark, f.Title, f.ID)
			if f.Message != "" {
				fmt.Fprintf(&b, ": %s", f.Message)
			}
			if f.Ignored {
				b.WriteString(" (ignored)")
			}
			b.WriteString("\n")
			if f.Remediation != "" && (f.Status == StatusFail || f.Status == StatusWarn) {
				fmt.Fprintf(&b, "    fix: %s\n", f.Remediation)
			}
		}
	}
	verdict := "all checks passed"
	if !r.Success {
		verdict = "preflight failed"
	}
	fmt.Fprintf(&b, "\n%s (%s): %d passed, %d warnings, %d failed, %d skipped\n",
		verdict, r.Mode, r.Summary.Pass, r.Summary.Warn, r.Summary.Fail, r.Summary.Skip)
	_, err := io.WriteString(w, b.String())
	return err
}

func categories(r Report) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range r.Findings {
		if !seen[f.Category] {
			seen[f.Category] = true
			out = append(out, f.Category)
		}
	}
	return out
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes one test suite per category and one test case per
// check, so CI systems show preflight like a test run. Failures are
// failures; warnings pass with their message in system-out.
func WriteJUnit(w io.Writer, r Report) error {
	all := junitSuites{Name: "awsccmctl preflight (" + string(r.Mode) + ")"}
	for _, cat := range categories(r) {
		s := junitSuite{Name: cat}
		for _, f := range r.Findings {
			if f.Category != cat {
				continue
			}
			c := junitCase{Name: f.ID + ": " + f.Title, Classname: "preflight." + cat, Time: fmt.Sprintf("%.3f", f.Duration.Seconds())}
			switch f.Status {
			case StatusFail:
				c.Failure = &junitMessage{Message: f.Message, Body: f.Remediation}
				s.Failures++
			case StatusSkip:
				c.Skipped = &junitMessage{Message: f.Message}
				s.Skipped++
			case StatusWarn:
				c.SystemOut = "warning: " + f.Message + "\nfix: " + f.Remediation
			default:
				// A pass is a plain test case.
			}
			s.Tests++
			s.Cases = append(s.Cases, c)
		}
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Skipped += s.Skipped
		all.Suites = append(all.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
