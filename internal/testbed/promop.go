package testbed

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// PrometheusOperatorCRDNames are the CRDs of the objects `awsccmctl install
// --monitoring` renders.
var PrometheusOperatorCRDNames = []string{"servicemonitors.monitoring.coreos.com", "prometheusrules.monitoring.coreos.com"}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallPrometheusOperatorCRDs creates prometheus-operator's ServiceMonitor
// and PrometheusRule CRDs, as its release ships them (PromopCRDsBinary),
// in the cluster of cfg and waits until they are served. CRDs that exist
// already are kept (the test bed is shared by a package's tests). Like
// Tool, it skips the test when the binary is missing, unless $CI is set.
func InstallPrometheusOperatorCRDs(t testing.TB, cfg *rest.Config) {
	t.Helper()
	bin := Tool(t, PromopCRDsBinary)
	out, err := exec.CommandContext(context.Background(), bin, PrometheusOperatorCRDNames...).Output()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, doc := range bytes.Split(out, []byte("\n---\n")) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatalf("a CRD of %s does not parse: %v", bin, err)
		}
		if _, err := dyn.Resource(crdResource).Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create CRD %s: %v", u.GetName(), err)
		}
	}
	for _, name := range PrometheusOperatorCRDNames {
		err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			u, err := dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatalf("CRD %s not established: %v", name, err)
		}
	}
}

// RuleCheck runs RuleCheckBinary with args and returns its standard output;
// a failure is returned with the tool's standard error. Like Tool, it skips
// the test when the binary is missing, unless $CI is set.
func RuleCheck(t testing.TB, args ...string) ([]byte, error) {
	t.Helper()
	bin := Tool(t, RuleCheckBinary)
	var stderr strings.Builder
	cmd := exec.CommandContext(context.Background(), bin, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s: %w: %s", RuleCheckBinary, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
