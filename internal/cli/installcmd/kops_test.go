package installcmd_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/kopsconfig"
)

// splitKops splits `install kops` output at the commands marker.
func splitKops(t *testing.T, out string) (snippet string, commands []string) {
	t.Helper()
	snippet, rest, ok := strings.Cut(out, kopsconfig.CommandsMarker+"\n")
	if !ok {
		t.Fatalf("no %q line:\n%s", kopsconfig.CommandsMarker, out)
	}
	return snippet, strings.Split(strings.TrimSuffix(rest, "\n"), "\n")
}

func TestKopsOutput(t *testing.T) {
	const external = " --set spec.kubelet.cloudProvider=external --set spec.kubeControllerManager.cloudProvider=external"
	for _, tc := range []struct {
		name         string
		args         []string
		want         kopsconfig.CloudControllerManager
		wantCommands []string
	}{
		{"valid-defaults", nil,
			kopsconfig.CloudControllerManager{Image: install.DefaultImage()},
			[]string{"kops edit cluster --name prod.k8s.example.com --set spec.cloudControllerManager.image=" + install.DefaultImage() + external,
				"kops update cluster --name prod.k8s.example.com --yes"}},
		{"valid-cloud-routes", []string{"--image", "registry.example.com/ccm:v1", "--configure-cloud-routes", "--allocate-node-cidrs=false", "--cluster-cidr", "100.96.0.0/11"},
			kopsconfig.CloudControllerManager{Image: "registry.example.com/ccm:v1", ConfigureCloudRoutes: ptr(true), AllocateNodeCIDRs: ptr(false), ClusterCIDR: "100.96.0.0/11"},
			[]string{"kops edit cluster --name prod.k8s.example.com --set spec.cloudControllerManager.image=registry.example.com/ccm:v1" + external +
				" --set spec.cloudControllerManager.allocateNodeCIDRs=false --set spec.cloudControllerManager.configureCloudRoutes=true" +
				" --set spec.cloudControllerManager.clusterCIDR=100.96.0.0/11",
				"kops update cluster --name prod.k8s.example.com --yes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := run(t, append([]string{"install", "kops", "--name", "prod.k8s.example.com"}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			snippet, commands := splitKops(t, out)
			var s kopsconfig.Snippet
			if err := yaml.UnmarshalStrict([]byte(snippet), &s); err != nil {
				t.Fatalf("snippet is not a Cluster fragment: %v\n%s", err, snippet)
			}
			got := s.Spec.CloudControllerManager
			if got.Image != tc.want.Image || got.ClusterCIDR != tc.want.ClusterCIDR ||
				!eqPtr(got.ConfigureCloudRoutes, tc.want.ConfigureCloudRoutes) || !eqPtr(got.AllocateNodeCIDRs, tc.want.AllocateNodeCIDRs) {
				t.Errorf("snippet %+v, want %+v", got, tc.want)
			}
			if strings.Join(commands, "\n") != strings.Join(tc.wantCommands, "\n") {
				t.Errorf("commands:\n%s\nwant:\n%s", strings.Join(commands, "\n"), strings.Join(tc.wantCommands, "\n"))
			}
		})
	}
}

func TestKopsUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"invalid-missing-name", nil, []string{"--name", "required"}},
		{"invalid-name", []string{"--name", "Not_A_Name"}, []string{"--name", "Not_A_Name"}},
		{"invalid-routes-without-cidr", []string{"--name", "c.example.com", "--configure-cloud-routes"}, []string{"--configure-cloud-routes"}},
		{"invalid-all-at-once", []string{"--image", "bad image", "--cluster-cidr", "10.0.0.0/99"}, []string{"--name", "--image", "--cluster-cidr"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := run(t, append([]string{"install", "kops"}, tc.args...)...)
			if code := exitcode.Of(err); code != exitcode.Usage {
				t.Fatalf("exit code %d (%v), want %d", code, err, exitcode.Usage)
			}
			if out != "" {
				t.Errorf("wrote output despite the error:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not name %q:\n%v", w, err)
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func eqPtr(a, b *bool) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
