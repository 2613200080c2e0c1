package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// sumsName is the checksum file, in sha256sum's format.
const sumsName = "SHA256SUMS"

// sha256Hex is b's SHA-256 in lower-case hex.
func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// writeSums writes SHA256SUMS in dir over every other regular file there:
// one "<hex>  <name>" line each (two spaces: sha256sum's text mode, which
// `sha256sum -c` and `shasum -a 256 -c` read), sorted by name (ReadDir's
// order). It returns the names summed, then SHA256SUMS.
func writeSums(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	var names []string
	for _, e := range entries {
		if e.Name() == sumsName || strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		if !e.Type().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file; a release folder holds only files", filepath.Join(dir, e.Name()))
		}
		content, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%s  %s\n", sha256Hex(content), e.Name())
		names = append(names, e.Name())
	}
	if err := writeFile(filepath.Join(dir, sumsName), []byte(b.String())); err != nil {
		return nil, err
	}
	return append(names, sumsName), nil
}
