package chart

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/install"
)

// upstreamModule is the kubernetes/cloud-provider-aws release whose Go
// module carries the chart the comparison is made with (chart 0.0.11, the
// latest published); test/upstream builds its CCM from the same module.
const upstreamModule = "k8s.io/cloud-provider-aws@v1.37.0"

// upstreamChart returns upstream's chart from the Go module cache,
// downloading the module through the Go proxy when it is not there.
func upstreamChart(t *testing.T) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "mod", "download", "-json", upstreamModule)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v\n%s", upstreamModule, err, out)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download %s: %v %s", upstreamModule, err, out)
	}
	return filepath.Join(m.Dir, "charts", "aws-cloud-controller-manager")
}

// TestUpstreamValuesInstallThroughOurChart renders values files written
// for upstream's chart through both charts and checks that ours keeps
// everything upstream's renders from them, apart from the differences
// docs/helm.md lists ("What differs"): the DaemonSet's selector, the
// narrower ClusterRole, the cloud-config ConfigMap, the required
// tolerations added, the host network always, a memory request added, the
// probes and the hardened security context, and this chart's image where
// the values name upstream's.
func TestUpstreamValuesInstallThroughOurChart(t *testing.T) {
	ours, theirs := chartDir(t), upstreamChart(t)
	files, err := filepath.Glob(filepath.Join("testdata", "upstream-values", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no values files: %v", err)
	}
	// Upstream's own values.yaml, verbatim: a copy of it is the most common
	// values file of all.
	files = append(files, filepath.Join(theirs, "values.yaml"))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		if strings.HasPrefix(f, theirs) {
			name = "upstream-values.yaml-verbatim"
		}
		t.Run(name, func(t *testing.T) {
			values, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			up, err := Render(t, theirs, values, "aws-cloud-controller-manager", "kube-system")
			if err != nil {
				t.Fatalf("upstream's chart: %v", err)
			}
			got, err := Render(t, ours, values, "aws-cloud-controller-manager", "kube-system")
			if name == "host-cloud-config" {
				// Refused, naming the way.
				if err == nil || !strings.Contains(err.Error(), "put the file's text in cloudConfig") {
					t.Fatalf("error %v, want the refusal of --cloud-config naming cloudConfig", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("our chart: %v", err)
			}
			var given map[string]any
			if err := yaml.Unmarshal(values, &given); err != nil {
				t.Fatal(err)
			}
			compareWithUpstream(t, up, got, given)
		})
	}
}

func compareWithUpstream(t *testing.T, up, ours []unstructured.Unstructured, given map[string]any) {
	t.Helper()
	find := func(objs []unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
		for i := range objs {
			if objs[i].GetKind() == kind && objs[i].GetName() == name {
				return &objs[i]
			}
		}
		return nil
	}
	for _, u := range up {
		if find(ours, u.GetKind(), u.GetName()) == nil {
			t.Errorf("upstream's chart renders %s %s, ours does not: an upgrade from it would delete it", u.GetKind(), u.GetName())
		}
	}
	var uds, ods appsv1.DaemonSet
	decode(t, find(up, "DaemonSet", install.AppName), &uds)
	decode(t, find(ours, "DaemonSet", install.AppName), &ods)
	u, o := uds.Spec.Template.Spec, ods.Spec.Template.Spec
	uc, oc := u.Containers[0], o.Containers[0]

	// Every flag upstream's chart passes reaches our CCM with its value.
	oargs := oc.Args
	for i := 0; i < len(uc.Args); i++ {
		a := uc.Args[i]
		if !strings.Contains(a, "=") && i+1 < len(uc.Args) && !strings.HasPrefix(uc.Args[i+1], "--") {
			a += "=" + uc.Args[i+1]
			i++
		}
		if !slices.Contains(oargs, a) {
			t.Errorf("upstream passes %s; our args %v do not", a, oargs)
		}
	}
	if !equality.Semantic.DeepEqual(uc.Env, oc.Env) {
		t.Errorf("env %v, upstream's %v", oc.Env, uc.Env)
	}
	// A nodeSelector given replaces the default here; upstream's chart
	// merges it into its default (Helm merges maps), so a node there must
	// carry both labels.
	wantSelector := u.NodeSelector
	if sel, ok := given["nodeSelector"].(map[string]any); ok {
		wantSelector = map[string]string{}
		for k, v := range sel {
			wantSelector[k] = fmt.Sprint(v)
		}
	}
	if !equality.Semantic.DeepEqual(wantSelector, o.NodeSelector) {
		t.Errorf("nodeSelector %v, want %v (upstream's %v)", o.NodeSelector, wantSelector, u.NodeSelector)
	}
	// Every taint upstream's pod tolerates, ours tolerates, except the
	// master taint of upstream's default list, which Kubernetes no longer
	// sets since 1.25 (docs/helm.md).
	for _, tol := range u.Tolerations {
		if tol.Key == "node-role.kubernetes.io/master" && given["tolerations"] == nil {
			continue
		}
		taint := corev1.Taint{Key: tol.Key, Value: tol.Value, Effect: tol.Effect}
		if !slices.ContainsFunc(o.Tolerations, func(x corev1.Toleration) bool { return x.ToleratesTaint(klog.Background(), &taint, false) }) {
			t.Errorf("upstream tolerates %v, ours does not (%v)", tol, o.Tolerations)
		}
	}
	if u.DNSPolicy != o.DNSPolicy || u.PriorityClassName != o.PriorityClassName {
		t.Errorf("dnsPolicy %s, priorityClassName %s; upstream's %s, %s", o.DNSPolicy, o.PriorityClassName, u.DNSPolicy, u.PriorityClassName)
	}
	if !equality.Semantic.DeepEqual(u.ImagePullSecrets, o.ImagePullSecrets) {
		t.Errorf("imagePullSecrets %v, upstream's %v", o.ImagePullSecrets, u.ImagePullSecrets)
	}
	for k, v := range uds.Spec.Template.Annotations {
		if ods.Spec.Template.Annotations[k] != v {
			t.Errorf("pod annotation %s=%s missing", k, v)
		}
	}
	for _, vol := range u.Volumes {
		if !slices.ContainsFunc(o.Volumes, func(x corev1.Volume) bool { return equality.Semantic.DeepEqual(x, vol) }) {
			t.Errorf("volume %s missing", vol.Name)
		}
	}
	if q, ok := uc.Resources.Requests[corev1.ResourceCPU]; ok && !q.Equal(oc.Resources.Requests[corev1.ResourceCPU]) {
		t.Errorf("cpu request %v, upstream's %v", oc.Resources.Requests.Cpu(), q.String())
	}
	// The image: the values' mirror, or this chart's own where the values
	// name upstream's (a different binary).
	if repo, _, _ := strings.Cut(uc.Image, ":"); repo == "registry.k8s.io/provider-aws/cloud-controller-manager" {
		if !strings.HasPrefix(oc.Image, install.ImageRepository+":") {
			t.Errorf("image %s, want this chart's for upstream's", oc.Image)
		}
	} else if oc.Image != uc.Image {
		t.Errorf("image %s, upstream's %s", oc.Image, uc.Image)
	}
	var usa, osa corev1.ServiceAccount
	decode(t, find(up, "ServiceAccount", install.ServiceAccountName), &usa)
	decode(t, find(ours, "ServiceAccount", install.ServiceAccountName), &osa)
	for k, v := range usa.Annotations {
		if osa.Annotations[k] != v {
			t.Errorf("ServiceAccount annotation %s=%s missing", k, v)
		}
	}
	// The documented differences hold, so that the doc stays true.
	if !o.HostNetwork {
		t.Error("our CCM is not on the host network")
	}
	if ods.Spec.Selector.MatchLabels[install.LabelName] != install.AppName {
		t.Errorf("selector %v", ods.Spec.Selector.MatchLabels)
	}
}

func decode(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if u == nil {
		t.Fatalf("no object to decode into %T", into)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		t.Fatal(err)
	}
}

// TestUpstreamValuesInstall installs upstream's own values.yaml, verbatim,
// through our chart with Helm on the test bed: the release deploys, its
// CCM DaemonSet carries this chart's image and upstream's flags, and helm
// uninstall removes it.
func TestUpstreamValuesInstall(t *testing.T) {
	kubeconfig, _, cs, _ := coexistCluster(t)
	values, err := os.ReadFile(filepath.Join(upstreamChart(t), "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := Install(t, chartDir(t), values, "aws-cloud-controller-manager", "kube-system", kubeconfig)
	if err != nil {
		t.Fatalf("helm install with upstream's values.yaml: %v", err)
	}
	defer func() { _, _ = Uninstall(t, "aws-cloud-controller-manager", "kube-system", kubeconfig) }()
	if rel.Status != "deployed" {
		t.Errorf("release status %q, want deployed", rel.Status)
	}
	ds, err := cs.AppsV1().DaemonSets("kube-system").Get(t.Context(), install.AppName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := ds.Spec.Template.Spec.Containers[0]
	if !strings.HasPrefix(c.Image, install.ImageRepository+":") || !slices.Contains(c.Args, "--v=2") || !slices.Contains(c.Args, "--cloud-provider=aws") {
		t.Errorf("the DaemonSet runs %s %v", c.Image, c.Args)
	}
	// A new release has install's selector: upstream's is kept only where
	// a live DaemonSet has it (TestUpgradeFromUpstreamRelease).
	if want := map[string]string{install.LabelName: install.AppName}; !maps.Equal(ds.Spec.Selector.MatchLabels, want) || ds.Spec.Template.Labels["k8s-app"] != "" {
		t.Errorf("a new release's DaemonSet selects %v with pod labels %v, want %v and no k8s-app", ds.Spec.Selector.MatchLabels, ds.Spec.Template.Labels, want)
	}
	if _, err := Uninstall(t, "aws-cloud-controller-manager", "kube-system", kubeconfig); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	if _, err := cs.AppsV1().DaemonSets("kube-system").Get(t.Context(), install.AppName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("helm uninstall left the DaemonSet: %v", err)
	}
}
