package clusterchecks

import (
	"context"
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// runOne runs the cluster checks and returns the finding of id.
func runOne(t *testing.T, client kubernetes.Interface, id string) preflight.Finding {
	t.Helper()
	rep, err := preflight.Run(context.Background(), Checks(Input{Client: client, Mode: preflight.ModePreInstall}), preflight.Options{Mode: preflight.ModePreInstall})
	if err != nil {
		t.Fatal(err)
	}
	return finding(rep, id)
}

// TestKubeletConfig reads /configz through the real apiserver's nodes/proxy
// from fake kubelets and checks what the finding says.
func TestKubeletConfig(t *testing.T) {
	cs := quietClient(testbed.Get(t).Config)
	const (
		idA, idB = "aws:///us-east-1a/i-0aaaaaaaaaaaaaaa1", "aws:///us-east-1b/i-0bbbbbbbbbbbbbbb2"
	)
	node := func(name, providerID string, k *kubeletSpec) nodeSpec {
		return nodeSpec{name: name, kubelet: v137, hostname: name, providerID: providerID, kubeletAnswer: k}
	}
	cases := []struct {
		name   string
		nodes  []nodeSpec
		status preflight.Status
		text   []string
	}{
		{name: "agree", status: preflight.StatusPass,
			nodes: []nodeSpec{node("kc-a", idA, nil), node("kc-b", idB, &kubeletSpec{})},
			text:  []string{"read the live configuration of 2 kubelets; the providerIDs agree with the Nodes"}},
		{name: "kubelet providerID differs from the Node's", status: preflight.StatusWarn,
			nodes: []nodeSpec{node("kc-a", idA, &kubeletSpec{providerID: idB}), node("kc-b", idB, nil)},
			text: []string{"kubelet's providerID differs from the Node's on 1 Node: kc-a (Node " + idA + ", kubelet " + idB + ")",
				"has to be deleted and re-registered"}},
		{name: "kubelet and Node providerID without a zone, which the CCM accepts", status: preflight.StatusPass,
			nodes: []nodeSpec{node("kc-a", "aws:////i-0aaaaaaaaaaaaaaa1", &kubeletSpec{providerID: "aws:////i-0aaaaaaaaaaaaaaa1"})},
			text:  []string{"the providerIDs agree with the Nodes"}},
		{name: "kubelet providerID of another spelling", status: preflight.StatusWarn,
			nodes: []nodeSpec{node("kc-a", "", &kubeletSpec{providerID: "aws://us-east-1a/i-0aaaaaaaaaaaaaaa1"})},
			text:  []string{`providerID not of the form aws:///<zone>/<instance-id> on 1 kubelet: kc-a (aws://us-east-1a/i-0aaaaaaaaaaaaaaa1 is not aws:///<zone>/<instance-id>)`}},
		{name: "kubelet providerID that is not AWS's", status: preflight.StatusWarn,
			nodes: []nodeSpec{node("kc-a", idA, &kubeletSpec{providerID: "gce://project/zone/vm"})},
			text:  []string{`on 1 kubelet: kc-a (gce://project/zone/vm: `}},
		{name: "kubelet providerID set after the Node registered", status: preflight.StatusWarn,
			nodes: []nodeSpec{node("kc-a", "", &kubeletSpec{providerID: idA})},
			text:  []string{"kubelet has a providerID its Node lacks (it is set only when the Node registers) on 1 Node: kc-a (kubelet has " + idA + ")"}},
		{name: "one kubelet unreachable", status: preflight.StatusWarn,
			nodes: []nodeSpec{node("kc-a", idA, nil), node("kc-b", idB, &kubeletSpec{unreachable: true})},
			text:  []string{"read the live configuration of 1 kubelet; the providerIDs agree with the Nodes; /configz unreadable on 1 Node: kc-b (get /api/v1/nodes/kc-b/proxy/configz: error trying to reach service"}},
		{name: "kubelet answers something else", status: preflight.StatusWarn,
			nodes: []nodeSpec{node("kc-a", idA, nil), node("kc-b", idB, &kubeletSpec{configz: `{"componentconfig":{}}`})},
			text:  []string{"/configz unreadable on 1 Node: kc-b (node kc-b /configz has no kubeletconfig)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSeed(t, cs)
			for _, n := range tc.nodes {
				s.node(n)
			}
			f := runOne(t, cs, IDNodesKubeletConfig)
			if f.Status != tc.status {
				t.Errorf("status = %s, want %s: %s | %s", f.Status, tc.status, f.Message, f.Remediation)
			}
			for _, text := range tc.text {
				if !strings.Contains(f.Message+" | "+f.Remediation, text) {
					t.Errorf("%q not in %s | %s", text, f.Message, f.Remediation)
				}
			}
		})
	}
}

// TestKubeletConfigStopsWhenNoKubeletAnswers: when none of the first
// kubelets answers, the rest are not tried.
func TestKubeletConfigStopsWhenNoKubeletAnswers(t *testing.T) {
	cs := quietClient(testbed.Get(t).Config)
	s := newSeed(t, cs)
	const n = configzProbe + 9
	for i := range n {
		s.node(nodeSpec{name: fmt.Sprintf("kc-dark-%02d", i), kubelet: v137, providerID: fmt.Sprintf("aws:///us-east-1a/i-%017x", i+1), kubeletAnswer: &kubeletSpec{unreachable: true}})
	}
	counted, requests := countingClient(testbed.Get(t).Config)
	f := runOne(t, counted, IDNodesKubeletConfig)
	if f.Status != preflight.StatusWarn {
		t.Errorf("status = %s, want warn: %s", f.Status, f.Message)
	}
	want := fmt.Sprintf("no kubelet's /configz could be read through the API server (tried %d Nodes of %d Nodes)", configzProbe, n)
	if !strings.Contains(f.Message, want) || !strings.Contains(f.Message, "while dialing 10.200.") {
		t.Errorf("message %q lacks %q and the apiserver's dial error", f.Message, want)
	}
	if got := requests.count["GET /api/v1/nodes/…/proxy/configz"]; got != configzProbe {
		t.Errorf("configz requests = %d, want %d (the probe only)", got, configzProbe)
	}
}

// TestKubeletConfigWithoutNodesProxyRights: an identity that may list Nodes
// but not get nodes/proxy skips the check, saying why.
func TestKubeletConfigWithoutNodesProxyRights(t *testing.T) {
	cp := testbed.Get(t)
	cs := quietClient(cp.Config)
	ctx := context.Background()
	s := newSeed(t, cs)
	s.node(nodeSpec{name: "kc-rbac", kubelet: v137, providerID: "aws:///us-east-1a/i-0aaaaaaaaaaaaaaa1"})

	const ns, sa = "preflight-rbac", "reader"
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "preflight-nodes-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "preflight-nodes-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}}}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.RbacV1().ClusterRoles().Delete(ctx, role.Name, metav1.DeleteOptions{}) })
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.RbacV1().ClusterRoleBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{}) })
	cfg, err := cp.ServiceAccountConfig(ctx, ns, sa)
	if err != nil {
		t.Fatal(err)
	}
	f := runOne(t, quietClient(cfg), IDNodesKubeletConfig)
	if f.Status != preflight.StatusSkip || !strings.Contains(f.Message, "RBAC does not let this identity get nodes/proxy") {
		t.Errorf("got %s: %s, want a skip naming nodes/proxy", f.Status, f.Message)
	}
}
