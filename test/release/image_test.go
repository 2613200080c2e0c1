package release

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// checkImageIndex opens the release's OCI image layout tarball with
// go-containerregistry: it names one image index, over linux/amd64 and
// linux/arm64, each image's config of its own architecture.
func checkImageIndex(t *testing.T, r built) {
	var archive string
	for _, n := range names(t, r.dir) {
		if strings.HasPrefix(n, "aws-cloud-controller-manager-") && strings.HasSuffix(n, ".oci.tar") {
			archive = n
		}
	}
	if archive == "" {
		t.Fatal("no aws-cloud-controller-manager-<tag>.oci.tar in the release")
	}
	dir := t.TempDir()
	untar(t, r.file(archive), dir)
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	im, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || !im.Manifests[0].MediaType.IsIndex() {
		t.Fatalf("index.json holds %d manifests (%v), want one image index", len(im.Manifests), im.Manifests)
	}
	idx, err := top.ImageIndex(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, d := range m.Manifests {
		if d.Platform == nil {
			t.Fatalf("manifest %s has no platform", d.Digest)
		}
		platforms = append(platforms, d.Platform.OS+"/"+d.Platform.Architecture)
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Architecture != d.Platform.Architecture || cf.OS != d.Platform.OS {
			t.Errorf("the %s image's config says %s/%s", d.Platform, cf.OS, cf.Architecture)
		}
		if cf.Config.Labels["org.opencontainers.image.version"] != r.version {
			t.Errorf("the %s image's version label %q, want %s", d.Platform, cf.Config.Labels["org.opencontainers.image.version"], r.version)
		}
	}
	slices.Sort(platforms)
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("index platforms %v, want linux/amd64 and linux/arm64", platforms)
	}
}

// untar writes a tar's regular files and folders under dir.
func untar(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			t.Fatalf("%s: entry %q leaves the folder", archive, h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			var out *os.File
			if out, err = os.Create(p); err == nil {
				_, err = io.CopyN(out, tr, h.Size)
				if cerr := out.Close(); err == nil {
					err = cerr
				}
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
