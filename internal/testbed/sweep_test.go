package testbed

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// TestSweepAbandoned: the folder of a control plane whose process is gone
// is removed; this process's, one without an owner file, and other folders
// are kept.
func TestSweepAbandoned(t *testing.T) {
	root := t.TempDir()
	gone := exec.CommandContext(t.Context(), "true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name, owner string) string {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Join(dir, "etcd"), 0o700); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	abandoned := mk("testbed-1", strconv.Itoa(gone.Process.Pid))
	mine := mk("testbed-2", strconv.Itoa(os.Getpid()))
	unowned := mk("testbed-3", "")
	garbled := mk("testbed-4", "not a pid")
	other := mk("something-else", strconv.Itoa(gone.Process.Pid))

	removed, err := sweepAbandoned(root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{abandoned}) {
		t.Errorf("removed %v, want only %s", removed, abandoned)
	}
	for _, dir := range []string{mine, unowned, garbled, other} {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s: %v, want it kept", dir, err)
		}
	}
	if _, err := os.Stat(abandoned); !os.IsNotExist(err) {
		t.Errorf("%s: %v, want it gone", abandoned, err)
	}
}
