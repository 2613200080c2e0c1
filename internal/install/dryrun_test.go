package install

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// dryRunApplier applies objects with server-side apply and DryRun=All.
type dryRunApplier struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newDryRunApplier(t *testing.T) (*dryRunApplier, *kubernetes.Clientset) {
	t.Helper()
	cp := testbed.Get(t)
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &dryRunApplier{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}, cs
}

func (a *dryRunApplier) apply(ctx context.Context, doc []byte) error {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(doc, &u.Object); err != nil {
		return err
	}
	gvk := u.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	_, err = a.dyn.Resource(m.Resource).Namespace(u.GetNamespace()).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{
		FieldManager: ManagedBy, DryRun: []string{metav1.DryRunAll}, Force: true,
	})
	return err
}

// TestServerSideDryRun applies every rendered document to the test bed's
// kube-apiserver with server-side apply and DryRun=All: the apiserver's
// validation, defaulting and admission (RBAC escalation checks, priority
// classes) accept all of them.
func TestServerSideDryRun(t *testing.T) {
	a, cs := newDryRunApplier(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for name, v := range goldenCases(t) {
		t.Run(name, func(t *testing.T) {
			v.Default()
			if v.Namespace != "kube-system" {
				// The installer does not create namespaces; the test does.
				_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: v.Namespace}}, metav1.CreateOptions{})
				if err != nil && !apierrors.IsAlreadyExists(err) {
					t.Fatal(err)
				}
			}
			if v.Monitoring {
				// ServiceMonitor and PrometheusRule need
				// prometheus-operator's CRDs, as in a real cluster.
				testbed.InstallPrometheusOperatorCRDs(t, testbed.Get(t).Config)
				a.mapper.Reset()
			}
			for _, o := range renderCase(t, v) {
				if err := a.apply(ctx, o.YAML); err != nil {
					t.Errorf("%s %s: server-side dry run: %v", o.Kind, o.Name, err)
				}
			}
			// Dry run: nothing was created.
			if _, err := cs.RbacV1().ClusterRoles().Get(ctx, ClusterRoleName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("dry run created the ClusterRole: %v", err)
			}
		})
	}
}

// TestServerSideDryRunRejects shows the dry run has teeth: a DaemonSet whose
// selector does not match its pods is refused.
func TestServerSideDryRunRejects(t *testing.T) {
	a, _ := newDryRunApplier(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	objs := renderCase(t, Values{Image: testImage})
	ds := objs[len(objs)-1]
	broken := strings.Replace(string(ds.YAML), "      app.kubernetes.io/name: aws-cloud-controller-manager\n  updateStrategy",
		"      app.kubernetes.io/name: other\n  updateStrategy", 1)
	if broken == string(ds.YAML) {
		t.Fatal("the test's edit did not apply")
	}
	if err := a.apply(ctx, []byte(broken)); !apierrors.IsInvalid(err) {
		t.Fatalf("dry run of a broken DaemonSet = %v, want Invalid", err)
	}
}
