package installcmd

import (
	"strings"
)

// flagPrefix ties the messages of a library's validation that start with
// prefix to the flag that sets the value.
type flagPrefix struct{ prefix, flag string }

// listProblems writes a joined validation error one problem per line,
// "  - --flag: message", so a script's log names what to change.
func listProblems(err error, flags []flagPrefix) string {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	lines := make([]string, 0, len(errs))
	for _, e := range errs {
		msg := e.Error()
		for _, f := range flags {
			if strings.HasPrefix(msg, f.prefix) {
				msg = "--" + f.flag + ": " + msg
				break
			}
		}
		lines = append(lines, "  - "+strings.ReplaceAll(msg, "\n", "\n    "))
	}
	return strings.Join(lines, "\n")
}
