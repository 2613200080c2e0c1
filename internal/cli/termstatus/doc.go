// Package termstatus shows a long wait on a terminal as one status line that
// updates in place: its title, the time elapsed and what it waits for,
// redrawn a few times a second, cut to the terminal's width so it never
// wraps, and replaced by its result when the wait ends. Everything else
// written through it passes as it is, above the status line.
//
// The waits (internal/install/apply.Poll, the migration runner, the node
// command's wait for kube-controller-manager) print a line per change when
// their progress writer is a plain writer, and use the status line when it
// is a *Line: so without a terminal (a pipe, a file, TERM=dumb) and with
// -o json the output stays the events it always was.
package termstatus
