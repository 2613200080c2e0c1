package installcmd

import (
	"strings"

	"github.com/awsccmctl/awsccmctl/internal/fielderr"
)

// flagOfField maps the fields a library's problems (*fielderr.Error) name
// to the flags that set them.
type flagOfField map[string]string

// listProblems writes a joined validation error one problem per line,
// "  - --flag: message", so a script's log names what to change: the flag
// of the problem's field; a problem of no known field is listed as it is.
func listProblems(err error, fields flagOfField) string {
	errs := fielderr.Problems(err)
	lines := make([]string, 0, len(errs))
	for _, e := range errs {
		msg := e.Error()
		if fe, ok := fielderr.FieldOf(e); ok && fields[fe.Field] != "" {
			msg = "--" + fields[fe.Field] + ": " + msg
		}
		lines = append(lines, "  - "+strings.ReplaceAll(msg, "\n", "\n    "))
	}
	return strings.Join(lines, "\n")
}
