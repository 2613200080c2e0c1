package nodephase

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// state is what the tool remembers on a node, in StateFile.
type state struct {
	APIVersion string `json:"apiVersion"`
	// Files are the files the tool changed, removed or created.
	Files []*fileState `json:"files"`
	// CreatedDirs are the directories the tool created (the state
	// directory's own included), parents first. Restore removes them.
	CreatedDirs []string `json:"createdDirs,omitempty"`
}

// fileState is one file the tool manages.
type fileState struct {
	// Path is the node path.
	Path  string `json:"path"`
	Scope Scope  `json:"scope"`
	// Existed is false for a file the tool created; restore removes it.
	Existed bool `json:"existed"`
	// SHA256, Mode and Backup describe the original when it existed.
	SHA256 string `json:"sha256,omitempty"`
	Mode   string `json:"mode,omitempty"`
	Backup string `json:"backup,omitempty"`
	// Variables are the environment variables of a kubelet file the tool
	// edits; later runs edit them even when the flags that led there are
	// gone.
	Variables []string `json:"variables,omitempty"`
	// Written lists the hashes of every content the tool wrote to the file,
	// recorded before the write.
	Written []string `json:"written,omitempty"`
}

func (st *state) file(p string) *fileState {
	for _, f := range st.Files {
		if f.Path == p {
			return f
		}
	}
	return nil
}

