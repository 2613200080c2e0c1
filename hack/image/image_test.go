package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/awsccmctl/awsccmctl/internal/migrate"
)

var testEpoch = time.Unix(1700000000, 0).UTC()

// testSpec is a spec with a fake binary: the image code never looks inside
// it (checkBinary does, and is tested on a real one below).
func testSpec(t *testing.T) spec {
	t.Helper()
	roots, _, _, err := mozillaRoots()
	if err != nil {
		t.Fatal(err)
	}
	return spec{
		Binary:                []byte("\x7fELF not really a binary"),
		ECRCredentialProvider: []byte("\x7fELF not really the ECR provider"),
		Awsccmctl:             []byte("\x7fELF not really awsccmctl"),
		CABundle:              roots,
		Platform:              v1.Platform{OS: "linux", Architecture: "amd64"},
		Version:               "v1.2.3",
		Revision:              "0123456789abcdef0123456789abcdef01234567",
		Created:               testEpoch,
		Format:                formatOCI,
	}
}

func mustBuild(t *testing.T, s spec) v1.Image {
	t.Helper()
	img, err := buildImage(s)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

type tarFile struct {
	typ      byte
	mode     int64
	uid, gid int
	data     string
}

func layerFiles(t *testing.T, img v1.Image) (map[string]tarFile, []string) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("got %d layers, want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	files := map[string]tarFile{}
	var order []string
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(testEpoch) {
			t.Errorf("%s: mtime %v, want %v", h.Name, h.ModTime, testEpoch)
		}
		if h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: user/group names %q/%q, want none", h.Name, h.Uname, h.Gname)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = tarFile{typ: h.Typeflag, mode: h.Mode, uid: h.Uid, gid: h.Gid, data: string(b)}
		order = append(order, h.Name)
	}
	return files, order
}

func TestLayerContents(t *testing.T) {
	s := testSpec(t)
	files, order := layerFiles(t, mustBuild(t, s))

	want := map[string]tarFile{
		"aws-cloud-controller-manager":      {typ: tar.TypeReg, mode: 0o755, data: string(s.Binary)},
		"ecr-credential-provider":           {typ: tar.TypeReg, mode: 0o755, data: string(s.ECRCredentialProvider)},
		"etc/":                              {typ: tar.TypeDir, mode: 0o755},
		"etc/group":                         {typ: tar.TypeReg, mode: 0o644, data: "root:x:0:\nnonroot:x:65532:\n"},
		"etc/passwd":                        {typ: tar.TypeReg, mode: 0o644, data: "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"},
		"etc/ssl/":                          {typ: tar.TypeDir, mode: 0o755},
		"etc/ssl/certs/":                    {typ: tar.TypeDir, mode: 0o755},
		"etc/ssl/certs/ca-certificates.crt": {typ: tar.TypeReg, mode: 0o644, data: string(s.CABundle)},
		"home/":                             {typ: tar.TypeDir, mode: 0o755},
		"home/nonroot/":                     {typ: tar.TypeDir, mode: 0o700, uid: 65532, gid: 65532},
		"tmp/":                              {typ: tar.TypeDir, mode: 0o1777},
		"usr/":                              {typ: tar.TypeDir, mode: 0o755},
		"usr/local/":                        {typ: tar.TypeDir, mode: 0o755},
		"usr/local/bin/":                    {typ: tar.TypeDir, mode: 0o755},
		"usr/local/bin/awsccmctl":           {typ: tar.TypeReg, mode: 0o755, data: string(s.Awsccmctl)},
	}
	if len(files) != len(order) {
		t.Errorf("duplicate entries in %v", order)
	}
	for p, w := range want {
		got, ok := files[p]
		if !ok {
			t.Errorf("missing %s", p)
			continue
		}
		if got != w {
			t.Errorf("%s: got type %q mode %o owner %d:%d (%d bytes), want type %q mode %o owner %d:%d (%d bytes)",
				p, got.typ, got.mode, got.uid, got.gid, len(got.data), w.typ, w.mode, w.uid, w.gid, len(w.data))
		}
	}
	for p := range files {
		if _, ok := want[p]; !ok {
			t.Errorf("unexpected entry %s", p)
		}
		if strings.HasPrefix(p, "bin/") || strings.HasSuffix(p, "/sh") {
			t.Errorf("shell-like entry %s", p)
		}
	}
}

