package lb

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/lbconfig"
)

// upstreamTargetGroupName recomputes upstream's target group name: sha1
// over cluster ID, namespace, name, port, node port, target protocol,
// "instance", health-check protocol and interval, concatenated.
func upstreamTargetGroupName(cluster, ns, name string, port, nodePort int32, proto, hcProto string, interval int32) string {
	sum := sha1.Sum([]byte(cluster + ns + name + strconv.Itoa(int(port)) + strconv.Itoa(int(nodePort)) + proto + "instance" + hcProto + strconv.Itoa(int(interval))))
	clean := regexp.MustCompile(`[^A-Za-z0-9]`)
	return fmt.Sprintf("k8s-%.8s-%.8s-%.10s", clean.ReplaceAllString(ns, ""), clean.ReplaceAllString(name, ""), hex.EncodeToString(sum[:]))
}

func TestTargetGroupName(t *testing.T) {
	tests := []struct {
		name    string
		cluster string
		ns, svc string
		l       lbconfig.Listener
		hc      lbconfig.HealthCheck
		// golden is the name computed outside Go (printf ... | sha1sum):
		// these names exist on real target groups.
		golden string
	}{
		{
			name: "short names", cluster: "prod", ns: "shop", svc: "web",
			l:      lbconfig.Listener{Port: 80, NodePort: 30080, Protocol: "TCP", BackendProtocol: "TCP"},
			hc:     lbconfig.HealthCheck{Protocol: "TCP", Port: "traffic-port", Interval: 30},
			golden: "k8s-shop-web-95a96d9808",
		},
		{
			name: "long names with dashes", cluster: "cluster-7", ns: "kube-system", svc: "my-long-service-name",
			l:      lbconfig.Listener{Port: 443, NodePort: 31443, Protocol: "TLS", BackendProtocol: "TLS"},
			hc:     lbconfig.HealthCheck{Protocol: "HTTP", Port: "10256", Path: "/healthz", Interval: 10},
			golden: "k8s-kubesyst-mylongse-cc93c82e50",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: tc.ns, Name: tc.svc}}
			got := targetGroupName(tc.cluster, svc, tc.l, tc.hc)
			want := upstreamTargetGroupName(tc.cluster, tc.ns, tc.svc, tc.l.Port, tc.l.NodePort, tc.l.BackendProtocol, tc.hc.Protocol, tc.hc.Interval)
			if got != want {
				t.Errorf("targetGroupName = %q, want upstream's %q", got, want)
			}
			if got != tc.golden {
				t.Errorf("targetGroupName = %q, want golden %q", got, tc.golden)
			}
			if len(got) > 32 {
				t.Errorf("%q is longer than the 32-character target group limit", got)
			}
		})
	}
}

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
