package preflight

import (
	"context"
	"fmt"
	"slices"
)

// Status is the outcome of one check.
type Status string

// Statuses, from best to worst.
const (
	StatusPass Status = "pass"
	StatusSkip Status = "skip"
	StatusWarn Status = "warn"
	StatusFail Status = "fail"
)

// Severity says what a failing check means: a Warning check that fails
// reports warn, an Error check reports fail.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Mode is the moment preflight runs at; some checks expect different values
// before a migration than after an install.
type Mode string

// Modes.
const (
	ModePreInstall  Mode = "pre-install"
	ModePreMigrate  Mode = "pre-migrate"
	ModePostInstall Mode = "post-install"
)

// Modes lists the valid modes.
var Modes = []Mode{ModePreInstall, ModePreMigrate, ModePostInstall}

// ParseMode validates a --mode value.
func ParseMode(s string) (Mode, error) {
	if m := Mode(s); slices.Contains(Modes, m) {
		return m, nil
	}
	return "", fmt.Errorf("--mode %q: want one of %v", s, Modes)
}

// Result is what a check found.
type Result struct {
	Status Status
	// Message says what was found, with the observed values.
	Message string
	// Remediation says exactly what to change; empty on pass.
	Remediation string
	// Unreachable marks a failure because what the check asks (the cluster,
	// AWS) did not answer, rather than answered with a problem; callers
	// give it the "cannot reach" exit code.
	Unreachable bool
}

// Pass builds a passing result; Fail, Warn and Skip build the others.
func Pass(format string, a ...any) Result {
	return Result{Status: StatusPass, Message: fmt.Sprintf(format, a...)}
}

// Fail reports a problem and its fix. The check's severity decides whether
// it shows as fail or warn.
func Fail(fix, format string, a ...any) Result {
	return Result{Status: StatusFail, Message: fmt.Sprintf(format, a...), Remediation: fix}
}

// Warn reports something worth a look that is never fatal.
func Warn(fix, format string, a ...any) Result {
	return Result{Status: StatusWarn, Message: fmt.Sprintf(format, a...), Remediation: fix}
}

// Skip reports that the check does not apply here.
func Skip(format string, a ...any) Result {
	return Result{Status: StatusSkip, Message: fmt.Sprintf(format, a...)}
}

// Check is one preflight check.
type Check struct {
	// ID is stable: documented, used by --ignore-checks, never renamed.
	ID       string
	Category string
	Title    string
	// Description says what the check looks at and why it matters to the
	// CCM; Fix says how a failure is fixed in general (a failing run prints
	// the exact fix for what it found). Both go to the generated reference,
	// docs/reference/preflight-checks.md.
	Description string
	Fix         string
	Severity    Severity
	// Requires lists checks that must pass (or warn) first; if one fails or
	// is skipped, this check is skipped with the reason.
	Requires []string
	// Run performs the check. It must only read.
	Run func(ctx context.Context) Result
}
