package migrate

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// Each guard breaks on its own change, and an intact cluster (even with a
// new Node or Service) passes.
func TestGuards(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, cs *fake.Clientset)
		want   string
	}{
		{"intact, with a new Node and Service", func(t *testing.T, cs *fake.Clientset) {
			mustCreate(t, cs, node("w-9", false))
			if _, err := cs.CoreV1().Services("default").Create(ctx, lbService("new", ""), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"node deleted", func(t *testing.T, cs *fake.Clientset) {
			if err := cs.CoreV1().Nodes().Delete(ctx, "w-1", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}, "Node w-1 was deleted"},
		{"providerID changed", func(t *testing.T, cs *fake.Clientset) {
			updateNode(t, cs, "w-1", func(n *corev1.Node) { n.Spec.ProviderID = "aws:///us-east-1b/i-other" })
		}, `Node w-1's providerID changed from "aws:///us-east-1a/i-w-1" to "aws:///us-east-1b/i-other"`},
		{"re-tainted uninitialized", func(t *testing.T, cs *fake.Clientset) {
			updateNode(t, cs, "cp-1", func(n *corev1.Node) {
				n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: taintUninitialized, Effect: corev1.TaintEffectNoSchedule})
			})
		}, "Node cp-1 is tainted node.cloudprovider.kubernetes.io/uninitialized again"},
		{"load balancer replaced", func(t *testing.T, cs *fake.Clientset) {
			s, _ := cs.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
			s.Status.LoadBalancer.Ingress[0].Hostname = "new-lb.elb.amazonaws.com"
			if _, err := cs.CoreV1().Services("default").UpdateStatus(ctx, s, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}, `Service default/web's load balancer changed from "web-lb.elb.amazonaws.com" to "new-lb.elb.amazonaws.com"`},
		{"service deleted", func(t *testing.T, cs *fake.Clientset) {
			if err := cs.CoreV1().Services("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}, "Service default/web was deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset(node("cp-1", true), node("w-1", false), lbService("web", "web-lb.elb.amazonaws.com"))
			b, err := takeBaseline(ctx, cs)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkGuards(ctx, cs, b); err != nil {
				t.Fatalf("untouched cluster: %v", err)
			}
			tc.change(t, cs)
			err = checkGuards(ctx, cs, b)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("guards broke: %v", err)
				}
				return
			}
			var ge *GuardError
			if !errors.As(err, &ge) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("checkGuards = %v, want a GuardError with %q", err, tc.want)
			}
		})
	}
}

func mustCreate(t *testing.T, cs *fake.Clientset, n *corev1.Node) {
	t.Helper()
	if _, err := cs.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func updateNode(t *testing.T, cs *fake.Clientset, name string, f func(*corev1.Node)) {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f(n)
	if _, err := cs.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
