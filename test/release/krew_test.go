package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// krewPlugin is krew's plugin manifest (index format v1alpha2), written
// here from krew's documented schema rather than taken from hack/release,
// so a field the generator misnames fails to decode (strictly).
type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Caveats          string `json:"caveats"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			SHA256 string `json:"sha256"`
			Files  []struct {
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"files"`
			Bin string `json:"bin"`
		} `json:"platforms"`
	} `json:"spec"`
}

// semverV is krew's version rule: a semantic version with the v prefix.
var semverV = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// checkKrewManifest decodes awsccm.yaml strictly and checks it against
// the release: one platform per awsccmctl archive, each with the archive's
// URI and SHA-256, and files/bin that install the archive's binary as
// kubectl-awsccm.
func checkKrewManifest(t *testing.T, r built) {
	raw, err := os.ReadFile(r.file("awsccm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var p krewPlugin
	if err := yaml.UnmarshalStrict(raw, &p); err != nil {
		t.Fatalf("awsccm.yaml is not a krew plugin manifest: %v\n%s", err, raw)
	}
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" {
		t.Errorf("apiVersion %q kind %q", p.APIVersion, p.Kind)
	}
	if p.Metadata.Name != "awsccm" {
		t.Errorf("metadata.name %q: krew wants the file's name, awsccm", p.Metadata.Name)
	}
	if p.Spec.Version != r.version || !semverV.MatchString(p.Spec.Version) {
		t.Errorf("spec.version %q: want the release's %s, a v-prefixed semantic version", p.Spec.Version, r.version)
	}
	if p.Spec.ShortDescription == "" || p.Spec.Homepage == "" {
		t.Error("spec.shortDescription and spec.homepage are empty")
	}
	archives := map[string]bool{}
	for _, n := range names(t, r.dir) {
		if strings.HasPrefix(n, "awsccmctl-") && strings.HasSuffix(n, ".tar.gz") {
			archives[n] = true
		}
	}
	if len(p.Spec.Platforms) != len(archives) || len(archives) < 2 {
		t.Fatalf("%d platforms for %d awsccmctl archives", len(p.Spec.Platforms), len(archives))
	}
	for _, pl := range p.Spec.Platforms {
		goos, goarch := pl.Selector.MatchLabels["os"], pl.Selector.MatchLabels["arch"]
		want := cliArchive(r, goos, goarch)
		if len(pl.Selector.MatchLabels) != 2 || !archives[want] {
			t.Errorf("platform %v selects no archive of the release", pl.Selector.MatchLabels)
			continue
		}
		if path.Base(pl.URI) != want || !strings.HasPrefix(pl.URI, "https://") {
			t.Errorf("%s/%s: uri %q, want an https URL of %s", goos, goarch, pl.URI, want)
		}
		content, err := os.ReadFile(r.file(want))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(content)
		if pl.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: sha256 %s, the archive's is %x", want, pl.SHA256, sum)
		}
		if len(pl.Files) != 1 || pl.Files[0].From != "awsccmctl" || pl.Files[0].To != "kubectl-awsccm" || pl.Bin != "kubectl-awsccm" {
			t.Errorf("%s: files %+v bin %q, want awsccmctl installed as kubectl-awsccm", want, pl.Files, pl.Bin)
		}
		// The file krew takes from the archive is there.
		extract(t, r.file(want), pl.Files[0].From, t.TempDir())
	}
}

// checkVersion runs the released native awsccmctl: it prints the version
// the release is named after.
func checkVersion(t *testing.T, r built) {
	bin := extract(t, r.file(cliArchive(r, "linux", runtime.GOARCH)), "awsccmctl", t.TempDir())
	out := run(t, "", nil, bin, "version")
	if !strings.Contains(out, r.version) {
		t.Errorf("awsccmctl version printed %q, want the release's %s", out, r.version)
	}
}

// checkPluginName installs the released awsccmctl as krew does (the
// archive's awsccmctl renamed kubectl-awsccm, and kubectl-awsccm linked to
// it from krew's bin) and runs it under that name: version prints what
// awsccmctl prints, and preflight --help is awsccmctl's with `kubectl
// awsccm` for `awsccmctl`.
func checkPluginName(t *testing.T, r built) {
	dir := t.TempDir()
	cli := extract(t, r.file(cliArchive(r, "linux", runtime.GOARCH)), "awsccmctl", dir)
	store := filepath.Join(dir, "store", "kubectl-awsccm")
	if err := os.MkdirAll(filepath.Dir(store), 0o755); err != nil {
		t.Fatal(err)
	}
	content, err := os.ReadFile(cli)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(store, content, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "bin", "kubectl-awsccm")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(store, link); err != nil {
		t.Fatal(err)
	}
	if a, b := run(t, "", nil, cli, "version"), run(t, "", nil, link, "version"); a != b {
		t.Errorf("version: awsccmctl %q, kubectl-awsccm %q", a, b)
	}
	cliHelp, pluginHelp := run(t, "", nil, cli, "preflight", "--help"), run(t, "", nil, link, "preflight", "--help")
	if !strings.Contains(pluginHelp, "Usage:\n  kubectl awsccm preflight") {
		t.Errorf("kubectl-awsccm preflight --help has no `kubectl awsccm preflight` usage:\n%s", pluginHelp)
	}
	if got := strings.ReplaceAll(pluginHelp, "kubectl awsccm", "awsccmctl"); got != cliHelp {
		t.Errorf("kubectl-awsccm preflight --help differs from awsccmctl's beyond the name:\n%s\nvs\n%s", pluginHelp, cliHelp)
	}
	if bytes.Contains([]byte(pluginHelp), []byte("\n  awsccmctl ")) {
		t.Error("kubectl-awsccm preflight --help still shows awsccmctl commands")
	}
}
