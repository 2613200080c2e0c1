package clusterchecks

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// TestKubeletSkewIgnoresUnreportedVersions: a Node whose kubelet has not
// posted a version yet is not a skew violation; a too-old one still is.
func TestKubeletSkewIgnoresUnreportedVersions(t *testing.T) {
	node := func(name, kubelet string) runtime.Object {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: kubelet}}}
	}
	cases := []struct {
		name    string
		nodes   []runtime.Object
		want    preflight.Status
		mention string
	}{
		{"unreported only", []runtime.Object{node("a", ""), node("b", "v1.37.1")}, preflight.StatusPass, "no reported version"},
		{"too old among unreported", []runtime.Object{node("a", ""), node("old", "v1.32.0")}, preflight.StatusWarn, "old (kubelet v1.32.0)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset(tc.nodes...)
			cs.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.37.1"}
			r, err := preflight.Run(context.Background(), Checks(Input{Client: cs, Mode: preflight.ModePostInstall}),
				preflight.Options{Mode: preflight.ModePostInstall, Categories: []string{CategoryCluster, CategoryNodes}})
			if err != nil {
				t.Fatal(err)
			}
			f := finding(r, IDNodesKubeletSkew)
			if f.Status != tc.want || !strings.Contains(f.Message, tc.mention) {
				t.Fatalf("%s = %s %q; want %s mentioning %q", f.ID, f.Status, f.Message, tc.want, tc.mention)
			}
		})
	}
}
