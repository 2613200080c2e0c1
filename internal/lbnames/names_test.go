package lbnames

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestLoadBalancerName(t *testing.T) {
	tests := []struct {
		name string
		uid  types.UID
		want string
	}{
		// Golden values: these names exist on real load balancers.
		{"kubernetes UID", "8a5a2c4e-3b1f-4c52-9d1e-0f4b6a7c8d9e", "a8a5a2c4e3b1f4c529d1e0f4b6a7c8d9"},
		{"short UID", "1234", "a1234"},
		{"no dashes", "0123456789abcdef0123456789abcdef", "a0123456789abcdef0123456789abcde"},
		{"empty", "", "a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := LoadBalancerName(&corev1.Service{ObjectMeta: metav1.ObjectMeta{UID: tc.uid}})
			if got != tc.want {
				t.Errorf("LoadBalancerName(%q) = %q, want %q", tc.uid, got, tc.want)
			}
			if len(got) > 32 {
				t.Errorf("%q is longer than the 32-character ELB limit", got)
			}
		})
	}
}

func TestTags(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	if got := ServiceNameTagValue(svc); got != "shop/web" {
		t.Errorf("ServiceNameTagValue = %q", got)
	}
	if ServiceNameTagKey != "kubernetes.io/service-name" || TypeAnnotation != "service.beta.kubernetes.io/aws-load-balancer-type" {
		t.Error("a wire-contract key changed")
	}
}

func TestKind(t *testing.T) {
	lb := func(annotation string, class *string) *corev1.Service {
		svc := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: class}}
		if annotation != "-" {
			svc.Annotations = map[string]string{TypeAnnotation: annotation}
		}
		return svc
	}
	tests := []struct {
		name string
		svc  *corev1.Service
		want LoadBalancerKind
	}{
		{"no annotation", lb("-", nil), KindClassic},
		{"empty annotation", lb("", nil), KindClassic},
		{"nlb", lb("nlb", nil), KindNLB},
		{"NLB in capitals is not nlb", lb("NLB", nil), KindClassic},
		{"unknown value", lb("alb", nil), KindClassic},
		{"nlb-ip", lb("nlb-ip", nil), KindNotOurs},
		{"external", lb("external", nil), KindNotOurs},
		{"loadBalancerClass", lb("-", ptr.To("service.k8s.aws/nlb")), KindNotOurs},
		{"loadBalancerClass wins over nlb", lb("nlb", ptr.To("example.com/lb")), KindNotOurs},
		{"ClusterIP", &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}}, KindNotOurs},
		{"NodePort with nlb", &corev1.Service{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{TypeAnnotation: "nlb"}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort}}, KindNotOurs},
		{"nil", nil, KindNotOurs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Kind(tc.svc); got != tc.want {
				t.Errorf("Kind = %s, want %s", got, tc.want)
			}
		})
	}
}

// FuzzKind: any annotation value classifies as one of the three kinds, and
// only the exact value nlb selects an NLB.
func FuzzKind(f *testing.F) {
	for _, v := range []string{"", "nlb", "nlb-ip", "external", "NLB", " nlb"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{TypeAnnotation: v}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}}
		switch k := Kind(svc); {
		case k == KindNLB && v != TypeNLB, k == KindNotOurs && v != TypeNLBIP && v != TypeExternal, k != KindClassic && k != KindNLB && k != KindNotOurs:
			t.Fatalf("Kind(%q) = %s", v, k)
		}
	})
}
