package ecrcredential

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// BinaryName is the plugin's file name. The kubelet runs the provider whose
// name is this file's name in --image-credential-provider-bin-dir, so the
// CredentialProviderConfig's provider name MUST stay equal to it.
const BinaryName = "ecr-credential-provider"

// InstallResult says what Install did.
type InstallResult struct {
	// Path is the installed file.
	Path string
	// Changed is false when the file already had the same content and mode.
	Changed bool
}

// Install copies the binary at src to dir/BinaryName, mode 0755,
// atomically: it writes a temporary file in dir, syncs it and renames it
// over the target, so the kubelet, which may exec the plugin at any moment,
// sees the old binary or the new one, never a partial file. An identical
// file is left alone. dir must exist (it is the kubelet's plugin directory,
// mounted from the host).
func Install(src, dir string) (InstallResult, error) {
	target := filepath.Join(dir, BinaryName)
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return InstallResult{}, fmt.Errorf("plugin directory %s: %w (mount the kubelet's --image-credential-provider-bin-dir there)", dir, err)
	case !st.IsDir():
		return InstallResult{}, fmt.Errorf("plugin directory %s is not a directory", dir)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return InstallResult{}, fmt.Errorf("read this binary: %w", err)
	}
	if same(target, data) {
		return InstallResult{Path: target}, nil
	}
	tmp, err := os.CreateTemp(dir, "."+BinaryName+".tmp-*")
	if err != nil {
		return InstallResult{}, fmt.Errorf("install into %s: %w", dir, err)
	}
	done := false
	defer func() {
		if !done {
			_ = os.Remove(tmp.Name()) // never leave a partial file behind
		}
	}()
	if _, err := io.Copy(tmp, bytes.NewReader(data)); err != nil {
		_ = tmp.Close()
		return InstallResult{}, fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Chmod(0o755); err != nil {
		_ = tmp.Close()
		return InstallResult{}, fmt.Errorf("chmod %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return InstallResult{}, fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return InstallResult{}, fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return InstallResult{}, fmt.Errorf("install %s: %w", target, err)
	}
	done = true
	return InstallResult{Path: target, Changed: true}, nil
}

// same reports whether path is a regular file, mode 0755, holding data.
func same(path string, data []byte) bool {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o755 || st.Size() != int64(len(data)) {
		return false
	}
	have, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false
	}
	return bytes.Equal(have, data)
}
