package release

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// checkChart: the release's packaged chart, as a user fetches it, renders
// through Helm (chart-check, the Helm library) the CCM at the release's
// image, and says its version.
func checkChart(t *testing.T, r built) {
	t.Helper()
	archive := r.file("aws-cloud-controller-manager-" + strings.TrimPrefix(r.version, "v") + ".tgz")
	tool := testbed.Tool(t, testbed.ChartCheckBinary)
	out, err := exec.CommandContext(t.Context(), tool, "render", "--chart", archive, "--release", "ccm", "--namespace", "kube-system").Output()
	if err != nil {
		t.Fatalf("chart-check render %s: %v\n%s", archive, err, out)
	}
	var res struct {
		Objects []struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct {
							Image string `json:"image"`
						} `json:"containers"`
					} `json:"spec"`
				} `json:"template"`
			} `json:"spec"`
		} `json:"objects"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	want := install.ImageRepository + ":" + r.version
	found := false
	for _, o := range res.Objects {
		if o.Kind != "DaemonSet" {
			continue
		}
		found = true
		if img := o.Spec.Template.Spec.Containers[0].Image; img != want {
			t.Errorf("the packaged chart runs %s, want the release's %s", img, want)
		}
		if chart := o.Metadata.Labels["helm.sh/chart"]; chart != "aws-cloud-controller-manager-"+strings.TrimPrefix(r.version, "v") {
			t.Errorf("helm.sh/chart %q: the chart's version is not the release's", chart)
		}
	}
	if !found {
		t.Errorf("the packaged chart renders no DaemonSet: %s", out)
	}
}
