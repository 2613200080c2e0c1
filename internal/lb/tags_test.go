package lb

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOwnership(t *testing.T) {
	const mine = "kubernetes.io/cluster/" + testCluster
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	tests := []struct {
		name string
		tags map[string]string
		svc  *corev1.Service
		// wantErr lists what the error must name; nil: no error.
		wantErr []string
	}{
		{name: "untagged", tags: nil},
		{name: "untagged but named", tags: map[string]string{"Name": "x"}, svc: svc},
		{name: "this cluster, owned", tags: map[string]string{mine: "owned"}},
		{name: "this cluster, shared", tags: map[string]string{mine: "shared"}},
		{name: "this cluster, empty value", tags: map[string]string{mine: ""}},
		{name: "this cluster, legacy tag", tags: map[string]string{"KubernetesCluster": testCluster}},
		{name: "this and another cluster", tags: map[string]string{mine: "shared", "kubernetes.io/cluster/other": "shared"}},
		{name: "another cluster", tags: map[string]string{"kubernetes.io/cluster/other": "owned"}, wantErr: []string{"other", testCluster}},
		{name: "another cluster, legacy tag", tags: map[string]string{"KubernetesCluster": "legacy-other"}, wantErr: []string{"legacy-other"}},
		{name: "this Service", tags: map[string]string{mine: "owned", "kubernetes.io/service-name": "shop/web"}, svc: svc},
		{name: "another Service", tags: map[string]string{mine: "owned", "kubernetes.io/service-name": "shop/api"}, svc: svc, wantErr: []string{"shop/api", "shop/web"}},
		{name: "another Service, untagged cluster", tags: map[string]string{"kubernetes.io/service-name": "other/web"}, svc: svc, wantErr: []string{"other/web"}},
		{name: "Service not checked without svc", tags: map[string]string{mine: "owned", "kubernetes.io/service-name": "shop/api"}},
	}
	r, _ := newTestReconciler(Config{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := r.ownership(tc.tags, tc.svc)
			if tc.wantErr == nil {
				if err != nil {
					t.Errorf("ownership(%v) = %v, want nil", tc.tags, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ownership(%v) = nil, want an error", tc.tags)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}
