package deploy

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

var (
	serviceMonitors = schema.GroupVersionResource{Group: install.MonitoringAPIGroup, Version: "v1", Resource: "servicemonitors"}
	prometheusRules = schema.GroupVersionResource{Group: install.MonitoringAPIGroup, Version: "v1", Resource: "prometheusrules"}
	crds            = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// TestMonitoringInstallRoundTrip: on the real apiserver, an install with
// monitoring refuses, before writing anything, while prometheus-operator's
// CRDs are missing, saying to install them or drop --monitoring; with the
// CRDs it creates the ServiceMonitor, PrometheusRule and the scraper's
// RBAC, and uninstall deletes them, also once the CRDs are gone again.
func TestMonitoringInstallRoundTrip(t *testing.T) {
	c, cs, mkns := bed(t)
	ctx := context.Background()
	cp := testbed.Get(t)
	ns := mkns("ccm-monitoring")
	v := install.Values{Namespace: ns, Monitoring: true}
	v.Default()
	objs, err := Objects(v)
	if err != nil {
		t.Fatal(err)
	}

	_, err = Apply(ctx, c, objs, ApplyOptions{})
	var ue *UnservedError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "ServiceMonitor (monitoring.coreos.com/v1)") ||
		!strings.Contains(err.Error(), "install prometheus-operator's CRDs") || !strings.Contains(err.Error(), "drop --monitoring") {
		t.Fatalf("apply without the CRDs: %v, want an *UnservedError naming the kinds, the CRDs and --monitoring", err)
	}
	if inv, err := c.Apply.ReadInventory(ctx, ns); err != nil || inv != nil {
		t.Errorf("apply without the CRDs wrote the inventory (%v, %v)", inv, err)
	}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, install.ServiceAccountName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("apply without the CRDs created the ServiceAccount: %v", err)
	}

	testbed.InstallPrometheusOperatorCRDs(t, cp.Config)
	// New clients: discovery is cached per client.
	if c, err = NewClients(cp.Config); err != nil {
		t.Fatal(err)
	}
	cleanup(t, c, objs)
	mustApply(t, c, objs)
	d := dynamic.NewForConfigOrDie(cp.Config)
	for _, gvr := range []schema.GroupVersionResource{serviceMonitors, prometheusRules} {
		if _, err := d.Resource(gvr).Namespace(ns).Get(ctx, install.MetricsServiceName, metav1.GetOptions{}); err != nil {
			t.Errorf("%s not created: %v", gvr.Resource, err)
		}
	}
	if _, err := cs.CoreV1().Secrets(ns).Get(ctx, install.MetricsTokenSecretName, metav1.GetOptions{}); err != nil {
		t.Errorf("token Secret not created: %v", err)
	}
	if _, err := Uninstall(ctx, c, objs, "", nil); err != nil {
		t.Fatal(err)
	}
	for _, gvr := range []schema.GroupVersionResource{serviceMonitors, prometheusRules} {
		if _, err := d.Resource(gvr).Namespace(ns).Get(ctx, install.MetricsServiceName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("uninstall left the %s: %v", gvr.Resource, err)
		}
	}
	if _, err := cs.RbacV1().ClusterRoles().Get(ctx, install.MetricsReaderName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("uninstall left the metrics reader ClusterRole: %v", err)
	}

	// Installed again, then the CRDs go (prometheus-operator removed):
	// uninstall still removes the rest.
	mustApply(t, c, objs)
	for _, name := range testbed.PrometheusOperatorCRDNames {
		if err := d.Resource(crds).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := d.Resource(crds).Get(ctx, testbed.PrometheusOperatorCRDNames[0], metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("the CRDs were not deleted: %v", err)
	}
	if c, err = NewClients(cp.Config); err != nil {
		t.Fatal(err)
	}
	r, err := Uninstall(ctx, c, objs, "", nil)
	if err != nil {
		t.Fatalf("uninstall after the CRDs went: %v", err)
	}
	for _, o := range r.Objects {
		if strings.HasPrefix(o.Ref, "ServiceMonitor/") && !strings.Contains(o.Action, "no longer serves") {
			t.Errorf("%s: %s", o.Ref, o.Action)
		}
	}
	if _, err := cs.CoreV1().Secrets(ns).Get(ctx, install.MetricsTokenSecretName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("uninstall after the CRDs went left the token Secret: %v", err)
	}
}
