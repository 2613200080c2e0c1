package release

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// cliArchive names awsccmctl's archive for a platform, as hack/release
// names it.
func cliArchive(r built, goos, goarch string) string {
	return fmt.Sprintf("awsccmctl-%s-%s-%s.tar.gz", r.version, goos, goarch)
}

// extract writes the file member of the archive into dir, executable, and
// returns its path. It also checks what a deterministic archive fixes:
// the member is the archive's only entry, owned by 0:0 with mode 0755.
func extract(t *testing.T, archive, member, dir string) string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("%s: gzip header has name %q, time %v: want neither", archive, zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	h, err := tr.Next()
	if err != nil {
		t.Fatalf("%s: %v", archive, err)
	}
	if h.Name != member || h.Typeflag != tar.TypeReg || h.Mode != 0o755 || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
		t.Errorf("%s: first entry %q type %c mode %o owner %d:%d (%q:%q), want %s, a file, 0755, 0:0", archive, h.Name, h.Typeflag, h.Mode, h.Uid, h.Gid, h.Uname, h.Gname, member)
	}
	path := filepath.Join(dir, member)
	out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(out, tr, h.Size); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("%s: more than one entry (%v)", archive, err)
	}
	return path
}
