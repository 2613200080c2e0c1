package installcmd_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/install"
)

// TestManifestsHelmValues: --format helm-values prints the chart's values
// for the flags and config file given, and nothing else; it cannot be
// combined with the outputs that write objects.
func TestManifestsHelmValues(t *testing.T) {
	out, _, err := run(t, "install", "manifests", "--format", "helm-values", "--cluster-name", "prod",
		"--region", "eu-west-1", "--expected-nodes", "3000", "--workload", "deployment", "--replicas", "3")
	if err != nil {
		t.Fatal(err)
	}
	var c install.ChartValues
	if err := yaml.UnmarshalStrict([]byte(out), &c); err != nil {
		t.Fatalf("not the chart's values: %v\n%s", err, out)
	}
	if c.ClusterName != "prod" || !strings.Contains(c.CloudConfig, "Region = eu-west-1") || c.ExpectedNodes == nil || *c.ExpectedNodes != 3000 ||
		c.Workload != install.WorkloadDeployment || c.Replicas == nil || *c.Replicas != 3 || c.Image.Repository != install.ImageRepository {
		t.Errorf("values do not carry the flags:\n%s", out)
	}
	for _, bad := range [][]string{
		{"--format", "helm-values", "-o", "json"},
		{"--format", "helm-values", "--output-dir", t.TempDir()},
		{"--format", "helm"},
	} {
		if _, _, err := run(t, append([]string{"install", "manifests"}, bad...)...); err == nil || !strings.Contains(err.Error(), "format") {
			t.Errorf("%v: error %v, want a usage error naming --format", bad, err)
		}
	}
}
