package gather

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestNodePodCIDRs(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec corev1.NodeSpec
		want []string
	}{
		{"none yet", corev1.NodeSpec{}, []string{}},
		{"podCIDR only (older allocators)", corev1.NodeSpec{PodCIDR: "10.244.1.0/24"}, []string{"10.244.1.0/24"}},
		{"dual-stack podCIDRs win", corev1.NodeSpec{PodCIDR: "10.244.1.0/24", PodCIDRs: []string{"10.244.1.0/24", "fd00:10:244:1::/64"}},
			[]string{"10.244.1.0/24", "fd00:10:244:1::/64"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := nodePodCIDRs(&corev1.Node{Spec: tc.spec})
			if got == nil || !slices.Equal(got, tc.want) {
				t.Errorf("nodePodCIDRs = %#v, want %#v (never nil: nil means node mode to the AWS checks)", got, tc.want)
			}
		})
	}
}
