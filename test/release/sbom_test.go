package release

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// serialPattern is a urn:uuid: serial number.
var serialPattern = regexp.MustCompile(`^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// checkSBOMs decodes every archive's SBOM with the CycloneDX library and
// checks the native awsccmctl's against what it describes: the binary's
// hash, the release version and the modules go.mod pins.
func checkSBOMs(t *testing.T, repo string, r built) {
	clientGo := strings.TrimSpace(run(t, repo, nil, "go", "list", "-m", "-f", "{{.Version}}", "k8s.io/client-go"))
	serials := map[string]string{}
	for _, n := range names(t, r.dir) {
		if !strings.HasSuffix(n, ".tar.gz") {
			continue
		}
		bom := decodeSBOM(t, r.file(n+".cdx.json"))
		if !serialPattern.MatchString(bom.SerialNumber) {
			t.Errorf("%s's SBOM serial %q is not a urn:uuid", n, bom.SerialNumber)
		}
		if other, dup := serials[bom.SerialNumber]; dup {
			t.Errorf("%s and %s share the serial %s", n, other, bom.SerialNumber)
		}
		serials[bom.SerialNumber] = n
	}
	if len(serials) == 0 {
		t.Fatal("no archives in the release")
	}

	archive := cliArchive(r, "linux", runtime.GOARCH)
	bin := extract(t, r.file(archive), "awsccmctl", t.TempDir())
	content, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(content)
	bom := decodeSBOM(t, r.file(archive+".cdx.json"))
	if bom.SpecVersion != cdx.SpecVersion1_6 || bom.BOMFormat != cdx.BOMFormat {
		t.Errorf("SBOM is %s %s, want CycloneDX 1.6", bom.BOMFormat, bom.SpecVersion)
	}
	if bom.Metadata == nil || bom.Metadata.Component == nil {
		t.Fatal("SBOM names no component it describes")
	}
	main := bom.Metadata.Component
	if main.Name != "awsccmctl" || main.Version != r.version || main.Type != cdx.ComponentTypeApplication {
		t.Errorf("described component %s %s (%s), want the application awsccmctl %s", main.Name, main.Version, main.Type, r.version)
	}
	if main.Hashes == nil || len(*main.Hashes) != 1 || (*main.Hashes)[0].Value != hex.EncodeToString(sum[:]) {
		t.Errorf("described component's hashes %v, want the binary's SHA-256 %x", main.Hashes, sum)
	}
	if !strings.HasSuffix(main.PackageURL, "?goarch="+runtime.GOARCH+"&goos=linux") {
		t.Errorf("described component's purl %q names no platform", main.PackageURL)
	}
	found := map[string]string{}
	for _, c := range *bom.Components {
		found[c.Name] = c.Version
	}
	if found["k8s.io/client-go"] != clientGo {
		t.Errorf("SBOM lists k8s.io/client-go at %q, want go.mod's %s", found["k8s.io/client-go"], clientGo)
	}
	if found["github.com/spf13/cobra"] == "" {
		t.Error("SBOM does not list github.com/spf13/cobra, which awsccmctl links")
	}
	if found["stdlib"] != runtime.Version() {
		t.Errorf("SBOM lists the standard library at %q, want the toolchain's %s", found["stdlib"], runtime.Version())
	}
	// Only what is linked: the CCM's and the emulator's own modules that
	// the CLI does not import are not in the CLI's SBOM.
	if _, ok := found["github.com/CycloneDX/cyclonedx-go"]; ok {
		t.Error("awsccmctl's SBOM lists cyclonedx-go, which only hack/release links")
	}
	if bom.Dependencies == nil || len(*bom.Dependencies) != 1 || len(*(*bom.Dependencies)[0].Dependencies) != len(*bom.Components) {
		t.Error("SBOM's dependencies do not tie every component to awsccmctl")
	}
}

// decodeSBOM reads a CycloneDX JSON file with the library's decoder.
func decodeSBOM(t *testing.T, path string) *cdx.BOM {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(f, cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	return &bom
}
