package gather

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/awschecks"
	"github.com/awsccmctl/awsccmctl/internal/preflight/clusterchecks"
	"github.com/awsccmctl/awsccmctl/internal/preflight/nodechecks"
)

const fixtures = "../../nodefiles/testdata"

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
// region (no flag, no cloud config, IMDS silent, as in a container behind
// an IMDSv2 hop limit of 1) still runs every node check; each AWS check is
// skipped with the reason, and nothing is asked of AWS.
func TestCollectRegionUnknown(t *testing.T) {
	srv := emulatorEnv(t)
	srv.SetIMDSAvailable(false)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	rep, err := Collect(t.Context(), Options{Mode: preflight.ModePreInstall, Node: true, Root: filepath.Join(fixtures, "kops-node"), AWS: true})
	if err != nil {
		t.Fatalf("Collect: %v, want a report", err)
	}
	nodeIDs := map[string]bool{}
	for _, c := range nodechecks.Checks(nodechecks.Input{Mode: preflight.ModePreInstall}) {
		nodeIDs[c.ID] = true
	}
	assertAWSSkipped(t, rep, nodeIDs, "the AWS region is unknown")
	if n := srv.Calls("sts", "") + srv.Calls("ec2", "") + srv.Calls("iam", ""); n != 0 {
		t.Errorf("%d AWS calls with no region: %v", n, srv.CallCounts())
	}
}

// TestClusterRegionUnknown: cluster mode with no region anywhere (no flag,
// no cloud config, no Node region label) runs the cluster checks and skips
// the AWS ones with the reason.
func TestClusterRegionUnknown(t *testing.T) {
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-0a1b2c3d4e5f60001"}})
	o := Options{Mode: preflight.ModePreInstall, AWS: true}
	checks, err := o.clusterChecks(t.Context(), client)
	if err != nil {
		t.Fatalf("clusterChecks: %v, want checks", err)
	}
	rep, err := preflight.Run(t.Context(), checks, preflight.Options{Mode: o.Mode})
	if err != nil {
		t.Fatal(err)
	}
	clusterIDs := map[string]bool{}
	for _, c := range clusterchecks.Checks(clusterchecks.Input{Mode: o.Mode}) {
		clusterIDs[c.ID] = true
	}
	assertAWSSkipped(t, rep, clusterIDs, "topology.kubernetes.io/region")
}

// assertAWSSkipped checks that every non-AWS check in want ran (not skipped
// for AWS's sake) and every AWS check was skipped with a message holding
// reason.
func assertAWSSkipped(t *testing.T, rep preflight.Report, want map[string]bool, reason string) {
	t.Helper()
	aws, other := 0, 0
	for _, f := range rep.Findings {
		if f.Category == awschecks.Category {
			aws++
			if f.Status != preflight.StatusSkip || !strings.Contains(f.Message, reason) {
				t.Errorf("%s: %s %q, want skip saying %q", f.ID, f.Status, f.Message, reason)
			}
			continue
		}
		if want[f.ID] {
			other++
		}
	}
	if other != len(want) || aws != len(awschecks.Checks(awschecks.Input{})) {
		t.Fatalf("%d of %d non-AWS findings, %d AWS findings: %+v", other, len(want), aws, rep.Findings)
	}
}
