package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"time"
)

// tarGz returns a gzipped tar holding one executable, name, with content.
// Every field that could vary between builds is fixed: the mtime is
// mtime, the owner root (0:0, no names), the mode 0755, and the gzip
// header has neither a file name nor a time (compress/gzip writes the
// "unknown" OS byte), so equal binaries give equal archives.
func tarGz(name string, content []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	h := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     name,
		Mode:     0o755,
		Size:     int64(len(content)),
		ModTime:  mtime,
		Format:   tar.FormatUSTAR,
	}
	if err := tw.WriteHeader(h); err != nil {
		return nil, err
	}
	if _, err := tw.Write(content); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
