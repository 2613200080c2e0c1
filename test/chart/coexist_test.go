package chart

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/cli/root"
	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// awsccmctl runs the CLI's root command in-process.
func awsccmctl(args ...string) (string, error) {
	var out, errOut strings.Builder
	err := root.Execute(context.Background(), root.Streams{Out: &out, Err: &errOut}, args)
	return out.String() + errOut.String(), err
}

// coexistCluster returns a kubeconfig for the test bed, a client and a
// fresh namespace, with the chart's values for it.
func coexistCluster(t *testing.T) (kubeconfig, ns string, cs kubernetes.Interface, values []byte) {
	t.Helper()
	cp := testbed.Get(t)
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, cp.Config); err != nil {
		t.Fatal(err)
	}
	ns = fmt.Sprintf("ccm-%d", time.Now().UnixNano()%1e9)
	cs = kubernetes.NewForConfigOrDie(cp.Config)
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cv, err := install.HelmValues(install.Values{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	if values, err = yaml.Marshal(cv); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, ns, cs, values
}

// TestInstallRefusesAHelmRelease: with the chart installed by Helm,
// awsccmctl install apply and uninstall exit 8, name the release and the
// helm command, and change nothing; helm uninstall then removes it all.
func TestInstallRefusesAHelmRelease(t *testing.T) {
	kubeconfig, ns, cs, values := coexistCluster(t)
	ctx := context.Background()
	if _, err := Install(t, chartDir(t), values, "ccm", ns, kubeconfig); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	// Deferred, not a Cleanup: chart-check runs under the test's context.
	defer func() { _, _ = Uninstall(t, "ccm", ns, kubeconfig) }()
	before, err := cs.AppsV1().DaemonSets(ns).Get(ctx, install.AppName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for verb, flags := range map[string][]string{
		"apply":     {"--kubeconfig", kubeconfig, "--namespace", ns, "--no-detect"},
		"uninstall": {"--kubeconfig", kubeconfig, "--namespace", ns},
	} {
		out, err := awsccmctl(append([]string{"install", verb}, flags...)...)
		if code := exitcode.Of(err); code != exitcode.Mismatch || !strings.Contains(err.Error(), "Helm release ccm in namespace "+ns) ||
			!strings.Contains(err.Error(), "helm uninstall ccm --namespace "+ns) {
			t.Errorf("install %s over a Helm release: exit %d (%v), want %d naming the release and helm uninstall\n%s", verb, code, err, exitcode.Mismatch, out)
		}
	}
	after, err := cs.AppsV1().DaemonSets(ns).Get(ctx, install.AppName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Error("the refused commands changed the Helm release's DaemonSet")
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, apply.InventoryName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused apply wrote its inventory: %v", err)
	}
	if _, err := Uninstall(t, "ccm", ns, kubeconfig); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	if _, err := cs.RbacV1().ClusterRoles().Get(ctx, install.ClusterRoleName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("helm uninstall left the ClusterRole: %v", err)
	}
}

// TestHelmRefusesAnInstall: over awsccmctl install apply's objects helm
// install fails with Helm's ownership error and changes nothing; with
// --take-ownership it adopts them without touching the pod template (no
// pod rolls), and install apply then refuses the release.
func TestHelmRefusesAnInstall(t *testing.T) {
	kubeconfig, ns, cs, values := coexistCluster(t)
	ctx := context.Background()
	flags := []string{"--kubeconfig", kubeconfig, "--namespace", ns, "--no-detect"}
	if out, err := awsccmctl(append([]string{"install", "apply"}, flags...)...); err != nil {
		t.Fatalf("install apply: %v\n%s", err, out)
	}
	before, err := cs.AppsV1().DaemonSets(ns).Get(ctx, install.AppName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Install(t, chartDir(t), values, "ccm", ns, kubeconfig)
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(refused.Message, "invalid ownership metadata") {
		t.Fatalf("helm install over the install: %v, want Helm's ownership refusal", err)
	}
	if _, err := TakeOwnership(t, chartDir(t), values, "ccm", ns, kubeconfig); err != nil {
		t.Fatalf("helm install --take-ownership: %v", err)
	}
	defer func() { _, _ = Uninstall(t, "ccm", ns, kubeconfig) }()
	after, err := cs.AppsV1().DaemonSets(ns).Get(ctx, install.AppName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(before.Spec.Template, after.Spec.Template) {
		t.Errorf("taking the install over changed the pod template (its pods would roll):\nbefore %v\nafter  %v", before.Spec.Template, after.Spec.Template)
	}
	if after.Annotations["meta.helm.sh/release-name"] != "ccm" {
		t.Errorf("annotations %v: Helm did not take the DaemonSet", after.Annotations)
	}
	out, err := awsccmctl(append([]string{"install", "apply"}, flags...)...)
	if exitcode.Of(err) != exitcode.Mismatch {
		t.Errorf("install apply over the taken release: %v\n%s", err, out)
	}
}

// TestInstallRefusesWhatHelmTemplateRendered: GitOps tools (Argo CD,
// kustomize's helmCharts) apply the output of helm template, which has no
// release annotations but the chart's managed-by: Helm label. install apply
// and uninstall refuse those objects too (exit 8), naming where they come
// from, and change nothing.
func TestInstallRefusesWhatHelmTemplateRendered(t *testing.T) {
	kubeconfig, ns, cs, values := coexistCluster(t)
	ctx := context.Background()
	objs, err := Render(t, chartDir(t), values, "ccm", ns)
	if err != nil {
		t.Fatal(err)
	}
	resource := dynamicResource(t)
	// Applied as a GitOps controller applies them: server-side, its own
	// field manager.
	for i := range objs {
		u := &objs[i]
		if _, err := resource(u).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "argocd-controller"}); err != nil {
			t.Fatalf("apply %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	defer func() {
		for i := range objs {
			_ = resource(&objs[i]).Delete(ctx, objs[i].GetName(), metav1.DeleteOptions{})
		}
	}()
	before, err := cs.AppsV1().DaemonSets(ns).Get(ctx, install.AppName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for verb, flags := range map[string][]string{
		"apply":     {"--kubeconfig", kubeconfig, "--namespace", ns, "--no-detect"},
		"uninstall": {"--kubeconfig", kubeconfig, "--namespace", ns},
	} {
		out, err := awsccmctl(append([]string{"install", verb}, flags...)...)
		if code := exitcode.Of(err); code != exitcode.Mismatch || !strings.Contains(err.Error(), "rendered from the Helm chart") {
			t.Errorf("install %s over helm template's objects: exit %d (%v), want %d saying where they come from\n%s", verb, code, err, exitcode.Mismatch, out)
		}
	}
	after, err := cs.AppsV1().DaemonSets(ns).Get(ctx, install.AppName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Error("the refused commands changed the DaemonSet")
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, apply.InventoryName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused apply wrote its inventory: %v", err)
	}
}

// dynamicResource returns, for an object of any kind the test bed serves,
// the dynamic client's interface to it: how a GitOps controller writes
// what helm template rendered.
func dynamicResource(t *testing.T) func(*unstructured.Unstructured) dynamic.ResourceInterface {
	t.Helper()
	cfg := testbed.Get(t).Config
	dyn := dynamic.NewForConfigOrDie(cfg)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(cfg)))
	return func(u *unstructured.Unstructured) dynamic.ResourceInterface {
		m, err := mapper.RESTMapping(u.GroupVersionKind().GroupKind(), u.GroupVersionKind().Version)
		if err != nil {
			t.Fatal(err)
		}
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			return dyn.Resource(m.Resource).Namespace(u.GetNamespace())
		}
		return dyn.Resource(m.Resource)
	}
}
