package install

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsInstallConfigurations decodes, applies and validates every
// InstallConfiguration example in docs/, so the guides cannot rot.
func TestDocsInstallConfigurations(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```")
	found := 0
	for _, f := range files {
		doc, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range block.FindAllStringSubmatch(string(doc), -1) {
			if !strings.Contains(m[1], "kind: InstallConfiguration") {
				continue
			}
			found++
			c, err := DecodeConfig([]byte(m[1]))
			if err != nil {
				t.Errorf("%s: example does not decode: %v\n%s", f, err, m[1])
				continue
			}
			var v Values
			if err := c.ApplyTo(&v); err != nil {
				t.Errorf("%s: example: %v", f, err)
				continue
			}
			v.Default()
			if err := v.Validate(); err != nil {
				t.Errorf("%s: example is invalid: %v", f, err)
			}
		}
	}
	if found == 0 {
		t.Fatal("no InstallConfiguration example found in docs/")
	}
}
