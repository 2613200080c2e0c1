package root

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
)

// ErrorDocument is what -o json writes on stdout for a command that fails:
// alone when the command wrote nothing, else its "error" member is added to
// the command's own document (preflight's report with failed checks, install
// apply's report when the wait then failed, migrate plan's refusals). It is
// the one shape of every command's error in JSON.
type ErrorDocument struct {
	Error ErrorInfo `json:"error"`
}

// ErrorInfo is the error member: the message awsccmctl also prints on
// stderr, and the exit code (docs/reference/exit-codes.md).
type ErrorInfo struct {
	Message  string `json:"message"`
	ExitCode int    `json:"exitCode"`
}

// Execute builds the command tree, runs args on it and returns the error
// (its exit code is exitcode.Of) for the caller to print on stderr. It keeps
// -o json's contract for every command, centrally: whatever the exit code,
// stdout is exactly one JSON document (ErrorDocument on failure). A signal
// that cancelled ctx makes the error an interruption (exit 130).
func Execute(ctx context.Context, streams Streams, args []string) error {
	gate := &jsonStdout{out: streams.Out, errOut: streams.Err}
	// The commands get ctx through cobra: ExecuteContextC makes it every
	// command's cmd.Context(), which contextcheck cannot follow.
	cmd := newCommand(Streams{In: streams.In, Out: gate, Err: streams.Err}, gate) //nolint:contextcheck // see above
	if isPlugin(streams.InvokedAs) {
		presentAsPlugin(cmd)
	}
	cmd.SetArgs(args)
	ran, err := cmd.ExecuteContextC(ctx)
	if err != nil && ctx.Err() != nil && exitcode.Of(err) != exitcode.Interrupted {
		// Any command stopped by the signal exits as the shell would
		// have without the handler: 130, not as the error its cancelled
		// calls returned.
		err = &exitcode.Error{Code: exitcode.Interrupted, Err: fmt.Errorf("interrupted: %w", err)}
	}
	if gate.mode == modeUndecided && err != nil && ran != nil && jsonAsked(args) {
		// The command failed before the root read -o (a flag or
		// argument error): the arguments ask for JSON.
		if _, exempt := noOutput(ran); !exempt || isGroup(ran) {
			gate.mode = modeJSON
		}
	}
	return gate.finish(err)
}

// jsonAsked reports whether args or AWSCCMCTL_OUTPUT ask for -o json, for a
// command line cobra could not parse.
func jsonAsked(args []string) bool {
	value, found := "", false
	for i, a := range args {
		switch {
		case a == "--":
			return value == OutputJSON
		case (a == "-o" || a == "--output") && i+1 < len(args):
			value, found = args[i+1], true
		case strings.HasPrefix(a, "--output="):
			value, found = strings.TrimPrefix(a, "--output="), true
		case strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--") && len(a) > 2:
			value, found = strings.TrimPrefix(a[2:], "="), true
		}
	}
	if !found {
		value = os.Getenv(EnvPrefix + "_OUTPUT")
	}
	return value == OutputJSON
}

type outputMode int

const (
	// modeUndecided: the root has not yet read -o; stdout is held.
	modeUndecided outputMode = iota
	// modeText: stdout goes straight through.
	modeText
	// modeJSON: stdout is held until the command ends, then written as
	// one JSON document.
	modeJSON
)

// jsonStdout is stdout under Execute. Until the root knows the -o value it
// holds what is written (help text, nothing else runs before); then text
// goes straight through, and JSON is held so that finish can write exactly
// one document whatever happened.
type jsonStdout struct {
	out, errOut io.Writer
	mode        outputMode
	held        bytes.Buffer
}

func (g *jsonStdout) Write(p []byte) (int, error) {
	if g.mode == modeText {
		return g.out.Write(p)
	}
	return g.held.Write(p)
}

// Fd is the descriptor of the stdout behind (an invalid one when it has
// none), so that commands can tell a terminal (preflight's colours).
func (g *jsonStdout) Fd() uintptr {
	if f, ok := g.out.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// decide sets the mode once the -o value is known: JSON for a command that
// has -o formats (outputFormats) asked for json, text for anything else.
func (g *jsonStdout) decide(cmd *cobra.Command, output string) error {
	if g == nil || g.mode != modeUndecided {
		return nil
	}
	if _, listed := outputFormats()[commandPath(cmd)]; listed && output == OutputJSON {
		g.mode = modeJSON
		return nil
	}
	g.mode = modeText
	_, err := g.out.Write(g.held.Bytes())
	g.held.Reset()
	return err
}

// finish writes what stdout holds and returns err, or an internal error
// when a command's JSON output was not one document.
func (g *jsonStdout) finish(err error) error {
	if g.mode != modeJSON {
		if g.held.Len() > 0 {
			if _, werr := g.out.Write(g.held.Bytes()); werr != nil && err == nil {
				err = werr
			}
		}
		return err
	}
	held := bytes.TrimSpace(g.held.Bytes())
	one := len(held) > 0 && oneDocument(held)
	if err == nil {
		if one || len(held) == 0 {
			_, werr := g.out.Write(g.held.Bytes())
			return werr
		}
		err = &exitcode.Error{Code: exitcode.Internal, Err: errors.New("internal error: the -o json output was not one JSON document (it went to stderr); please report it")}
	}
	if len(held) > 0 && !one {
		// Never mix text into the document: keep it for people.
		fmt.Fprintf(g.errOut, "%s\n", held)
	}
	doc, derr := withError(held, one, err)
	if derr != nil {
		return errors.Join(err, derr)
	}
	if _, werr := g.out.Write(doc); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// oneDocument reports whether b is exactly one JSON value.
func oneDocument(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	var v json.RawMessage
	if dec.Decode(&v) != nil {
		return false
	}
	_, err := dec.Token()
	return errors.Is(err, io.EOF)
}

// withError returns the document to write for err: the command's own JSON
// object (held, when one) with an "error" member added, keeping its keys'
// order and indentation, or an ErrorDocument alone.
func withError(held []byte, one bool, err error) ([]byte, error) {
	info := ErrorInfo{Message: err.Error(), ExitCode: exitcode.Of(err)}
	var members map[string]json.RawMessage
	if !one || json.Unmarshal(held, &members) != nil {
		return indent(ErrorDocument{Error: info})
	}
	if _, has := members["error"]; has {
		// The command's document says its error itself.
		return append(bytes.Clone(held), '\n'), nil
	}
	value, merr := json.MarshalIndent(info, "  ", "  ")
	if merr != nil {
		return nil, merr
	}
	body := bytes.TrimRight(held[:bytes.LastIndexByte(held, '}')], " \t\r\n")
	var b bytes.Buffer
	b.Write(body)
	if !bytes.HasSuffix(body, []byte("{")) {
		b.WriteString(",")
	}
	b.WriteString("\n  \"error\": ")
	b.Write(value)
	b.WriteString("\n}\n")
	return b.Bytes(), nil
}

func indent(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return append(b, '\n'), err
}
