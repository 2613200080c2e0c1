package installcmd_test

import (
	"os"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
)

// TestRenderTimeValidation: the image and the CCM's extra flags are
// checked before anything is rendered or applied, the same way for every
// target that takes them, with exit code 2 and the flag named.
func TestRenderTimeValidation(t *testing.T) {
	targets := map[string][]string{
		"manifests": {"install", "manifests"},
		// Values are read before the kubeconfig is used: no cluster needed.
		"apply": {"install", "apply", "--kubeconfig", os.DevNull},
		"kops":  {"install", "kops", "--name", "c.example.com"},
	}
	for _, tc := range []struct {
		name    string
		args    []string
		targets []string
		want    []string
	}{
		{"empty-image", []string{"--image", ""}, []string{"manifests", "apply", "kops"}, []string{"--image", "empty"}},
		{"invalid-image", []string{"--image", "Registry.example.com/CCM:v1"}, []string{"manifests", "apply", "kops"},
			[]string{"--image", `"Registry.example.com/CCM:v1": not an image reference`}},
		{"untagged-image", []string{"--image", "registry.example.com/ccm"}, []string{"manifests", "apply", "kops"},
			[]string{"--image", "pin a tag or digest"}},
		{"unknown-extra-arg", []string{"--extra-args", "no-such-flag=1"}, []string{"manifests", "apply"},
			[]string{"--extra-args", `"no-such-flag": not a flag of aws-cloud-controller-manager`}},
		{"bad-extra-arg-value", []string{"--extra-args", "node-monitor-period=soon"}, []string{"manifests", "apply"},
			[]string{"--extra-args", `"node-monitor-period": value "soon": not a duration`}},
		{"region", []string{"--region", "moon-1"}, []string{"manifests", "apply"},
			[]string{`region (--region) "moon-1" is not an AWS region name`}},
	} {
		for _, target := range tc.targets {
			t.Run(tc.name+"/"+target, func(t *testing.T) {
				out, _, err := run(t, append(append([]string{}, targets[target]...), tc.args...)...)
				if code := exitcode.Of(err); code != exitcode.Usage {
					t.Fatalf("exit code %d (%v), want %d", code, err, exitcode.Usage)
				}
				if out != "" {
					t.Errorf("wrote output despite the error:\n%s", out)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error lacks %q:\n%v", w, err)
					}
				}
				if strings.Contains(err.Error(), "cloud-config") || strings.Contains(err.Error(), "cloudConfig") {
					t.Errorf("error blames the cloud config:\n%v", err)
				}
			})
		}
	}
}
