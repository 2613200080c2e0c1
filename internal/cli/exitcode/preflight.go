package exitcode

import (
	"errors"

	"github.com/awsccmctl/awsccmctl/internal/preflight/gather"
)

// FromPreflight gives gather.Collect's errors their exit codes: bad input
// is a usage error (2), an unreachable cluster or AWS is 3; any other
// error is returned as it is. preflight and migrate-from-intree plan's
// preflight give them the same.
func FromPreflight(err error) error {
	var (
		input       *gather.InputError
		unreachable *gather.UnreachableError
	)
	switch {
	case errors.As(err, &input):
		return UsageError(err)
	case errors.As(err, &unreachable):
		return &Error{Code: Unreachable, Err: err}
	}
	return err
}
