package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

var testEpoch = time.Unix(1700000000, 0).UTC()

// TestTarGzFixesWhatVaries: one entry, 0:0, 0755, the given mtime, and a
// gzip header with no name or time; equal input, equal bytes.
func TestTarGzFixesWhatVaries(t *testing.T) {
	a, err := tarGz("awsccmctl", []byte("binary"), testEpoch)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tarGz("awsccmctl", []byte("binary"), testEpoch)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("two archives of the same input differ")
	}
	if c, _ := tarGz("awsccmctl", []byte("binary"), testEpoch.Add(time.Second)); bytes.Equal(a, c) {
		t.Error("the mtime does not reach the archive")
	}
	zr, err := gzip.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header name %q time %v", zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	h, err := tr.Next()
	if err != nil {
		t.Fatal(err)
	}
	if h.Name != "awsccmctl" || h.Mode != 0o755 || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || !h.ModTime.Equal(testEpoch) {
		t.Errorf("header %+v", h)
	}
	if _, err := tr.Next(); err == nil {
		t.Error("more than one entry")
	}
}

func TestSerialNumber(t *testing.T) {
	a := serialNumber("abc", "awsccmctl-v1.0.0-linux-amd64.tar.gz")
	if a != serialNumber("abc", "awsccmctl-v1.0.0-linux-amd64.tar.gz") {
		t.Error("not derived from its inputs alone")
	}
	if a == serialNumber("abd", "awsccmctl-v1.0.0-linux-amd64.tar.gz") || a == serialNumber("abc", "awsccmctl-v1.0.0-linux-arm64.tar.gz") {
		t.Error("another commit or archive gives the same serial")
	}
	// urn:uuid:xxxxxxxx-xxxx-8xxx-[89ab]xxx-xxxxxxxxxxxx
	if len(a) != len("urn:uuid:")+36 || a[len("urn:uuid:")+14] != '8' || !strings.ContainsRune("89ab", rune(a[len("urn:uuid:")+19])) {
		t.Errorf("serial %q is not a version-8 UUID URN", a)
	}
}