func TestMozillaRoots(t *testing.T) {
	b, included, _, err := mozillaRoots()
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatal("bundle does not parse as PEM certificates")
	}
	n := 0
	for rest := b; ; n++ {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
	}
	if n != included || n < 100 {
		t.Errorf("bundle holds %d certificates, reported %d, want the same and at least 100", n, included)
	}
	// The CCM talks to AWS endpoints, whose chains end at Amazon's roots.
	if !strings.Contains(string(b), "CN=Amazon Root CA 1,O=Amazon,C=US") {
		t.Error("Amazon Root CA 1 is missing")
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name     string
		platform v1.Platform
		format   string
		mediaTyp types.MediaType
	}{
		{"oci amd64", v1.Platform{OS: "linux", Architecture: "amd64"}, formatOCI, types.OCIManifestSchema1},
		{"oci arm64", v1.Platform{OS: "linux", Architecture: "arm64"}, formatOCI, types.OCIManifestSchema1},
		{"docker arm64", v1.Platform{OS: "linux", Architecture: "arm64"}, formatDocker, types.DockerManifestSchema2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testSpec(t)
			s.Platform, s.Format = tc.platform, tc.format
			img := mustBuild(t, s)
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cf.OS != "linux" || cf.Architecture != tc.platform.Architecture {
				t.Errorf("platform %s/%s, want linux/%s", cf.OS, cf.Architecture, tc.platform.Architecture)
			}
			c := cf.Config
			if c.User != "65532:65532" {
				t.Errorf("user %q, want 65532:65532 (non-root)", c.User)
			}
			if strings.Join(c.Entrypoint, " ") != "/aws-cloud-controller-manager" || len(c.Cmd) != 0 {
				t.Errorf("entrypoint %q cmd %q", c.Entrypoint, c.Cmd)
			}
			if strings.Join(c.Env, ",") != "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt" {
				t.Errorf("env %q", c.Env)
			}
			wantLabels := map[string]string{
				"org.opencontainers.image.source":   "https://github.com/awsccmctl/awsccmctl",
				"org.opencontainers.image.version":  s.Version,
				"org.opencontainers.image.revision": s.Revision,
			}
			for k, v := range wantLabels {
				if c.Labels[k] != v {
					t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
				}
			}
			if !cf.Created.Equal(testEpoch) {
				t.Errorf("created %v, want %v", cf.Created.Time, testEpoch)
			}
			for _, h := range cf.History {
				if !h.Created.Equal(testEpoch) {
					t.Errorf("history created %v, want %v", h.Created.Time, testEpoch)
				}
			}
			if mt, _ := img.MediaType(); mt != tc.mediaTyp {
				t.Errorf("manifest media type %s, want %s", mt, tc.mediaTyp)
			}
		})
	}
}