func hashOf(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// backupPath is where the original of node path p is kept.
func backupPath(p string) string { return BackupDir + path.Clean("/"+p) }

// nodeFS reads and writes node paths under a root directory.
type nodeFS struct{ root string }

func (f nodeFS) host(p string) string {
	return filepath.Join(f.root, filepath.FromSlash(path.Clean("/"+p)))
}

// fileContent is a file as read: exists false when it is missing.
type fileContent struct {
	data   []byte
	mode   fs.FileMode
	exists bool
}

// read reads a regular file; a missing file is not an error. Symbolic links
// are refused: the tool would replace the link rather than edit its target.
func (f nodeFS) read(p string) (fileContent, error) {
	h := f.host(p)
	fi, err := os.Lstat(h)
	if errors.Is(err, fs.ErrNotExist) {
		return fileContent{}, nil
	}
	if err != nil {
		return fileContent{}, fmt.Errorf("read %s: %w", p, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fileContent{}, fmt.Errorf("%s is a symbolic link: edit the file it points to by hand, or replace the link with that file and run again", p)
	}
	if !fi.Mode().IsRegular() {
		return fileContent{}, fmt.Errorf("%s is not a regular file", p)
	}
	data, err := os.ReadFile(h)
	if err != nil {
		return fileContent{}, fmt.Errorf("read %s: %w", p, err)
	}
	return fileContent{data: data, mode: fi.Mode().Perm(), exists: true}, nil
}

// missingDirs returns the ancestors of node path dir (dir included) that do
// not exist, parents first.
func (f nodeFS) missingDirs(dir string) []string {
	var out []string
	for d := path.Clean("/" + dir); d != "/"; d = path.Dir(d) {
		if _, err := os.Lstat(f.host(d)); err == nil {
			break
		}
		out = append(out, d)
	}
	slices.Reverse(out)
	return out
}

// mkdirAll creates node directory dir and its missing parents with mode
// 0755, the mode of the directories the kubelet, the static Pods and other
// users read files from (/etc/kubernetes and below).
func (f nodeFS) mkdirAll(dir string) error {
	if err := os.MkdirAll(f.host(dir), 0o755); err != nil { //nolint:gosec // G301: directories of node files that others read, see above
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return nil
}

// mkdirPrivate makes dir (and its missing parents, /var/lib/awsccmctl
// included) mode 0700, an existing dir too (a run of an earlier version
// left it 0755): the state directory and its backups are the tool's own,
// read only by the next run (as root).
func (f nodeFS) mkdirPrivate(dir string) error {
	if err := os.MkdirAll(f.host(dir), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := os.Chmod(f.host(dir), 0o700); err != nil { //nolint:gosec // G302: a directory, which needs its x bit
		return fmt.Errorf("make %s private: %w", dir, err)
	}
	return nil
}

// writeAtomic replaces node path p with data: a temporary file in the same
// directory whose name starts with a dot (the kubelet ignores those in the
// static Pod directory), fsync, rename, fsync of the directory.
func (f nodeFS) writeAtomic(p string, data []byte, mode fs.FileMode) (err error) {
	h := f.host(p)
	dir := filepath.Dir(h)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(h)+".awsccmctl-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err = tmp.Chmod(mode); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err = os.Rename(tmp.Name(), h); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return syncDir(dir)
}

// remove removes node path p; a missing file is not an error.
func (f nodeFS) remove(p string) error {
	h := f.host(p)
	if err := os.Remove(h); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	return syncDir(filepath.Dir(h))
}

// removeEmptyDir removes node directory d when it is empty.
func (f nodeFS) removeEmptyDir(d string) (bool, error) {
	entries, err := os.ReadDir(f.host(d))
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil || len(entries) > 0 {
		return false, err
	}
	if err := os.Remove(f.host(d)); err != nil {
		return false, fmt.Errorf("remove %s: %w", d, err)
	}
	return true, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// loadState reads StateFile; nil when there is none.
func loadState(f nodeFS) (*state, error) {
	c, err := f.read(StateFile)
	if err != nil || !c.exists {
		return nil, err
	}
	var st state
	dec := json.NewDecoder(bytes.NewReader(c.data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("%s: %w (the tool's own state: do not edit it)", StateFile, err)
	}
	if st.APIVersion != stateAPIVersion {
		return nil, fmt.Errorf("%s: apiVersion %q, want %q: written by another version of awsccmctl; run restore with that version", StateFile, st.APIVersion, stateAPIVersion)
	}
	for _, fs := range st.Files {
		if fs.Existed {
			if fs.Backup != backupPath(fs.Path) || fs.SHA256 == "" {
				return nil, fmt.Errorf("%s: entry %s has no usable backup", StateFile, fs.Path)
			}
			if _, err := parseMode(fs.Mode); err != nil {
				return nil, fmt.Errorf("%s: entry %s: %w", StateFile, fs.Path, err)
			}
		}
	}
	return &st, nil
}

func (f nodeFS) saveState(st *state) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return f.writeAtomic(StateFile, append(data, '\n'), 0o600)
}

func formatMode(m fs.FileMode) string { return fmt.Sprintf("%04o", uint32(m.Perm())) }

func parseMode(s string) (fs.FileMode, error) {
	v, err := strconv.ParseUint(s, 8, 32)
	if err != nil || v > 0o777 {
		return 0, fmt.Errorf("mode %q is not an octal permission", s)
	}
	return fs.FileMode(v), nil
}

// original returns the original of a managed file: its backup, checked
// against the recorded hash.
func (f nodeFS) original(e *fileState) (fileContent, error) {
	if !e.Existed {
		return fileContent{}, nil
	}
	c, err := f.read(e.Backup)
	if err != nil {
		return fileContent{}, err
	}
	if !c.exists {
		return fileContent{}, fmt.Errorf("the backup %s of %s is missing: restore the file by hand and remove %s", e.Backup, e.Path, StateDir)
	}
	if hashOf(c.data) != e.SHA256 {
		return fileContent{}, fmt.Errorf("the backup %s of %s does not match its recorded hash: it was changed; restore the file by hand and remove %s", e.Backup, e.Path, StateDir)
	}
	mode, _ := parseMode(e.Mode)
	c.mode = mode
	return c, nil
}

// isUnder reports whether node path p is d or inside it.
func isUnder(p, d string) bool { return p == d || strings.HasPrefix(p, d+"/") }
