package lb

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/smithy-go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/awsccmctl/awsccmctl/internal/instances"
)

// Shared fixtures of the unit tests.

const (
	testCluster = "prod"
	testVPC     = "vpc-0123456789abcdef0"
)

// newTestReconciler builds a reconciler with New for cluster testCluster in
// testVPC, recording events into the returned recorder.
func newTestReconciler(c Config) (*Reconciler, *record.FakeRecorder) {
	rec := record.NewFakeRecorder(10)
	c.Env = Env{Region: "us-east-1", VPCID: testVPC, ClusterID: testCluster}
	c.Events = rec
	return New(c), rec
}

// instanceFunc is an InstanceSource made of a function.
type instanceFunc func(ctx context.Context, ids []string) (map[string]*instances.Instance, error)

func (f instanceFunc) ByIDs(ctx context.Context, ids []string) (map[string]*instances.Instance, error) {
	return f(ctx, ids)
}

// testService is a LoadBalancer Service with one TCP port.
func testService(annotations map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: types.UID("8a5a2c4e-3b1f-4c52-9d1e-0f4b6a7c8d9e"), Annotations: annotations},
		Spec: corev1.ServiceSpec{
			Type:  corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}},
		},
	}
}

// apiErr is an AWS error with code.
func apiErr(code string) error { return &smithy.GenericAPIError{Code: code, Message: "fake " + code} }

// events drains the recorder.
func events(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// wantOneEvent asserts exactly one event was recorded, starting with prefix
// ("Warning Reason") and containing every one of parts.
func wantOneEvent(t *testing.T, rec *record.FakeRecorder, prefix string, parts ...string) {
	t.Helper()
	got := events(rec)
	if len(got) != 1 {
		t.Fatalf("events = %q, want exactly one %q", got, prefix)
	}
	if !strings.HasPrefix(got[0], prefix+" ") {
		t.Errorf("event %q does not start with %q", got[0], prefix)
	}
	for _, p := range parts {
		if !strings.Contains(got[0], p) {
			t.Errorf("event %q does not mention %q", got[0], p)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
