//go:build !linux

package pty

import (
	"errors"
	"os"
	"os/exec"
)

// errUnsupported: the tests that need a terminal skip on other systems.
var errUnsupported = errors.New("pseudo-terminals for tests are implemented on Linux only")

// Open is Linux only.
func Open(cols, rows int) (ptmx, tty *os.File, err error) { return nil, nil, errUnsupported }

// Start is Linux only.
func Start(cmd *exec.Cmd, cols, rows int) (*os.File, error) { return nil, errUnsupported }
