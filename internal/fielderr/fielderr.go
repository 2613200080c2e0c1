package fielderr

import (
	"errors"
	"fmt"
)

// Error is a problem with one field. Its message is the field's name
// followed by Err's message, e.g. `clusterName "a b": must be …`.
type Error struct {
	// Field names the field as the library's messages and input spell it
	// (clusterName, cluster name).
	Field string
	// Err says what is wrong; its message follows the field name.
	Err error
}

// Errorf returns a problem with field; format and args make the rest of the
// message after the field name (so they usually start with a space or a
// colon) and may wrap an error with %w.
func Errorf(field, format string, args ...any) *Error {
	return &Error{Field: field, Err: fmt.Errorf(format, args...)}
}

func (e *Error) Error() string { return e.Field + e.Err.Error() }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Problems splits a joined error (errors.Join) into its problems; any other
// error is one problem.
func Problems(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// FieldOf returns the field err is about, and false when err is not (or
// does not wrap) an *Error.
func FieldOf(err error) (*Error, bool) {
	var fe *Error
	if errors.As(err, &fe) {
		return fe, true
	}
	return nil, false
}
