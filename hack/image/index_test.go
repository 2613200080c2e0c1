package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// binDirFor builds a tiny static program for linux/amd64 and linux/arm64
// and lays it out as --bin-dir wants, under each binary's name.
func binDirFor(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	src := t.TempDir()
	for name, body := range map[string]string{
		"go.mod":  "module hello\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc main() {}\n",
	} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	binDir := t.TempDir()
	for _, arch := range []string{"amd64", "arm64"} {
		out := filepath.Join(binDir, "linux-"+arch, binaryName)
		cmd := exec.CommandContext(context.Background(), goBin, "build", "-trimpath", "-ldflags=-s -w", "-o", out, ".")
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch, "GOWORK=off", "GOFLAGS=-buildvcs=false")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build for %s: %v\n%s", arch, err, b)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, other := range []string{ecrProviderName, filepath.Base(awsccmctlPath)} {
			if err := os.WriteFile(filepath.Join(binDir, "linux-"+arch, other), b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return binDir
}

// TestRunIndexArchive: --bin-dir over two platforms writes one OCI layout
// whose index.json names one image index, tagged as the single images
// are, over an image per platform; twice gives the same bytes.
func TestRunIndexArchive(t *testing.T) {
	binDir := binDirFor(t)
	args := func(dir string) []string {
		return []string{"--bin-dir", binDir, "--platform", "linux/amd64,linux/arm64", "--version", "v1.2.3",
			"--revision", "abc", "--epoch", "1700000000", "--output-dir", dir}
	}
	out1, path1 := runTool(t, args(t.TempDir())...)
	_, path2 := runTool(t, args(t.TempDir())...)
	if filepath.Base(path1) != "aws-cloud-controller-manager-v1.2.3.oci.tar" {
		t.Errorf("archive %s", filepath.Base(path1))
	}
	if fileSHA(t, path1) != fileSHA(t, path2) {
		t.Error("two runs wrote different index archives")
	}
	dir := t.TempDir()
	untar(t, path1, dir)
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.Manifests) != 1 || !tm.Manifests[0].MediaType.IsIndex() {
		t.Fatalf("index.json: %+v, want one image index", tm.Manifests)
	}
	if got := tm.Manifests[0].Annotations[annotationCtrRef]; got != "localhost/aws-cloud-controller-manager:v1.2.3" {
		t.Errorf("%s = %q", annotationCtrRef, got)
	}
	if !strings.Contains(out1, "digest:  "+tm.Manifests[0].Digest.String()) {
		t.Errorf("printed digest is not the index's %s:\n%s", tm.Manifests[0].Digest, out1)
	}
	idx, err := top.ImageIndex(tm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, d := range m.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if d.Platform == nil || cf.Architecture != d.Platform.Architecture {
			t.Errorf("manifest %s: platform %v, config architecture %s", d.Digest, d.Platform, cf.Architecture)
			continue
		}
		want, err := os.ReadFile(filepath.Join(binDir, "linux-"+cf.Architecture, binaryName))
		if err != nil {
			t.Fatal(err)
		}
		if layerFilesAt(t, img)[binaryName] != string(want) {
			t.Errorf("the %s image does not hold linux-%s's binary", cf.Architecture, cf.Architecture)
		}
		platforms = append(platforms, d.Platform.String())
	}
	slices.Sort(platforms)
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("platforms %v", platforms)
	}
}

// TestRunIndexRejectsBadFlags: the index is OCI only, and --bin-dir does
// not mix with the single image's binary flags.
func TestRunIndexRejectsBadFlags(t *testing.T) {
	binDir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bin-dir", binDir, "--format", "docker"}, "written as oci only"},
		{[]string{"--bin-dir", binDir, "--binary", "x"}, "--bin-dir replaces --binary"},
		{[]string{"--bin-dir", binDir, "--platform", "linux/amd64,windows/amd64"}, "supported are linux/amd64 and linux/arm64"},
		{[]string{"--bin-dir", binDir, "--platform", "linux/amd64", "--output-dir", t.TempDir()}, "linux-amd64"},
	} {
		err := run(tc.args, &strings.Builder{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to say %q", tc.args, err, tc.want)
		}
	}
}
