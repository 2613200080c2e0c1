package installcmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
)

// Output formats (the global -o).
const (
	formatText = "text"
	formatJSON = "json"
)

// format returns the -o value for a command that writes only the allowed
// formats; any other is a usage error that says what the command writes.
// Commands call it before doing anything, so a refused -o writes nothing.
func (s Streams) format(command, writes string, allowed ...string) (string, error) {
	f := formatText
	if s.Output != nil {
		var err error
		if f, err = s.Output(); err != nil {
			return "", err
		}
	}
	if !slices.Contains(allowed, f) {
		return "", exitcode.UsageError(fmt.Errorf("--output %q: install %s writes %s; want %s", f, command, writes, strings.Join(allowed, " or ")))
	}
	return f, nil
}
