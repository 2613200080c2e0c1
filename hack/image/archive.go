package main

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// writeArchive writes img to path in format, naming it ref. It writes to a
// temporary file beside path and renames it, so path is either the old
// archive or a complete new one.
func writeArchive(path, format string, ref name.Tag, img v1.Image, mtime time.Time) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	var err error
	switch format {
	case formatOCI:
		err = writeOCIArchive(tmp, ref, img, mtime)
	case formatDocker:
		err = tarball.WriteToFile(tmp, ref, img)
	default:
		err = fmt.Errorf("unknown format %q", format)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// writeOCIArchive writes an OCI image layout holding img into a temporary
// directory with go-containerregistry's layout package and tars it. The
// index names the image twice: org.opencontainers.image.ref.name carries
// the tag (OCI layout convention) and io.containerd.image.name the full
// reference, which `ctr images import` uses as the image name.
func writeOCIArchive(path string, ref name.Tag, img v1.Image, mtime time.Time) error {
	dir, err := os.MkdirTemp("", "oci-layout-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("oci layout: %w", err)
	}
	err = p.AppendImage(img, layout.WithAnnotations(map[string]string{
		annotationRef:    ref.TagStr(),
		annotationCtrRef: ref.Name(),
	}))
	if err != nil {
		return fmt.Errorf("oci layout: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := tarDir(f, dir, mtime); err != nil {
		_ = f.Close()
		return fmt.Errorf("tar oci layout: %w", err)
	}
	return f.Close()
}

// tarDir writes the tree under root to w in lexical order, with fixed
// mtimes, modes and owners so the archive bytes depend only on the files'
// contents.
func tarDir(w io.Writer, root string, mtime time.Time) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), ModTime: mtime, Format: tar.FormatPAX}
		if d.IsDir() {
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, h.Name+"/", 0o755
			return tw.WriteHeader(h)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, st.Size()
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}
