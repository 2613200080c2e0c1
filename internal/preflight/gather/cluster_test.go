package gather

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/awschecks"
)

// TestClusterInputLoadBalancerServices: cluster mode hands the AWS checks
// the LoadBalancer Services of every namespace, from one Service list.
func TestClusterInputLoadBalancerServices(t *testing.T) {
	srv := emulatorEnv(t)
	svc := func(ns, name string, typ corev1.ServiceType) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name)},
			Spec: corev1.ServiceSpec{Type: typ}}
	}
	client := fake.NewClientset(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-0a1b2c3d4e5f60001"}},
		svc("default", "web", corev1.ServiceTypeLoadBalancer), svc("default", "kubernetes", corev1.ServiceTypeClusterIP),
		svc("shop", "api", corev1.ServiceTypeLoadBalancer), svc("shop", "np", corev1.ServiceTypeNodePort))
	nodes, err := listNodes(t.Context(), client)
	if err != nil {
		t.Fatal(err)
	}
	in, err := awsClusterInput(t.Context(), Options{Region: "us-east-1", Mode: preflight.ModePreInstall}, client, nodes)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range in.LoadBalancerServices {
		got = append(got, s.Namespace+"/"+s.Name)
	}
	slices.Sort(got)
	if want := []string{"default/web", "shop/api"}; !slices.Equal(got, want) {
		t.Fatalf("LoadBalancerServices %v, want %v", got, want)
	}
	lists := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "list" && a.GetResource().Resource == "services" {
			lists++
			if ns := a.GetNamespace(); ns != metav1.NamespaceAll {
				t.Errorf("listed Services in namespace %q, want all", ns)
			}
		}
	}
	if lists != 1 {
		t.Errorf("%d Service lists, want 1", lists)
	}

	rep, err := preflight.Run(t.Context(), awschecks.Checks(in), preflight.Options{Mode: preflight.ModePreInstall})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.ID == awschecks.IDLoadBalancers && (f.Status != preflight.StatusPass || !strings.Contains(f.Message, "0 will be adopted; 2 will be created")) {
			t.Errorf("%s: %s: %s", f.ID, f.Status, f.Message)
		}
	}
	if srv.Calls("elasticloadbalancing", "DescribeLoadBalancers") != 1 || srv.Calls("elasticloadbalancingv2", "DescribeLoadBalancers") != 1 {
		t.Errorf("ELB calls %v", srv.CallCounts())
	}
}
