package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// buildIndex writes one OCI image layout tarball holding an image index
// over --platform's images, each built as the single-platform image is from
// --bin-dir's linux-<arch> binaries: `docker pull`, containerd and
// registries pick the machine's platform from it. The index is OCI only: a
// docker-archive cannot hold one.
func buildIndex(o options, stdout io.Writer) error {
	var problems []error
	if o.binary != "" || o.ecrBinary != "" || o.awsccmctl != "" {
		problems = append(problems, errors.New("--bin-dir replaces --binary, --ecr-credential-provider and --awsccmctl: give one or the other"))
	}
	if o.format != formatOCI {
		problems = append(problems, fmt.Errorf("--format %q: a multi-platform index is written as %s only", o.format, formatOCI))
	}
	var platforms []v1.Platform
	for _, p := range strings.Split(o.platform, ",") {
		platform, err := v1.ParsePlatform(strings.TrimSpace(p))
		if err != nil {
			problems = append(problems, fmt.Errorf("--platform %q: %w", p, err))
			continue
		}
		if _, ok := elfMachines[platform.Architecture]; platform.OS != "linux" || !ok {
			problems = append(problems, fmt.Errorf("--platform %q: supported are linux/amd64 and linux/arm64", p))
			continue
		}
		platforms = append(platforms, *platform)
	}
	created, ref, err := createdAndRef(o)
	if err != nil {
		problems = append(problems, err)
	}
	if len(problems) > 0 {
		return errors.Join(problems...)
	}

	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var adds []mutate.IndexAddendum
	for _, p := range platforms {
		img, err := imageFromBinDir(o, p, created)
		if err != nil {
			return err
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant}}})
	}
	idx = mutate.AppendManifests(idx, adds...)
	path := filepath.Join(o.outputDir, fmt.Sprintf("%s-%s.%s.tar", binaryName, ref.TagStr(), formatOCI))
	if err := writeIndexArchive(path, ref, idx, created); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "index:   %s\n", ref.Name())
	fmt.Fprintf(stdout, "digest:  %s\n", digest)
	fmt.Fprintf(stdout, "archive: %s\n", path)
	return nil
}

// createdAndRef parses --epoch and names the image from --repository and
// --version.
func createdAndRef(o options) (time.Time, name.Tag, error) {
	created := time.Unix(0, 0)
	if o.epoch != "" {
		secs, err := strconv.ParseInt(o.epoch, 10, 64)
		if err != nil || secs < 0 {
			return time.Time{}, name.Tag{}, fmt.Errorf("--epoch / SOURCE_DATE_EPOCH %q: want non-negative Unix seconds", o.epoch)
		}
		created = time.Unix(secs, 0)
	}
	ref, err := name.NewTag(o.repository + ":" + tagFor(o.version))
	if err != nil {
		return time.Time{}, name.Tag{}, fmt.Errorf("--repository %q: %w", o.repository, err)
	}
	return created, ref, nil
}

// imageFromBinDir builds platform p's image from --bin-dir/linux-<arch>.
func imageFromBinDir(o options, p v1.Platform, created time.Time) (v1.Image, error) {
	dir := filepath.Join(o.binDir, p.OS+"-"+p.Architecture)
	read := func(file string) ([]byte, error) {
		path := filepath.Join(dir, file)
		if err := checkBinary(path, p.Architecture); err != nil {
			return nil, err
		}
		return os.ReadFile(path)
	}
	bin, err := read(binaryName)
	if err != nil {
		return nil, err
	}
	ecrBin, err := read(ecrProviderName)
	if err != nil {
		return nil, err
	}
	ctlBin, err := read(filepath.Base(awsccmctlPath))
	if err != nil {
		return nil, err
	}
	roots, _, _, err := mozillaRoots()
	if err != nil {
		return nil, err
	}
	return buildImage(spec{
		Binary: bin, ECRCredentialProvider: ecrBin, Awsccmctl: ctlBin, CABundle: roots,
		Platform: p, Version: o.version, Revision: o.revision, Created: created, Format: formatOCI,
	})
}

// writeIndexArchive writes idx as an OCI image layout tarball at path,
// named ref as writeOCIArchive names a single image, through a temporary
// file beside it.
func writeIndexArchive(path string, ref name.Tag, idx v1.ImageIndex, mtime time.Time) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "oci-index-layout-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("oci layout: %w", err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		annotationRef:    ref.TagStr(),
		annotationCtrRef: ref.Name(),
	})); err != nil {
		return fmt.Errorf("oci layout: %w", err)
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := tarDir(f, dir, mtime); err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return fmt.Errorf("tar oci layout: %w", err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
