package lb

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
)

// TestServicesOfOtherControllers: nlb-ip, external and a loadBalancerClass
// are the AWS Load Balancer Controller's (or another's): Ensure, Update and
// Delete answer ImplementedElsewhere and Get reports nothing, without a
// single AWS call (every API function is nil and would panic).
func TestServicesOfOtherControllers(t *testing.T) {
	class := "service.k8s.aws/nlb"
	cases := map[string]*corev1.Service{
		"nlb-ip":   testService(map[string]string{"service.beta.kubernetes.io/aws-load-balancer-type": "nlb-ip"}),
		"external": testService(map[string]string{"service.beta.kubernetes.io/aws-load-balancer-type": "external"}),
		"class":    testService(nil),
	}
	cases["class"].Spec.LoadBalancerClass = &class
	r, rec := newTestReconciler(Config{})
	ctx := context.Background()
	for name, svc := range cases {
		if _, err := r.Ensure(ctx, svc, nil); !errors.Is(err, cloudprovider.ImplementedElsewhere) {
			t.Errorf("%s: Ensure = %v, want ImplementedElsewhere", name, err)
		}
		if err := r.Update(ctx, svc, nil); !errors.Is(err, cloudprovider.ImplementedElsewhere) {
			t.Errorf("%s: Update = %v, want ImplementedElsewhere", name, err)
		}
		if err := r.Delete(ctx, svc); !errors.Is(err, cloudprovider.ImplementedElsewhere) {
			t.Errorf("%s: Delete = %v, want ImplementedElsewhere", name, err)
		}
		if _, exists, err := r.Get(ctx, svc); exists || err != nil {
			t.Errorf("%s: Get = %t, %v; want not ours", name, exists, err)
		}
	}
	if ev := events(rec); len(ev) != 0 {
		t.Errorf("events: %v", ev)
	}
}
