package nodefiles

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// maxFileSize bounds what is read from one file; node configuration files are
// a few kilobytes.
const maxFileSize = 1 << 20

// maxLinks bounds symbolic link resolution, like the kernel's ELOOP limit.
const maxLinks = 40

// errNotRegular refuses devices and FIFOs, which could block a read.
var errNotRegular = errors.New("not a regular file")

// fsRoot reads files under dir as if dir were "/".
type fsRoot struct{ dir string }

// resolve maps a node path to a host path under the root. ".." stops at the
// root and symbolic links are followed inside it, absolute targets being taken
// relative to the root, as in a chroot.
func (r fsRoot) resolve(p string) (string, error) {
	parts := splitPath(p)
	cur := "" // resolved path relative to the root, slash-separated
	links := 0
	for len(parts) > 0 {
		part := parts[0]
		parts = parts[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			if cur != "" {
				cur = path.Dir(cur)
				if cur == "." {
					cur = ""
				}
			}
			continue
		}
		next := path.Join(cur, part)
		fi, err := os.Lstat(r.host(next))
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(r.host(next))
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(target, "/") {
			cur = ""
		}
		parts = append(splitPath(target), parts...)
	}
	return r.host(cur), nil
}

func (r fsRoot) host(rel string) string {
	return filepath.Join(r.dir, filepath.FromSlash(rel))
}

func splitPath(p string) []string { return strings.Split(p, "/") }

// readFile reads a regular file of at most maxFileSize bytes.
func (r fsRoot) readFile(p string) ([]byte, error) {
	h, err := r.resolve(p)
	if err != nil {
		return nil, err
	}
	// Refuse devices and FIFOs before opening: opening a FIFO blocks.
	if fi, err := os.Stat(h); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, errNotRegular
	}
	f, err := os.OpenFile(h, os.O_RDONLY|syscall.O_NONBLOCK, 0) // in case it changed since
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("larger than %d bytes", maxFileSize)
	}
	return data, nil
}

// exists reports whether p resolves to something under the root.
func (r fsRoot) exists(p string) bool {
	h, err := r.resolve(p)
	if err != nil {
		return false
	}
	_, err = os.Stat(h)
	return err == nil
}

// readDir lists the regular files (after links) of directory p, sorted by
// name; a missing directory is empty.
func (r fsRoot) readDir(p string) ([]string, error) {
	h, err := r.resolve(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(h)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// masked reports whether p is a link to /dev/null, systemd's mark of a
// masked unit.
func (r fsRoot) masked(p string) bool {
	dir, err := r.resolve(path.Dir(p))
	if err != nil {
		return false
	}
	target, err := os.Readlink(filepath.Join(dir, path.Base(p)))
	return err == nil && path.Clean(target) == "/dev/null"
}
