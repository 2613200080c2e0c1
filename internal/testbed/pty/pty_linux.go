package pty

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// Open returns a new pseudo-terminal of cols columns and rows rows: ptmx,
// the controlling side a test reads the screen from, and tty, the terminal
// side a process uses.
func Open(cols, rows int) (ptmx, tty *os.File, err error) {
	ptmx, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	fail := func(what string, err error) (*os.File, *os.File, error) {
		_ = ptmx.Close()
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	fd := int(ptmx.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		return fail("unlock the pseudo-terminal", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		return fail("read the pseudo-terminal's number", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return fail("open its terminal side", err)
	}
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)}); err != nil {
		_ = tty.Close()
		return fail("set its size", err)
	}
	return ptmx, tty, nil
}

// Start starts cmd on a new pseudo-terminal of cols columns: its stdin,
// stdout and stderr are the terminal, which is also its controlling
// terminal (a new session), as a shell would start it. It returns the
// controlling side: read it until it fails (EIO once cmd and its children
// closed the terminal) for everything cmd wrote, and close it after.
func Start(cmd *exec.Cmd, cols, rows int) (*os.File, error) {
	ptmx, tty, err := Open(cols, rows)
	if err != nil {
		return nil, err
	}
	// The child's own copy is all it needs; ours would keep the terminal
	// open after the child exits, and reads would never end.
	defer func() { _ = tty.Close() }()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		_ = ptmx.Close()
		return nil, err
	}
	return ptmx, nil
}
