package release

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// fullEnv asks for the whole matrix and the image index (hack/release.sh
// --verify sets it).
const fullEnv = "RELEASE_FULL"

// built is one release built by hack/release.sh in a clone.
type built struct {
	clone   string // the clone's root
	version string // VERSION of hack/lib/version.sh there
	dir     string // _output/release/<version>
}

// file returns the path of a release file.
func (b built) file(name string) string { return filepath.Join(b.dir, name) }

// releaseTargets are the RELEASE_TARGETS built: in make test a subset that
// still crosses an architecture (the native linux awsccmctl the bootstrap
// script installs, awsccmctl for the other architecture as a second krew
// platform, and the small ecr-credential-provider there too, whose
// dependencies that build compiles already): the test took 53 s warm;
// the whole matrix twice took 231 s warm, so it is hack/release.sh
// --verify's, with RELEASE_FULL set ("": every target).
func releaseTargets() string {
	if os.Getenv(fullEnv) != "" {
		return ""
	}
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	return strings.Join([]string{
		"awsccmctl/linux/" + runtime.GOARCH,
		"awsccmctl/linux/" + other,
		"ecr-credential-provider/linux/" + other,
	}, " ")
}

// TestReleaseReproducible builds the release twice, from two clones of the
// commit under test at two paths, then checks the files as their users
// would (subtests).
func TestReleaseReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the release twice: make test runs it")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	commit := commitUnderTest(t, repo)
	a := buildRelease(t, repo, commit, filepath.Join(t.TempDir(), "a", "awsccmctl"), "")
	// hack/release.sh --verify builds the second time with an empty build
	// cache (RELEASE_COLD_CACHE=1), so that nothing the first build
	// compiled is reused.
	cache := ""
	if os.Getenv("RELEASE_COLD_CACHE") == "1" {
		cache = t.TempDir()
	}
	b := buildRelease(t, repo, commit, filepath.Join(t.TempDir(), "b", "elsewhere", "src"), cache)

	t.Run("same-bytes", func(t *testing.T) { sameFiles(t, a.dir, b.dir) })
	t.Run("checksums", func(t *testing.T) { checkSums(t, a) })
	t.Run("sbom", func(t *testing.T) { checkSBOMs(t, repo, a) })
	t.Run("version", func(t *testing.T) { checkVersion(t, a) })
	t.Run("krew", func(t *testing.T) { checkKrewManifest(t, a) })
	t.Run("kubectl-plugin", func(t *testing.T) { checkPluginName(t, a) })
	t.Run("chart", func(t *testing.T) { checkChart(t, a) })
	if os.Getenv(fullEnv) != "" {
		t.Run("image-index", func(t *testing.T) { checkImageIndex(t, a) })
	}
	t.Run("bootstrap-script", func(t *testing.T) { checkBootstrap(t, repo, a) })
}

// commitUnderTest is HEAD, or with uncommitted changes to tracked files a
// commit object holding them (git stash create: no ref or working file
// changes), so the clones build what is being tested. Untracked files are
// not in it: add them first.
func commitUnderTest(t *testing.T, repo string) string {
	t.Helper()
	stash := strings.TrimSpace(git(t, repo, "stash", "create"))
	if stash != "" {
		t.Logf("building the working tree's tracked changes (commit %s)", stash)
		return stash
	}
	return strings.TrimSpace(git(t, repo, "rev-parse", "HEAD"))
}

// buildRelease clones repo at commit into dir and runs hack/release.sh
// there, with GOCACHE set to cache when not empty.
func buildRelease(t *testing.T, repo, commit, dir, cache string) built {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, "", "clone", "--quiet", "--shared", "--no-checkout", repo, dir)
	git(t, dir, "-c", "advice.detachedHead=false", "checkout", "--quiet", commit)
	version := strings.TrimSpace(run(t, dir, nil, "bash", "-c", `. hack/lib/version.sh && echo "$VERSION"`))
	env := []string{"RELEASE_TARGETS=" + releaseTargets(), "RELEASE_IMAGE=0"}
	if os.Getenv(fullEnv) != "" {
		env = []string{"RELEASE_IMAGE=1"}
	}
	if cache != "" {
		env = append(env, "GOCACHE="+cache)
	}
	start := time.Now()
	out := run(t, dir, env, "hack/release.sh")
	t.Logf("hack/release.sh in %s: %s\n%s", dir, time.Since(start).Round(time.Second), lastLines(out, 3))
	return built{clone: dir, version: version, dir: filepath.Join(dir, "_output", "release", version)}
}

// sameFiles compares the two release folders file by file.
func sameFiles(t *testing.T, a, b string) {
	t.Helper()
	na, nb := names(t, a), names(t, b)
	if !slices.Equal(na, nb) {
		t.Fatalf("the two builds wrote different files:\n  %v\n  %v", na, nb)
	}
	if len(na) < 4 {
		t.Fatalf("release holds %v: want archives, SBOMs, the krew manifest and SHA256SUMS", na)
	}
	for _, n := range na {
		ba, err := os.ReadFile(filepath.Join(a, n))
		if err != nil {
			t.Fatal(err)
		}
		bb, err := os.ReadFile(filepath.Join(b, n))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ba, bb) {
			t.Errorf("%s differs between the two builds (%d and %d bytes)", n, len(ba), len(bb))
		}
	}
}

// names lists a folder's files, sorted.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// checkSums runs sha256sum -c over SHA256SUMS and checks it lists every
// other file of the release.
func checkSums(t *testing.T, r built) {
	out := run(t, r.dir, nil, "sha256sum", "-c", "--strict", "SHA256SUMS")
	listed := strings.Count(out, ": OK\n")
	if want := len(names(t, r.dir)) - 1; listed != want {
		t.Errorf("sha256sum -c verified %d files, want every file but SHA256SUMS (%d):\n%s", listed, want, out)
	}
	// A changed byte must fail the check (the bootstrap script relies on it).
	tampered := t.TempDir()
	for _, n := range names(t, r.dir) {
		b, err := os.ReadFile(r.file(n))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(n, ".tar.gz") {
			b[len(b)/2] ^= 0xff
		}
		if err := os.WriteFile(filepath.Join(tampered, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(context.Background(), "sha256sum", "-c", "--quiet", "SHA256SUMS")
	cmd.Dir = tampered
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("sha256sum -c passed over tampered archives:\n%s", out)
	}
}

// git runs git in dir ("" for the test's) and returns its output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	return run(t, "", nil, "git", args...)
}

// run runs name with args in dir, env added to the test's environment,
// and returns its combined output; a failure fails the test.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// lastLines is s's last n lines.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
