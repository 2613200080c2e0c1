//go:build unix && !linux

package childproc

import "os/exec"

// Start starts cmd in a process group of its own (see groupAttr). There is
// no Pdeathsig outside Linux: if this process is killed outright, the child
// keeps running.
func Start(cmd *exec.Cmd) error {
	a, err := groupAttr(cmd)
	if err != nil {
		return err
	}
	cmd.SysProcAttr = a
	return cmd.Start()
}