func TestGoPURL(t *testing.T) {
	for in, want := range map[[2]string]string{
		{"k8s.io/client-go", "v0.37.2"}:                 "pkg:golang/k8s.io/client-go@v0.37.2",
		{"github.com/Foo/bar", "v2.0.0+incompatible"}:   "pkg:golang/github.com/Foo/bar@v2.0.0%2Bincompatible",
		{"stdlib", "go1.26.8"}:                          "pkg:golang/stdlib@go1.26.8",
		{"example.com/a b", "v0.0.0-20260101000000-ab"}: "pkg:golang/example.com/a%20b@v0.0.0-20260101000000-ab",
	} {
		if got := goPURL(in[0], in[1]); got != want {
			t.Errorf("goPURL(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
}

// TestRunPacksARelease runs the tool over a real Go binary for two
// platforms and a stray file.
func TestRunPacksARelease(t *testing.T) {
	binDir := t.TempDir()
	hello := buildHello(t)
	for _, p := range []string{"linux-amd64", "darwin-arm64"} {
		if err := os.MkdirAll(filepath.Join(binDir, p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(binDir, p, "awsccmctl"), hello, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	args := []string{"--bin-dir", binDir, "--output-dir", out, "--version", "v1.2.3", "--commit", "abc", "--epoch", "1700000000", "--download-url", "https://example.com/r/"}
	var stdout bytes.Buffer
	if err := run(args, &stdout); err != nil {
		t.Fatal(err)
	}
	want := "awsccm.yaml\nawsccmctl-v1.2.3-darwin-arm64.tar.gz\nawsccmctl-v1.2.3-darwin-arm64.tar.gz.cdx.json\n" +
		"awsccmctl-v1.2.3-linux-amd64.tar.gz\nawsccmctl-v1.2.3-linux-amd64.tar.gz.cdx.json\nSHA256SUMS\n"
	if stdout.String() != want {
		t.Errorf("wrote:\n%s\nwant:\n%s", stdout.String(), want)
	}
	cmd := exec.CommandContext(context.Background(), "sha256sum", "-c", "--strict", "SHA256SUMS")
	cmd.Dir = out
	if b, err := cmd.CombinedOutput(); err != nil || strings.Count(string(b), ": OK") != 5 {
		t.Errorf("sha256sum -c: %v\n%s", err, b)
	}
	var p KrewPlugin
	raw, err := os.ReadFile(filepath.Join(out, "awsccm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.Platforms) != 2 || p.Spec.Platforms[1].URI != "https://example.com/r/awsccmctl-v1.2.3-linux-amd64.tar.gz" ||
		p.Spec.Platforms[1].Selector.MatchLabels["os"] != "linux" || p.Spec.Platforms[1].Selector.MatchLabels["arch"] != "amd64" {
		t.Errorf("krew platforms %+v", p.Spec.Platforms)
	}
	var bom struct {
		SerialNumber string `json:"serialNumber"`
		Metadata     struct {
			Timestamp string `json:"timestamp"`
		} `json:"metadata"`
		Components []struct {
			Name, Version string
		} `json:"components"`
	}
	sbom, err := os.ReadFile(filepath.Join(out, "awsccmctl-v1.2.3-linux-amd64.tar.gz.cdx.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(sbom, &bom); err != nil {
		t.Fatal(err)
	}
	if bom.Metadata.Timestamp != "2023-11-14T22:13:20Z" || len(bom.Components) == 0 || bom.Components[len(bom.Components)-1].Name != "stdlib" {
		t.Errorf("SBOM %s", sbom)
	}

	// A file that is not a released binary for its platform is refused.
	if err := os.WriteFile(filepath.Join(binDir, "darwin-arm64", "aws-cloud-controller-manager"), hello, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := run(args, &stdout); err == nil || !strings.Contains(err.Error(), "not a released binary for darwin-arm64") {
		t.Errorf("a CCM for darwin: %v", err)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	err := run([]string{"--version", "1.2.3", "--epoch", "-1"}, &bytes.Buffer{})
	for _, want := range []string{"--bin-dir is required", "--output-dir is required", "--commit is required", `--version "1.2.3"`, `SOURCE_DATE_EPOCH "-1"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}

// buildHello builds a tiny Go program, which carries build information as
// the released binaries do.
func buildHello(t *testing.T) []byte {
	t.Helper()
	src := t.TempDir()
	for name, body := range map[string]string{
		"go.mod":  "module hello\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc main() {}\n",
	} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(src, "hello")
	cmd := exec.CommandContext(context.Background(), "go", "build", "-trimpath", "-o", path, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPackageChart: the chart is packaged as helm package does, under its
// name, with the release's version and appVersion, and the same bytes
// twice.
func TestPackageChart(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "Chart.yaml"), "apiVersion: v2\nname: aws-cloud-controller-manager\nversion: 0.0.0-dev\nappVersion: v0.0.0-dev\n")
	writeTestFile(t, filepath.Join(dir, "templates", "cm.yaml"), "kind: ConfigMap\n")
	r := release{version: "v1.2.3", created: time.Unix(1700000000, 0).UTC()}
	a, err := r.packageChart(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.packageChart(dir)
	if err != nil || !bytes.Equal(a, b) {
		t.Fatalf("two packages differ (%v)", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	got := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		content, _ := io.ReadAll(tr)
		got[h.Name] = string(content)
		if !h.ModTime.Equal(r.created) || h.Uid != 0 || h.Mode != 0o644 {
			t.Errorf("%s: mtime %v, uid %d, mode %o", h.Name, h.ModTime, h.Uid, h.Mode)
		}
	}
	if got["aws-cloud-controller-manager/Chart.yaml"] != "apiVersion: v2\nname: aws-cloud-controller-manager\nversion: 1.2.3\nappVersion: v1.2.3\n" {
		t.Errorf("Chart.yaml not stamped: %q", got["aws-cloud-controller-manager/Chart.yaml"])
	}
	if got["aws-cloud-controller-manager/templates/cm.yaml"] != "kind: ConfigMap\n" || len(got) != 2 {
		t.Errorf("entries %v", got)
	}
	if chartArchiveName(r.version) != "aws-cloud-controller-manager-1.2.3.tgz" {
		t.Errorf("name %s", chartArchiveName(r.version))
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
