package lbconfig

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

// TestFixtures parses every Service in testdata/: valid-* must have no
// Problems; invalid-* must have exactly the Problems listed on their first
// line ("# want: key, key").
func TestFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var svc corev1.Service
			if err := yaml.UnmarshalStrict(data, &svc); err != nil {
				t.Fatalf("decode: %v", err)
			}
			var want []string
			if first, _, _ := strings.Cut(string(data), "\n"); strings.HasPrefix(first, "# want:") {
				for _, k := range strings.Split(strings.TrimPrefix(first, "# want:"), ",") {
					want = append(want, strings.TrimSpace(k))
				}
			}
			switch {
			case strings.HasPrefix(name, "valid-") && want != nil:
				t.Fatal("a valid-* fixture must not list problems")
			case strings.HasPrefix(name, "invalid-") && want == nil:
				t.Fatal("an invalid-* fixture must list its problems on its first line")
			case !strings.HasPrefix(name, "valid-") && !strings.HasPrefix(name, "invalid-"):
				t.Fatal("fixtures are named valid-* or invalid-*")
			}
			cfg, problems := Parse(&svc, lbnames.Kind(&svc))
			if cfg == nil {
				t.Fatal("no Config")
			}
			var got []string
			for _, p := range problems {
				got = append(got, p.Annotation)
				t.Log(p)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("problems on %q, want %q", got, want)
			}
		})
	}
}
