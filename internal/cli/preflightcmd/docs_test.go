package preflightcmd

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestHowToNamesRealFlags keeps docs/preflight.md honest: every preflight
// flag it mentions exists (kubelet and cloud-config flags it quotes are
// listed as not ours).
func TestHowToNamesRealFlags(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/preflight.md")
	if err != nil {
		t.Fatal(err)
	}
	notOurs := map[string]bool{
		"cloud-provider": true, "provider-id": true, // kubelet and control-plane flags
		"image-credential-provider-config": true, "image-credential-provider-bin-dir": true,
	}
	cmd := NewCommand(Streams{}, func() (string, error) { return "text", nil })
	seen := 0
	for _, m := range regexp.MustCompile("--([a-z][a-z-]+)").FindAllStringSubmatch(string(doc), -1) {
		name := strings.TrimSuffix(m[1], "-")
		if notOurs[name] || name == "o" {
			continue
		}
		seen++
		if cmd.Flags().Lookup(name) == nil {
			t.Errorf("docs/preflight.md mentions --%s, which preflight does not have", name)
		}
	}
	if seen < 10 {
		t.Fatalf("found only %d flags in docs/preflight.md; is the pattern broken?", seen)
	}
}
