package main

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"time"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// entry is one file or directory of the image's only layer.
type entry struct {
	path     string // relative, no leading slash, as written in the tar
	mode     int64  // permission bits, including sticky
	uid, gid int
	dir      bool
	data     []byte
}

// rootfs lists the layer's entries in the order they are written: parents
// before children, so any extractor can create them.
func rootfs(binary, ecrProvider, awsccmctl, caBundle []byte) []entry {
	return []entry{
		{path: binaryName, mode: 0o755, data: binary},
		{path: ecrProviderName, mode: 0o755, data: ecrProvider},
		{path: "etc/", mode: 0o755, dir: true},
		{path: "etc/group", mode: 0o644, data: []byte(groupFile())},
		{path: "etc/passwd", mode: 0o644, data: []byte(passwdFile())},
		{path: "etc/ssl/", mode: 0o755, dir: true},
		{path: "etc/ssl/certs/", mode: 0o755, dir: true},
		{path: caBundlePath[1:], mode: 0o644, data: caBundle},
		{path: "home/", mode: 0o755, dir: true},
		{path: nonrootHome[1:] + "/", mode: 0o700, dir: true, uid: nonrootUID, gid: nonrootGID},
		{path: "tmp/", mode: 0o1777, dir: true},
		{path: "usr/", mode: 0o755, dir: true},
		{path: "usr/local/", mode: 0o755, dir: true},
		{path: "usr/local/bin/", mode: 0o755, dir: true},
		{path: awsccmctlPath, mode: 0o755, data: awsccmctl},
	}
}

func passwdFile() string {
	return "root:x:0:0:root:/root:/sbin/nologin\n" +
		fmt.Sprintf("%s:x:%d:%d:%s:%s:/sbin/nologin\n", nonrootName, nonrootUID, nonrootGID, nonrootName, nonrootHome)
}

func groupFile() string {
	return "root:x:0:\n" + fmt.Sprintf("%s:x:%d:\n", nonrootName, nonrootGID)
}

// layerTar writes entries as an uncompressed tar with every timestamp set
// to mtime and no user or group names, so equal inputs give equal bytes.
func layerTar(entries []entry, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name:    e.path,
			Mode:    e.mode,
			Uid:     e.uid,
			Gid:     e.gid,
			ModTime: mtime,
			Format:  tar.FormatPAX,
		}
		if e.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("tar header %s: %w", e.path, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("tar %s: %w", e.path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// mozillaRoots renders the Mozilla NSS roots that golang.org/x/crypto's
// x509roots/fallback module carries as a PEM bundle, so the roots are
// pinned by go.sum rather than taken from the build machine.
//
// Roots with a constraint (NSS "distrust after" dates) are left out: a PEM
// file cannot carry the constraint, and writing them would trust them for
// certificates the constraint rejects. The count of skipped roots is
// returned so the caller can say so.
func mozillaRoots() (pemBundle []byte, included, skipped int, err error) {
	var buf bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			skipped++
			continue
		}
		cert, err := x509.ParseCertificate(root.Certificate)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("parse bundled root %d: %w", included+skipped, err)
		}
		fmt.Fprintf(&buf, "# %s\n", cert.Subject)
		if err := pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate}); err != nil {
			return nil, 0, 0, err
		}
		included++
	}
	if included == 0 {
		return nil, 0, 0, fmt.Errorf("no CA roots in golang.org/x/crypto/x509roots/fallback/bundle")
	}
	return buf.Bytes(), included, skipped, nil
}