func TestDigestDependsOnlyOnInputs(t *testing.T) {
	digest := func(s spec) v1.Hash {
		d, err := mustBuild(t, s).Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	s := testSpec(t)
	first := digest(s)
	if again := digest(testSpec(t)); again != first {
		t.Fatalf("two builds of the same inputs: %s and %s", first, again)
	}
	later := testSpec(t)
	later.Created = testEpoch.Add(time.Second)
	if digest(later) == first {
		t.Error("a different epoch gave the same digest")
	}
	arm := testSpec(t)
	arm.Platform.Architecture = "arm64"
	if digest(arm) == first {
		t.Error("a different platform gave the same digest")
	}
}

// helloBinary compiles a static hello-world for this machine: a real ELF
// for checkBinary and the end-to-end runs, in a second rather than the
// CCM's minutes.
func helloBinary(t *testing.T) (path, arch string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("needs a Linux go toolchain")
	}
	if _, ok := elfMachines[runtime.GOARCH]; !ok {
		t.Skipf("no image support for %s", runtime.GOARCH)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	dir := t.TempDir()
	for name, body := range map[string]string{
		"go.mod":  "module hello\n\ngo 1.22\n",
		"main.go": "package main\n\nimport \"os\"\n\nfunc main() { os.Stdout.WriteString(\"hello\\n\") }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path = filepath.Join(dir, "hello")
	cmd := exec.CommandContext(context.Background(), goBin, "build", "-trimpath", "-ldflags=-s -w", "-o", path, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH, "GOWORK=off", "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build hello: %v\n%s", err, out)
	}
	return path, runtime.GOARCH
}

func TestCheckBinary(t *testing.T) {
	hello, arch := helloBinary(t)
	other := "arm64"
	if arch == "arm64" {
		other = "amd64"
	}
	fake := filepath.Join(t.TempDir(), "fake")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, arch, wantErr string
	}{
		{"static for this arch", hello, arch, ""},
		{"wrong arch", hello, other, "GOARCH=" + other},
		{"not ELF", fake, arch, "not an ELF"},
		{"unsupported arch", hello, "s390x", "unsupported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkBinary(tc.path, tc.arch)
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("got %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
}

func fileSHA(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// runTool runs the command as hack/image.sh does and returns its output and
// the archive path it reported.
func runTool(t *testing.T, args ...string) (string, string) {
	t.Helper()
	var out bytes.Buffer
	if err := run(args, &out); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if p, ok := strings.CutPrefix(line, "archive: "); ok {
			return out.String(), p
		}
	}
	t.Fatalf("no archive line in output:\n%s", out.String())
	return "", ""
}

func TestRunOCIArchive(t *testing.T) {
	hello, arch := helloBinary(t)
	args := func(dir string) []string {
		return []string{"--binary", hello, "--ecr-credential-provider", hello, "--awsccmctl", hello, "--platform", "linux/" + arch, "--version", "v1.2.3+meta",
			"--revision", "abc", "--epoch", "1700000000", "--output-dir", dir}
	}
	out1, path1 := runTool(t, args(t.TempDir())...)
	out2, path2 := runTool(t, args(t.TempDir())...)
	if want := "aws-cloud-controller-manager-v1.2.3-meta-" + arch + ".oci.tar"; filepath.Base(path1) != want {
		t.Errorf("archive %s, want %s", filepath.Base(path1), want)
	}
	if fileSHA(t, path1) != fileSHA(t, path2) {
		t.Errorf("two runs wrote different archives:\n%s\n%s", out1, out2)
	}
	if !strings.Contains(out1, "digest:  sha256:") {
		t.Errorf("no digest in output:\n%s", out1)
	}

	// Read it back as an OCI image layout.
	dir := t.TempDir()
	untar(t, path1, dir)
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 {
		t.Fatalf("index has %d manifests, want 1", len(im.Manifests))
	}
	desc := im.Manifests[0]
	if got := desc.Annotations["io.containerd.image.name"]; got != "localhost/aws-cloud-controller-manager:v1.2.3-meta" {
		t.Errorf("io.containerd.image.name = %q", got)
	}
	if got := desc.Annotations["org.opencontainers.image.ref.name"]; got != "v1.2.3-meta" {
		t.Errorf("org.opencontainers.image.ref.name = %q", got)
	}
	img, err := p.Image(desc.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out1, "digest:  "+desc.Digest.String()) {
		t.Errorf("printed digest is not the index's %s:\n%s", desc.Digest, out1)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Architecture != arch || cf.Config.Labels[labelVersion] != "v1.2.3+meta" {
		t.Errorf("config arch %s version %q", cf.Architecture, cf.Config.Labels[labelVersion])
	}
	files := layerFilesAt(t, img)
	hb, err := os.ReadFile(hello)
	if err != nil {
		t.Fatal(err)
	}
	if files["aws-cloud-controller-manager"] != string(hb) {
		t.Error("the binary in the image differs from --binary")
	}
	if files["ecr-credential-provider"] != string(hb) {
		t.Error("the ECR credential provider in the image differs from --ecr-credential-provider")
	}
	if files["usr/local/bin/awsccmctl"] != string(hb) {
		t.Error("awsccmctl in the image differs from --awsccmctl")
	}
}

// TestAwsccmctlWhereNodePodsRunIt: the migration's node-step Pods run the
// image's awsccmctl by this path.
func TestAwsccmctlWhereNodePodsRunIt(t *testing.T) {
	if "/"+awsccmctlPath != migrate.NodePodBinary {
		t.Errorf("the image holds awsccmctl at /%s; the node-step Pods run %s", awsccmctlPath, migrate.NodePodBinary)
	}
}

func TestRunDockerArchive(t *testing.T) {
	hello, arch := helloBinary(t)
	dir := t.TempDir()
	_, path := runTool(t, "--binary", hello, "--ecr-credential-provider", hello, "--awsccmctl", hello, "--platform", "linux/"+arch, "--format", "docker",
		"--version", "v9", "--epoch", "0", "--output-dir", dir)
	if !strings.HasSuffix(path, "-"+arch+".docker.tar") {
		t.Errorf("archive %s", path)
	}
	tag, err := name.NewTag("localhost/aws-cloud-controller-manager:v9")
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || cf.Architecture != arch {
		t.Errorf("user %q arch %q", cf.Config.User, cf.Architecture)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	err := run([]string{"--platform", "windows/amd64", "--format", "zip", "--epoch", "yesterday"}, io.Discard)
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{"--binary is required", "--ecr-credential-provider is required", "--awsccmctl is required", "--platform", "--format", "--epoch"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func layerFilesAt(t *testing.T, img v1.Image) map[string]string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(tr)
			files[h.Name] = string(b)
		}
		_ = rc.Close()
	}
	return files
}

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
		if !strings.HasPrefix(p, filepath.Clean(dir)+string(os.PathSeparator)) {
			t.Fatalf("entry %s escapes the archive", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("unexpected entry type %q for %s", h.Typeflag, h.Name)
		}
	}
}
