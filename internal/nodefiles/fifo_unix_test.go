//go:build unix

package nodefiles

import (
	"path/filepath"
	"syscall"
	"testing"
)

func TestProblemNotRegularFile(t *testing.T) {
	root := writeTree(t, map[string]string{"/etc/default/.keep": ""})
	if err := syscall.Mkfifo(filepath.Join(root, "etc/default/kubelet"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// A FIFO would block a plain read; it must be refused instead.
	problemsContain(t, mustRead(t, root), "/etc/default/kubelet: not a regular file")
}
