package lbnames

import (
	"crypto/sha1" //nolint:gosec // G505: recomputes upstream's sha1 name hash to check TargetGroupName against it
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// upstreamClean is upstream's regexp for namespace and name in a resource
// name, written out again (not notAlnum).
var upstreamClean = regexp.MustCompile(`[^A-Za-z0-9]`)

// upstreamTargetGroupName recomputes upstream's target group name: sha1
// over cluster ID, namespace, name, port, node port, target protocol,
// "instance", health-check protocol and interval, concatenated.
func upstreamTargetGroupName(cluster, ns, name string, port, nodePort int32, proto, hcProto string, interval int32) string {
	sum := sha1.Sum([]byte(cluster + ns + name + strconv.Itoa(int(port)) + strconv.Itoa(int(nodePort)) + proto + "instance" + hcProto + strconv.Itoa(int(interval)))) //nolint:gosec // G401: upstream's name hash, see the import
	return fmt.Sprintf("k8s-%.8s-%.8s-%.10s", upstreamClean.ReplaceAllString(ns, ""), upstreamClean.ReplaceAllString(name, ""), hex.EncodeToString(sum[:]))
}

// upstreamNLBGroupName is upstream's GetSecurityGroupNameForNLB, written
// out again so a change to NLBSecurityGroupName cannot pass unnoticed.
func upstreamNLBGroupName(clusterName, ns, name string, uid types.UID) string {
	sum := sha256.Sum256([]byte(clusterName + name + ns + string(uid)))
	return fmt.Sprintf("k8s-%.8s-%.8s-%.10s", upstreamClean.ReplaceAllString(ns, ""), upstreamClean.ReplaceAllString(name, ""), hex.EncodeToString(sum[:]))
}

func TestTargetGroupName(t *testing.T) {
	tests := []struct {
		name    string
		cluster string
		ns, svc string
		in      TargetGroupInputs
		// golden is the name computed outside Go (printf ... | sha1sum):
		// these names exist on real target groups.
		golden string
	}{
		{
			name: "short names", cluster: "prod", ns: "shop", svc: "web",
			in:     TargetGroupInputs{Port: 80, NodePort: 30080, TargetProtocol: "TCP", HealthCheckProtocol: "TCP", HealthCheckInterval: 30},
			golden: "k8s-shop-web-95a96d9808",
		},
		{
			name: "long names with dashes", cluster: "cluster-7", ns: "kube-system", svc: "my-long-service-name",
			in:     TargetGroupInputs{Port: 443, NodePort: 31443, TargetProtocol: "TLS", HealthCheckProtocol: "HTTP", HealthCheckInterval: 10},
			golden: "k8s-kubesyst-mylongse-cc93c82e50",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: tc.ns, Name: tc.svc}}
			got := TargetGroupName(tc.cluster, svc, tc.in)
			want := upstreamTargetGroupName(tc.cluster, tc.ns, tc.svc, tc.in.Port, tc.in.NodePort, tc.in.TargetProtocol, tc.in.HealthCheckProtocol, tc.in.HealthCheckInterval)
			if got != want {
				t.Errorf("TargetGroupName = %q, want upstream's %q", got, want)
			}
			if got != tc.golden {
				t.Errorf("TargetGroupName = %q, want golden %q", got, tc.golden)
			}
			if len(got) > 32 {
				t.Errorf("%q is longer than the 32-character target group limit", got)
			}
		})
	}
}

func TestNLBSecurityGroupName(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a.prod", Name: "my-web.app", UID: "6f1a7a3e-0b5c-4c59-9b9e-0a1b2c3d4e5f"}}
	for _, cluster := range []string{"kubernetes", "prod"} {
		if got, want := NLBSecurityGroupName(cluster, svc), upstreamNLBGroupName(cluster, svc.Namespace, svc.Name, svc.UID); got != want {
			t.Errorf("cluster %s: NLBSecurityGroupName = %q, want upstream's %q", cluster, got, want)
		}
	}
	// Computed apart (sha256 of "kubernetes"+name+namespace+UID), should
	// both drift.
	if got := NLBSecurityGroupName("kubernetes", svc); got != "k8s-teamapro-mywebapp-3d5fd656cb" {
		t.Errorf("NLBSecurityGroupName = %q, want golden k8s-teamapro-mywebapp-3d5fd656cb", got)
	}
}

func TestClassicSecurityGroupName(t *testing.T) {
	// Upstream: "k8s-elb-" + loadBalancerName.
	if got := ClassicSecurityGroupName("a8a5a2c4e3b1f4c529d1e0f4b6a7c8d9"); got != "k8s-elb-a8a5a2c4e3b1f4c529d1e0f4b6a7c8d9" {
		t.Errorf("ClassicSecurityGroupName = %q", got)
	}
}
