package lb

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/internal/lbconfig"
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

func TestDesiredBlockingProblem(t *testing.T) {
	for _, kind := range []lbnames.LoadBalancerKind{lbnames.KindClassic, lbnames.KindNLB} {
		t.Run(string(kind), func(t *testing.T) {
			r, rec := newTestReconciler(Config{})
			svc := testService(nil)
			svc.Spec.LoadBalancerIP = "203.0.113.7"
			cfg, err := r.desired(svc, kind)
			if err == nil {
				t.Fatalf("desired = %+v, nil; want an error for spec.loadBalancerIP", cfg)
			}
			if cfg != nil {
				t.Errorf("desired returned a config with the error")
			}
			if !strings.Contains(err.Error(), lbconfig.FieldLoadBalancerIP) {
				t.Errorf("error %q does not name %s", err, lbconfig.FieldLoadBalancerIP)
			}
			wantOneEvent(t, rec, "Warning "+ReasonInvalidConfiguration, lbconfig.FieldLoadBalancerIP, "203.0.113.7")
		})
	}
}

func TestDesiredNonBlockingProblem(t *testing.T) {
	r, rec := newTestReconciler(Config{})
	svc := testService(map[string]string{lbconfig.KeyCrossZoneLoadBalancing: "maybe"})
	cfg, err := r.desired(svc, lbnames.KindClassic)
	if err != nil {
		t.Fatalf("desired: %v; an invalid annotation must not block the load balancer", err)
	}
	if cfg.Valid(lbconfig.KeyCrossZoneLoadBalancing) {
		t.Error("Valid(cross-zone) = true for \"maybe\"")
	}
	if !cfg.Valid(lbconfig.KeySubnets, lbconfig.KeyHealthCheckInterval, lbconfig.FieldPorts) {
		t.Error("keys without a problem reported invalid")
	}
	wantOneEvent(t, rec, "Warning "+ReasonInvalidConfiguration, lbconfig.KeyCrossZoneLoadBalancing, "maybe")
}

func TestDesiredNoProblem(t *testing.T) {
	r, rec := newTestReconciler(Config{})
	cfg, err := r.desired(testService(nil), lbnames.KindNLB)
	if err != nil || cfg == nil {
		t.Fatalf("desired = %v, %v", cfg, err)
	}
	if ev := events(rec); len(ev) > 0 {
		t.Errorf("events for a valid Service: %q", ev)
	}
}

func TestApplySharedProbe(t *testing.T) {
	probe := &SharedProbe{Port: 10256, Path: "/healthz"}
	shared := func(hc lbconfig.HealthCheck) lbconfig.HealthCheck {
		hc.Protocol, hc.Port, hc.Path = lbconfig.ProtocolHTTP, "10256", "/healthz"
		return hc
	}
	tests := []struct {
		name  string
		ann   map[string]string
		local bool
		probe *SharedProbe
		// applied: the shared probe replaces protocol, port and path, and
		// nothing else; otherwise the parsed health check is kept.
		applied bool
	}{
		{name: "cluster, no health-check annotation", probe: probe, applied: true},
		{name: "cluster, blank annotation counts as unset", ann: map[string]string{lbconfig.KeyHealthCheckPort: " "}, probe: probe, applied: true},
		{name: "cluster, interval annotation does not stop it", ann: map[string]string{lbconfig.KeyHealthCheckInterval: "10"}, probe: probe, applied: true},
		{name: "cluster, protocol annotation", ann: map[string]string{lbconfig.KeyHealthCheckProtocol: "TCP"}, probe: probe},
		{name: "cluster, port annotation", ann: map[string]string{lbconfig.KeyHealthCheckPort: "8080"}, probe: probe},
		{name: "cluster, path annotation", ann: map[string]string{lbconfig.KeyHealthCheckPath: "/ready"}, probe: probe},
		{name: "local", local: true, probe: probe},
		{name: "no shared probe configured"},
	}
	for _, kind := range []lbnames.LoadBalancerKind{lbnames.KindClassic, lbnames.KindNLB} {
		for _, tc := range tests {
			t.Run(string(kind)+"/"+tc.name, func(t *testing.T) {
				svc := testService(tc.ann)
				if tc.local {
					svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
					svc.Spec.HealthCheckNodePort = 32100
				} else {
					svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
				}
				parsed, problems := lbconfig.Parse(svc, kind)
				if len(problems) > 0 {
					t.Fatalf("fixture has problems: %v", problems)
				}
				r, _ := newTestReconciler(Config{Options: Options{SharedProbe: tc.probe}})
				cfg, err := r.desired(svc, kind)
				if err != nil {
					t.Fatal(err)
				}
				want := parsed.HealthCheck
				if tc.applied {
					want = shared(want)
				}
				if cfg.HealthCheck != want {
					t.Errorf("health check = %+v\nwant %+v", cfg.HealthCheck, want)
				}
			})
		}
	}
}

// TestKeepScheme: an existing load balancer's scheme wins over the
// annotation, with a Warning naming it.
func TestKeepScheme(t *testing.T) {
	r, rec := newTestReconciler(Config{})
	svc := testService(map[string]string{lbconfig.KeyInternal: "true"})
	cfg, _ := lbconfig.Parse(svc, lbnames.KindClassic)
	r.keepScheme(svc, cfg, "internet-facing")
	if cfg.Scheme != lbconfig.SchemeInternetFacing {
		t.Errorf("scheme = %s, want internet-facing (the load balancer's)", cfg.Scheme)
	}
	wantOneEvent(t, rec, "Warning "+ReasonInvalidConfiguration, lbconfig.KeyInternal, "is internet-facing", "recreate the Service")
	r.keepScheme(svc, cfg, "internet-facing")
	if ev := events(rec); len(ev) != 0 {
		t.Errorf("same scheme: events %v", ev)
	}
}
