package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// sourceURL is the project's repository: the krew manifest's homepage and,
// with /commit/<commit>, the SBOMs' VCS reference.
const sourceURL = "https://github.com/awsccmctl/awsccmctl"

// defaultDownloadURL is where a release's files are published, followed by
// the version: the krew manifest's archive URIs start with it.
const defaultDownloadURL = sourceURL + "/releases/download/"

// releasedBinaries are the binaries a release may hold and the platforms
// each is built for (hack/release.sh builds them; anything else in
// --bin-dir is an error, so a stray file never becomes a release artifact).
func releasedBinaries() map[string][]string {
	return map[string][]string{
		cliName:                        {"linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64"},
		"aws-cloud-controller-manager": {"linux-amd64", "linux-arm64"},
		"ecr-credential-provider":      {"linux-amd64", "linux-arm64"},
	}
}

// cliName is the CLI, the one binary krew installs.
const cliName = "awsccmctl"

// release is a checked set of flags.
type release struct {
	binDir, outputDir string
	// chartDir, when set, is the Helm chart to package.
	chartDir        string
	version, commit string
	created         time.Time
	downloadURL     string
}

// binary is one built binary of the release.
type binary struct {
	name, goos, goarch string
	path               string
}

// archiveName is the file name of b's archive.
func (b binary) archiveName(version string) string {
	return fmt.Sprintf("%s-%s-%s-%s.tar.gz", b.name, version, b.goos, b.goarch)
}

// binaries lists --bin-dir: <os>-<arch>/<name> for the released names and
// platforms only, sorted.
func (r release) binaries() ([]binary, error) {
	platforms, err := os.ReadDir(r.binDir)
	if err != nil {
		return nil, err
	}
	var out []binary
	for _, p := range platforms {
		goos, goarch, ok := strings.Cut(p.Name(), "-")
		if !p.IsDir() || !ok {
			return nil, fmt.Errorf("%s: want only <os>-<arch> folders in --bin-dir", filepath.Join(r.binDir, p.Name()))
		}
		files, err := os.ReadDir(filepath.Join(r.binDir, p.Name()))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if !slices.Contains(releasedBinaries()[f.Name()], p.Name()) {
				return nil, fmt.Errorf("%s: not a released binary for %s (released: %s)",
					filepath.Join(r.binDir, p.Name(), f.Name()), p.Name(), releasedList())
			}
			out = append(out, binary{name: f.Name(), goos: goos, goarch: goarch, path: filepath.Join(r.binDir, p.Name(), f.Name())})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no binaries", r.binDir)
	}
	slices.SortFunc(out, func(a, b binary) int { return strings.Compare(a.archiveName(""), b.archiveName("")) })
	return out, nil
}

// releasedList names every binary and its platforms, for errors.
func releasedList() string {
	var parts []string
	for name, platforms := range releasedBinaries() {
		parts = append(parts, name+" on "+strings.Join(platforms, ", "))
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

// write writes every release file into outputDir and returns their names,
// SHA256SUMS last, which lists every file in outputDir: hack/release.sh
// empties the folder first and writes the image index into it before.
func (r release) write() ([]string, error) {
	bins, err := r.binaries()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(r.outputDir, 0o755); err != nil {
		return nil, err
	}
	var krewArchives []krewArchive
	for _, b := range bins {
		content, err := os.ReadFile(b.path)
		if err != nil {
			return nil, err
		}
		archive, err := tarGz(b.name, content, r.created)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.path, err)
		}
		name := b.archiveName(r.version)
		if err := writeFile(filepath.Join(r.outputDir, name), archive); err != nil {
			return nil, err
		}
		sbom, err := r.sbom(b, content)
		if err != nil {
			return nil, fmt.Errorf("SBOM of %s: %w", b.path, err)
		}
		if err := writeFile(filepath.Join(r.outputDir, name+sbomSuffix), sbom); err != nil {
			return nil, err
		}
		if b.name == cliName {
			krewArchives = append(krewArchives, krewArchive{goos: b.goos, goarch: b.goarch, uri: r.downloadURL + "/" + name, sha256: sha256Hex(archive)})
		}
	}
	if r.chartDir != "" {
		chart, err := r.packageChart(r.chartDir)
		if err != nil {
			return nil, fmt.Errorf("chart: %w", err)
		}
		if err := writeFile(filepath.Join(r.outputDir, chartArchiveName(r.version)), chart); err != nil {
			return nil, err
		}
	}
	if len(krewArchives) > 0 {
		manifest, err := krewManifest(r.version, krewArchives)
		if err != nil {
			return nil, err
		}
		if err := writeFile(filepath.Join(r.outputDir, krewManifestName), manifest); err != nil {
			return nil, err
		}
	}
	summed, err := writeSums(r.outputDir)
	if err != nil {
		return nil, err
	}
	return summed, nil
}

// writeFile writes b to path through a temporary file beside it, so path
// is either the old file or the whole new one.
func writeFile(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
