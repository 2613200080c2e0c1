package lb

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/lbconfig"
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

// TestTargetGroupNameInputs: which listener and health-check settings feed
// the target group's name (lbnames.TargetGroupName pins the name itself to
// upstream's).
func TestTargetGroupNameInputs(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	l := lbconfig.Listener{Port: 80, NodePort: 30080, Protocol: "TCP", BackendProtocol: "TCP"}
	hc := lbconfig.HealthCheck{Protocol: "HTTP", Port: "traffic-port", Path: "/", Interval: 30, Timeout: 6, HealthyThreshold: 3, UnhealthyThreshold: 3}
	base := targetGroupName("prod", svc, l, hc)
	tests := []struct {
		name    string
		change  func(l *lbconfig.Listener, hc *lbconfig.HealthCheck)
		renames bool
	}{
		{"interval", func(_ *lbconfig.Listener, hc *lbconfig.HealthCheck) { hc.Interval = 10 }, true},
		{"health-check protocol", func(_ *lbconfig.Listener, hc *lbconfig.HealthCheck) { hc.Protocol = "TCP" }, true},
		{"node port", func(l *lbconfig.Listener, _ *lbconfig.HealthCheck) { l.NodePort = 30081 }, true},
		{"port", func(l *lbconfig.Listener, _ *lbconfig.HealthCheck) { l.Port = 8080 }, true},
		{"target protocol", func(l *lbconfig.Listener, _ *lbconfig.HealthCheck) { l.BackendProtocol = "TLS" }, true},
		{"health-check path", func(_ *lbconfig.Listener, hc *lbconfig.HealthCheck) { hc.Path = "/healthz" }, false},
		{"health-check port", func(_ *lbconfig.Listener, hc *lbconfig.HealthCheck) { hc.Port = "10256" }, false},
		{"thresholds and timeout", func(_ *lbconfig.Listener, hc *lbconfig.HealthCheck) {
			hc.HealthyThreshold, hc.UnhealthyThreshold, hc.Timeout = 5, 5, 10
		}, false},
		{"listener protocol only (TLS termination)", func(l *lbconfig.Listener, _ *lbconfig.HealthCheck) { l.Protocol = "TLS" }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l2, hc2 := l, hc
			tc.change(&l2, &hc2)
			got := targetGroupName("prod", svc, l2, hc2)
			if renamed := got != base; renamed != tc.renames {
				t.Errorf("changing the %s: name %q -> %q; renamed = %t, want %t", tc.name, base, got, renamed, tc.renames)
			}
		})
	}
	if targetGroupName("other", svc, l, hc) == base {
		t.Error("the cluster ID does not change the name")
	}
}

// upstreamTargetGroupName is the target group name upstream gives a TCP
// listener with the default TCP health check every 30 s, the listener
// these tests make (lbnames' tests pin lbnames.TargetGroupName to
// upstream's formula and to golden values).
func upstreamTargetGroupName(cluster, ns, name string, port, nodePort int32) string {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	return lbnames.TargetGroupName(cluster, svc, lbnames.TargetGroupInputs{
		Port: port, NodePort: nodePort, TargetProtocol: "TCP", HealthCheckProtocol: "TCP", HealthCheckInterval: 30,
	})
}
