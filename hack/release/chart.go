package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// chartName is the Helm chart's name (charts/<chartName>), upstream's.
const chartName = "aws-cloud-controller-manager"

// chartVersionLine and chartAppVersionLine are Chart.yaml's top-level
// version keys, which the release stamps.
var (
	chartVersionLine    = regexp.MustCompile(`(?m)^version: .*$`)
	chartAppVersionLine = regexp.MustCompile(`(?m)^appVersion: .*$`)
)

// chartArchiveName is the packaged chart's file name, as helm package
// names it: <name>-<chart version>.tgz.
func chartArchiveName(version string) string {
	return fmt.Sprintf("%s-%s.tgz", chartName, chartVersion(version))
}

// chartVersion is the release's version as a chart version: SemVer
// without the v, so chart X installs what CLI vX does.
func chartVersion(version string) string { return strings.TrimPrefix(version, "v") }

// packageChart returns dir packaged as helm package does (a gzipped tar of
// <name>/<file>), with Chart.yaml's version and appVersion stamped with the
// release's: the CCM image's tag is the appVersion. Entries are sorted,
// owned by root, 0644, with the release's mtime, so the same commit gives
// the same archive.
func (r release) packageChart(dir string) ([]byte, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	if !slices.Contains(files, "Chart.yaml") {
		return nil, fmt.Errorf("%s: no Chart.yaml", dir)
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for _, f := range files {
		content, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		if f == "Chart.yaml" {
			if content, err = stampChart(content, r.version); err != nil {
				return nil, fmt.Errorf("%s: %w", filepath.Join(dir, f), err)
			}
		}
		h := &tar.Header{Typeflag: tar.TypeReg, Name: chartName + "/" + f, Mode: 0o644, Size: int64(len(content)), ModTime: r.created, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(content); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// stampChart sets Chart.yaml's version and appVersion to the release's.
func stampChart(chart []byte, version string) ([]byte, error) {
	if !chartVersionLine.Match(chart) || !chartAppVersionLine.Match(chart) {
		return nil, fmt.Errorf("want top-level version: and appVersion: lines to stamp")
	}
	chart = chartVersionLine.ReplaceAll(chart, []byte("version: "+chartVersion(version)))
	return chartAppVersionLine.ReplaceAll(chart, []byte("appVersion: "+version)), nil
}
