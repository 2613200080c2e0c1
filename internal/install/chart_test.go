package install

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
)

const chartDir = "../../charts/aws-cloud-controller-manager"

// schemaProperties returns the top-level keys values.schema.json allows.
func schemaProperties(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		AdditionalProperties *bool          `json:"additionalProperties"`
		Properties           map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.AdditionalProperties == nil || *s.AdditionalProperties {
		t.Error("values.schema.json allows unknown keys: a typo would install silently")
	}
	return s.Properties
}

// TestChartSchemaHasEveryValue: every key HelmValues can write, and every
// key of the chart's values.yaml, is in the schema, which refuses others.
func TestChartSchemaHasEveryValue(t *testing.T) {
	props := schemaProperties(t)
	var names []string
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous {
				walk(f.Type)
				continue
			}
			names = append(names, name)
		}
	}
	walk(reflect.TypeFor[ChartValues]())
	for _, n := range names {
		// The chart takes the ServiceAccount's annotations as upstream's
		// serviceAccount.annotations; HelmValues never writes this key.
		if n == "serviceAccountAnnotations" {
			continue
		}
		if _, ok := props[n]; !ok {
			t.Errorf("values.schema.json has no %q, which HelmValues writes", n)
		}
	}
	data, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var defaults map[string]any
	if err := yaml.Unmarshal(data, &defaults); err != nil {
		t.Fatal(err)
	}
	for k := range defaults {
		if _, ok := props[k]; !ok {
			t.Errorf("values.yaml sets %q, which values.schema.json does not allow", k)
		}
	}
}

func TestHelmValuesRefusesLeaderMigration(t *testing.T) {
	lm, err := leadermigration.Render(leadermigration.ComponentCCM)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := HelmValues(Values{LeaderMigrationConfig: lm}); err == nil || !strings.Contains(err.Error(), "leaderMigrationConfig") {
		t.Errorf("error %v, want one naming leaderMigrationConfig", err)
	}
	if _, err := HelmValues(Values{Workload: "statefulset"}); err == nil || !strings.Contains(err.Error(), "workload") {
		t.Errorf("invalid values: error %v, want Validate's", err)
	}
}

func TestSplitImage(t *testing.T) {
	digest := "sha256:" + sha256Hex
	for ref, want := range map[string]ChartImage{
		"ghcr.io/a/ccm:v1":                   {Repository: "ghcr.io/a/ccm", Tag: "v1"},
		"localhost:5000/ccm:v1":              {Repository: "localhost:5000/ccm", Tag: "v1"},
		"localhost:5000/ccm@" + digest:       {Repository: "localhost:5000/ccm", Digest: digest},
		"localhost:5000/ccm:v1@" + digest:    {Repository: "localhost:5000/ccm", Tag: "v1", Digest: digest},
		"registry.example.com/a/b/c:1.2.3-r": {Repository: "registry.example.com/a/b/c", Tag: "1.2.3-r"},
	} {
		if got := splitImage(ref); got != want {
			t.Errorf("splitImage(%q) = %+v, want %+v", ref, got, want)
		}
		// And back: the chart joins them as repository[:tag][@digest].
		joined := want.Repository
		if want.Tag != "" {
			joined += ":" + want.Tag
		}
		if want.Digest != "" {
			joined += "@" + want.Digest
		}
		if joined != ref {
			t.Errorf("%q does not join back: %q", ref, joined)
		}
	}
}
