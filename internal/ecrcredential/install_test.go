package ecrcredential

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestInstall: the file lands as dir/ecr-credential-provider, mode 0755,
// with the source's bytes; an old binary is replaced by rename (a new
// inode: a kubelet running the old file keeps it whole); an identical one is
// left alone; no temporary file remains.
func TestInstall(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	write := func(path, data string, mode os.FileMode) {
		if err := os.WriteFile(path, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(src, "new binary", 0o700)
	dir := t.TempDir()
	target := filepath.Join(dir, BinaryName)
	write(target, "old binary", 0o755)
	oldIno := inode(t, target)

	res, err := Install(src, dir)
	if err != nil || !res.Changed || res.Path != target {
		t.Fatalf("Install: %+v, %v", res, err)
	}
	got, _ := os.ReadFile(target)
	st, _ := os.Stat(target)
	if string(got) != "new binary" || st.Mode().Perm() != 0o755 {
		t.Errorf("installed %q mode %v", got, st.Mode())
	}
	if inode(t, target) == oldIno {
		t.Error("the old file was overwritten in place, not replaced by rename")
	}
	if res, err := Install(src, dir); err != nil || res.Changed {
		t.Errorf("second Install: %+v, %v; want unchanged", res, err)
	}
	if err := os.Chmod(target, 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err := Install(src, dir); err != nil || !res.Changed {
		t.Errorf("a file with the wrong mode was not fixed: %+v, %v", res, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("dir holds %d entries, want only the binary: %v", len(entries), entries)
	}
}

func TestInstallErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Install(filepath.Join(dir, "missing-src"), dir); err == nil || !strings.Contains(err.Error(), "read this binary") {
		t.Errorf("missing source: %v", err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(file, file); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("file as dir: %v", err)
	}
	if _, err := Install(file, filepath.Join(dir, "nope")); err == nil || !strings.Contains(err.Error(), "mount the kubelet's --image-credential-provider-bin-dir there") {
		t.Errorf("missing dir: %v", err)
	}
	// A target that is a directory cannot be replaced: the temporary file
	// must not be left behind.
	blocked := t.TempDir()
	if err := os.MkdirAll(filepath.Join(blocked, BinaryName, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(file, blocked); err == nil {
		t.Fatal("installed over a directory")
	}
	entries, _ := os.ReadDir(blocked)
	if len(entries) != 1 {
		t.Errorf("a failed install left %d entries: %v", len(entries), entries)
	}
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}
