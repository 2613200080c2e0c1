// Package pty opens pseudo-terminals for tests that run a binary as a user
// would at a terminal: its stdin, stdout and stderr are the terminal side,
// the test reads what the screen receives from the controlling side. It
// speaks the kernel's interface directly (/dev/ptmx and its ioctls through
// golang.org/x/sys/unix); Linux only, elsewhere Open says it is unsupported.
package pty
