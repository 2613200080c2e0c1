package preflight

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// SchemaVersion versions the JSON report; a change that breaks readers gets
// a new version.
const SchemaVersion = "awsccmctl.io/preflight/v1"

// Options select and judge the checks.
type Options struct {
	Mode Mode
	// Categories keeps only these categories (empty: all).
	Categories []string
	// Ignore turns failures of these check IDs into warnings; "all" ignores
	// every failure.
	Ignore []string
	// FailOnWarning makes warnings fail the run (--fail-on=warning).
	FailOnWarning bool
	// Clock measures durations; nil uses time.Now.
	Now func() time.Time
}

// Finding is one check's outcome in the report.
type Finding struct {
	ID          string   `json:"id"`
	Category    string   `json:"category"`
	Title       string   `json:"title"`
	Severity    Severity `json:"severity"`
	Status      Status   `json:"status"`
	Message     string   `json:"message"`
	Remediation string   `json:"remediation,omitempty"`
	Ignored     bool     `json:"ignored,omitempty"`
	// Unreachable: the check failed because what it asks did not answer
	// (also when its severity or --ignore-checks made that a warning).
	Unreachable bool          `json:"unreachable,omitempty"`
	Duration    time.Duration `json:"-"`
}

// Summary counts findings by status.
type Summary struct {
	Pass int `json:"pass"`
	Warn int `json:"warn"`
	Fail int `json:"fail"`
	Skip int `json:"skip"`
}

// Report is the whole run.
type Report struct {
	SchemaVersion string    `json:"schemaVersion"`
	Mode          Mode      `json:"mode"`
	Success       bool      `json:"success"`
	Summary       Summary   `json:"summary"`
	Findings      []Finding `json:"findings"`
}

// Run runs every selected check in order. It never stops at the first
// failure; a check whose requirement failed or was skipped is skipped with
// the reason; a check that panics fails with the panic's message.
func Run(ctx context.Context, checks []Check, o Options) (Report, error) {
	if err := validate(checks, o); err != nil {
		return Report{}, err
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	ignoreAll := slices.Contains(o.Ignore, "all")
	status := map[string]Status{}
	r := Report{SchemaVersion: SchemaVersion, Mode: o.Mode}
	for _, c := range checks {
		if len(o.Categories) > 0 && !slices.Contains(o.Categories, c.Category) {
			continue
		}
		f := Finding{ID: c.ID, Category: c.Category, Title: c.Title, Severity: c.Severity}
		if blocker := blockedBy(c, status); blocker != "" {
			f.Status, f.Message = StatusSkip, fmt.Sprintf("skipped: requires %s, which did not pass", blocker)
		} else {
			start := now()
			res := runOne(ctx, c)
			f.Duration = now().Sub(start)
			f.Status, f.Message, f.Remediation = res.Status, res.Message, res.Remediation
			f.Unreachable = res.Unreachable && res.Status == StatusFail
			if f.Status == StatusFail && c.Severity == SeverityWarning {
				f.Status = StatusWarn
			}
			if f.Status == StatusFail && (ignoreAll || slices.Contains(o.Ignore, c.ID)) {
				f.Status, f.Ignored = StatusWarn, true
			}
		}
		status[c.ID] = f.Status
		r.Findings = append(r.Findings, f)
		switch f.Status {
		case StatusPass:
			r.Summary.Pass++
		case StatusWarn:
			r.Summary.Warn++
		case StatusFail:
			r.Summary.Fail++
		case StatusSkip:
			r.Summary.Skip++
		}
	}
	r.Success = r.Summary.Fail == 0 && (!o.FailOnWarning || r.Summary.Warn == 0)
	return r, nil
}

// blockedBy returns the first requirement that did not pass or warn.
func blockedBy(c Check, status map[string]Status) string {
	for _, req := range c.Requires {
		if s, ok := status[req]; ok && s != StatusPass && s != StatusWarn {
			return req
		}
	}
	return ""
}

func runOne(ctx context.Context, c Check) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			res = Result{Status: StatusFail, Message: fmt.Sprintf("check crashed: %v", p), Remediation: "report this as a bug in awsccmctl"}
		}
	}()
	res = c.Run(ctx)
	switch res.Status {
	case StatusPass, StatusWarn, StatusFail, StatusSkip:
	default:
		res = Result{Status: StatusFail, Message: fmt.Sprintf("check returned no status (message %q)", res.Message), Remediation: "report this as a bug in awsccmctl"}
	}
	return res
}

// validate rejects duplicate IDs, unknown requirements and unknown IDs or
// categories in the options, all at once.
func validate(checks []Check, o Options) error {
	var problems []string
	ids := map[string]bool{}
	categories := map[string]bool{}
	for _, c := range checks {
		if ids[c.ID] {
			problems = append(problems, fmt.Sprintf("check %s is defined twice", c.ID))
		}
		for _, req := range c.Requires {
			if !ids[req] {
				problems = append(problems, fmt.Sprintf("check %s requires %s, which is not defined before it", c.ID, req))
			}
		}
		ids[c.ID] = true
		categories[c.Category] = true
	}
	for _, id := range o.Ignore {
		if id != "all" && !ids[id] {
			problems = append(problems, fmt.Sprintf("--ignore-checks: unknown check ID %q", id))
		}
	}
	for _, cat := range o.Categories {
		if !categories[cat] {
			problems = append(problems, fmt.Sprintf("--category: unknown category %q", cat))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	return nil
}
