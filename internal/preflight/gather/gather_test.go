package gather

import (
	"errors"
	"path/filepath"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/nodechecks"
)

const fixtures = "../nodefiles/testdata"

// TestCollectNodeMode: node mode without AWS runs the node checks of the
// mode on the files under the root.
func TestCollectNodeMode(t *testing.T) {
	rep, err := Collect(t.Context(), Options{Mode: preflight.ModePreMigrate, Node: true, Root: filepath.Join(fixtures, "kubeadm-1.26-intree")})
	if err != nil {
		t.Fatal(err)
	}
	want := nodechecks.Checks(nodechecks.Input{Mode: preflight.ModePreMigrate})
	if rep.Mode != preflight.ModePreMigrate || len(rep.Findings) != len(want) {
		t.Fatalf("mode %s, %d findings; want %s, %d", rep.Mode, len(rep.Findings), preflight.ModePreMigrate, len(want))
	}
	for i, f := range rep.Findings {
		if f.ID != want[i].ID || f.Category == "aws" {
			t.Errorf("finding %d is %s (%s), want %s", i, f.ID, f.Category, want[i].ID)
		}
	}
}

// TestCollectErrorKinds: callers choose exit codes by the error's type.
func TestCollectErrorKinds(t *testing.T) {
	kube := genericclioptions.NewConfigFlags(false)
	server, kubeconfig := "https://127.0.0.1:1", "/nonexistent/kubeconfig"
	kube.APIServer, kube.KubeConfig = &server, &kubeconfig
	cases := []struct {
		name        string
		o           Options
		input, down bool
	}{
		{"valid-ignore-all", Options{Mode: preflight.ModePreInstall, Node: true, Root: filepath.Join(fixtures, "kops-node"), Ignore: []string{"all"}}, false, false},
		{"invalid-unknown-ignore", Options{Mode: preflight.ModePreInstall, Node: true, Root: filepath.Join(fixtures, "kops-node"), Ignore: []string{"no-such-check"}}, true, false},
		{"invalid-unknown-category", Options{Mode: preflight.ModePreInstall, Node: true, Root: filepath.Join(fixtures, "kops-node"), Categories: []string{"no-such-category"}}, true, false},
		{"invalid-kubeconfig", Options{Mode: preflight.ModePreInstall, Kube: kube}, true, false},
		{"invalid-cloud-config", Options{Mode: preflight.ModePreInstall, Node: true, Root: filepath.Join(fixtures, "kops-node"), AWS: true, CloudConfig: "/nonexistent/cloud.conf"}, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Collect(t.Context(), tc.o)
			var input *InputError
			var down *UnreachableError
			if errors.As(err, &input) != tc.input || errors.As(err, &down) != tc.down {
				t.Fatalf("error %T %v; want input %v, unreachable %v", err, err, tc.input, tc.down)
			}
		})
	}
}

// TestCollectRegionUnknown: with AWS, a node mode run that cannot learn the
// region (no flag, no cloud config, IMDS silent) is an UnreachableError.
func TestCollectRegionUnknown(t *testing.T) {
	srv := emulatorEnv(t)
	srv.SetIMDSAvailable(false)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	_, err := Collect(t.Context(), Options{Mode: preflight.ModePreInstall, Node: true, Root: filepath.Join(fixtures, "kops-node"), AWS: true})
	var down *UnreachableError
	if !errors.As(err, &down) {
		t.Fatalf("error %T %v, want *UnreachableError", err, err)
	}
}
