package installcmd_test

import (
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/install"
)

// TestManifestsMonitoring: --monitoring (or the file's monitoring: true)
// renders what install.Render renders with Values.Monitoring, the secure
// port on every address; --bind-address=127.0.0.1 with it is a usage error
// naming both flags.
func TestManifestsMonitoring(t *testing.T) {
	out, _, err := run(t, "install", "manifests", "--image", "registry.example.com/ccm:v1", "--monitoring")
	if err != nil {
		t.Fatal(err)
	}
	v := install.Values{Image: "registry.example.com/ccm:v1", Monitoring: true}
	v.Default()
	want, err := install.Render(v)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) || !strings.Contains(out, "kind: ServiceMonitor") || !strings.Contains(out, `"--bind-address=0.0.0.0"`) {
		t.Errorf("stdout differs from install.Render with monitoring:\n%s", out)
	}

	out = manifestsWithConfig(t, "monitoring: true")
	if !strings.Contains(out, "kind: PrometheusRule") {
		t.Errorf("the file's monitoring: true rendered no PrometheusRule:\n%s", out)
	}

	_, _, err = run(t, "install", "manifests", "--monitoring", "--bind-address", "127.0.0.1")
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "--bind-address") || !strings.Contains(err.Error(), "--monitoring") {
		t.Errorf("--monitoring with a loopback --bind-address: %v, want a usage error naming both", err)
	}
}
