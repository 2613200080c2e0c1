// Package exitcode holds awsccmctl's exit codes. They are a contract with
// bootstrap scripts: documented in docs/reference/exit-codes.md and never
// renumbered.
package exitcode

import "errors"

// Exit codes.
const (
	// OK: the command did what was asked.
	OK = 0
	// Failed: the command ran and found problems (failed checks).
	Failed = 1
	// Usage: bad flags, arguments or configuration; nothing was done.
	Usage = 2
	// Unreachable: the cluster or AWS could not be reached.
	Unreachable = 3
	// Internal: anything else.
	Internal = 4
	// Refused: migrate-from-intree plan will not migrate this cluster (the
	// reasons and the ways out are printed); nothing was changed.
	Refused = 5
	// GateFailed: a migration step's gate did not pass in time, or a guard
	// broke; the run stopped there and the journal says where.
	GateFailed = 6
	// Busy: another run holds the migration.
	Busy = 7
	// Mismatch: install apply or uninstall: the values do not match the
	// install recorded in the cluster (another --namespace or --workload,
	// or a second install beside a recorded one), or apply would run a
	// second CCM beside an unrecorded workload of the other kind; nothing
	// was changed.
	Mismatch = 8
	// Interrupted: stopped by SIGINT or SIGTERM (128 + SIGINT).
	Interrupted = 130
)

// Error carries an exit code with an error.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// UsageError marks err as a usage error.
func UsageError(err error) error { return &Error{Code: Usage, Err: err} }

// Of returns the exit code for err: OK for nil, the carried code for an
// *Error, Internal otherwise.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}
