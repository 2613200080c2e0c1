package clusterchecks

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// TestZonelessProviderIDPasses: a Node registered with aws:////<instance-id>
// (no zone) is one the CCM accepts (pkg/providerid), so nodes-provider-id
// passes in every mode and nothing tells the operator to delete and
// re-register it; a spelling the CCM would not match still fails with that
// fix.
func TestZonelessProviderIDPasses(t *testing.T) {
	node := func(name, pid string) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: pid}}
	}
	cases := []struct {
		name   string
		nodes  []corev1.Node
		status preflight.Status
	}{
		{"zoneless", []corev1.Node{node("a", "aws:////i-00000000000000001"), node("b", "aws:///us-east-1a/i-00000000000000002")}, preflight.StatusPass},
		{"other spelling", []corev1.Node{node("a", "aws://us-east-1a/i-00000000000000001")}, preflight.StatusFail},
	}
	for _, tc := range cases {
		for _, mode := range preflight.Modes {
			t.Run(tc.name+"/"+string(mode), func(t *testing.T) {
				cs := fake.NewClientset()
				cs.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.37.1"}
				rep, err := preflight.Run(context.Background(), Checks(Input{Client: cs, Mode: mode, Nodes: tc.nodes}), preflight.Options{Mode: mode})
				if err != nil {
					t.Fatal(err)
				}
				f := finding(rep, IDNodesProviderID)
				want := tc.status
				if want == preflight.StatusFail && f.Severity == preflight.SeverityWarning {
					want = preflight.StatusWarn
				}
				if f.Status != want {
					t.Fatalf("%s: %s, want %s: %s", IDNodesProviderID, f.Status, want, f.Message)
				}
				for _, f := range rep.Findings {
					reregister := strings.Contains(f.Remediation, "kubectl delete node")
					if tc.status == preflight.StatusPass && reregister {
						t.Errorf("%s tells the operator to re-register a Node the CCM accepts: %s", f.ID, f.Remediation)
					}
				}
			})
		}
	}
}
