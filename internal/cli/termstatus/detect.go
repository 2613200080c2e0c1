package termstatus

import (
	"io"

	"golang.org/x/term"
)

// Env reads an environment variable (os.Getenv).
type Env func(string) string

// ForTerminal returns a Line over w when w is a terminal that can redraw a
// line: an *os.File (anything with Fd) that is a terminal, and TERM is not
// "dumb" (a terminal without cursor control, such as Emacs's shell buffer).
// Otherwise it returns nil, and the caller writes its events to w as
// lines. The Line asks the terminal for its width at every redraw. NO_COLOR
// needs nothing: the line uses no colour.
func ForTerminal(w io.Writer, env Env) *Line {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok || !term.IsTerminal(int(f.Fd())) || env("TERM") == "dumb" {
		return nil
	}
	fd := int(f.Fd())
	return New(w, Options{Width: func() int {
		width, _, err := term.GetSize(fd)
		if err != nil {
			return 0
		}
		return width
	}})
}
