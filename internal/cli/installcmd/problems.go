package installcmd

import (
	"strings"

	"github.com/awsccmctl/awsccmctl/internal/fielderr"
)

// flagPrefix ties the messages of a library's validation that start with
// prefix to the flag that sets the value. Only for kubeadmconfig, whose
// problems are not *fielderr.Error yet; the others map fields (flagOfField).
type flagPrefix struct{ prefix, flag string }

// flagOfField maps the fields a library's problems (*fielderr.Error) name
// to the flags that set them.
type flagOfField map[string]string

// listProblems writes a joined validation error one problem per line,
// "  - --flag: message", so a script's log names what to change: the flag
// of the problem's field (fields), else of the message's prefix (prefixes).
func listProblems(err error, fields flagOfField, prefixes []flagPrefix) string {
	errs := fielderr.Problems(err)
	lines := make([]string, 0, len(errs))
	for _, e := range errs {
		msg := e.Error()
		if flag := flagOf(e, fields, prefixes); flag != "" {
			msg = "--" + flag + ": " + msg
		}
		lines = append(lines, "  - "+strings.ReplaceAll(msg, "\n", "\n    "))
	}
	return strings.Join(lines, "\n")
}

// flagOf is the flag that sets what problem e is about, "" if unknown.
func flagOf(e error, fields flagOfField, prefixes []flagPrefix) string {
	if fe, ok := fielderr.FieldOf(e); ok {
		return fields[fe.Field]
	}
	for _, f := range prefixes {
		if strings.HasPrefix(e.Error(), f.prefix) {
			return f.flag
		}
	}
	return ""
}
