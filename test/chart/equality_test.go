package chart

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

// chartDir is the repository's chart.
func chartDir(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "charts", "aws-cloud-controller-manager")
}

func ptr[T any](v T) *T { return &v }

// equalityCases are install settings whose chart rendering must equal
// install's: every Values field is set by at least one
// (TestEveryValuesFieldIsCompared).
func equalityCases(t testing.TB) map[string]install.Values {
	full, err := cloudconfig.Parse([]byte("[Global]\nRegion = eu-west-1\nKubernetesClusterTag = prod\nDisableSecurityGroupIngress = true\n" +
		"NodeIPFamilies = ipv4\nNodeIPFamilies = ipv6\n"))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]install.Values{
		"defaults": {},
		"deployment-region": {
			Workload: install.WorkloadDeployment, Replicas: ptr(int32(3)), ClusterName: "prod-eu", Region: "eu-central-1",
		},
		"cloud-routes-full-config": {
			Image: "registry.example.com/mirror/aws-cloud-controller-manager@sha256:" + strings.Repeat("ab", 32), Namespace: "cloud-system",
			ClusterName: "prod-eu", CloudConfig: full, ConfigureCloudRoutes: true, ClusterCIDR: "10.244.0.0/16,fd00:10:244::/56",
			Controllers: []string{"*", "-service", "tagging"}, Verbosity: ptr(4), LeaderElect: ptr(true),
			CPURequest: "100m", MemoryRequest: "256Mi", BindAddress: "0.0.0.0",
			ExtraArgs: map[string]string{"node-monitor-period": "10s", "aws-instance-cache-max-age": "2m"},
		},
		"no-leader-election-tag-and-digest": {
			Image: "localhost:5000/ccm:v1@sha256:" + strings.Repeat("cd", 32), LeaderElect: ptr(false), Verbosity: ptr(0),
		},
		"expected-nodes-5000-qps-override": {
			ExpectedNodes: ptr(5000), ExtraArgs: map[string]string{"kube-api-qps": "300"},
		},
		"ecr-credential-provider": {
			ECRCredentialProvider: true, ECRCredentialProviderBinDir: "/opt/kubelet/credential-providers",
		},
		"pod-options": {PodOptions: install.PodOptions{
			NodeSelector:     map[string]string{"node.kubernetes.io/pool": "system"},
			Tolerations:      []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "system", Effect: corev1.TaintEffectNoSchedule}},
			Env:              []corev1.EnvVar{{Name: "HTTPS_PROXY", Value: "http://proxy.internal:3128"}, {Name: "NO_PROXY", Value: "169.254.169.254,.svc"}},
			PodAnnotations:   map[string]string{"example.com/owner": "platform"},
			PodLabels:        map[string]string{"team": "platform"},
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "mirror-pull"}},
			ExtraVolumes: []corev1.Volume{{Name: "ca-certs", VolumeSource: corev1.VolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: "/etc/pki/tls/certs"},
			}}},
			ExtraVolumeMounts:         []corev1.VolumeMount{{Name: "ca-certs", MountPath: "/etc/ssl/certs", ReadOnly: true}},
			ServiceAccountAnnotations: map[string]string{"eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/ccm"},
			DNSPolicy:                 corev1.DNSClusterFirstWithHostNet,
			PriorityClassName:         "platform-critical",
		}},
		// The ServiceMonitor, PrometheusRule, metrics Service and the
		// scraper's RBAC; the secure port on every address; labelled for
		// kube-prometheus-stack's selectors.
		"monitoring": {Monitoring: true, MonitoringLabels: map[string]string{"release": "kube-prometheus-stack"}},
		"deployment-no-node-selector": {
			Workload: install.WorkloadDeployment, PodOptions: install.PodOptions{NodeSelector: map[string]string{}},
		},
	}
}

// TestChartRendersWhatInstallRenders renders the chart with Helm for each
// case's values (install.HelmValues, what `install manifests --format
// helm-values` prints) and compares every object with install's, field by
// field. The only differences allowed are the documented ones
// (docs/helm.md): Helm's managed-by label and the helm.sh/chart label on
// the objects' own metadata.
func TestChartRendersWhatInstallRenders(t *testing.T) {
	dir := chartDir(t)
	for name, v := range equalityCases(t) {
		t.Run(name, func(t *testing.T) {
			compareWithInstall(t, dir, v)
		})
	}
}

// TestChartSizingIsInstalls sweeps the cluster sizes where the sizing
// formula changes slope or hits a floor or cap: the chart's arithmetic
// (Helm's integer functions) must give install's flags at each.
func TestChartSizingIsInstalls(t *testing.T) {
	dir := chartDir(t)
	for _, n := range []int{1, 7, 39, 40, 41, 99, 100, 101, 999, 1001, 1999, 2000, 2001, 3333, 4999, 5000, 5001, 100000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			compareWithInstall(t, dir, install.Values{ExpectedNodes: ptr(n)})
		})
	}
}

func compareWithInstall(t *testing.T, dir string, v install.Values) {
	t.Helper()
	want, err := install.RenderObjects(v)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := install.HelmValues(v)
	if err != nil {
		t.Fatal(err)
	}
	values, err := yaml.Marshal(cv)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Render(t, dir, values, "ccm", "kube-system")
	if err != nil {
		t.Fatalf("helm template: %v\nvalues:\n%s", err, values)
	}
	byKey := map[string]map[string]any{}
	for _, u := range got {
		withoutHelmsLabels(&u)
		byKey[u.GetKind()+"/"+u.GetName()] = plainJSON(t, u.Object)
	}
	if len(got) != len(want) {
		var kinds []string
		for k := range byKey {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		t.Errorf("the chart renders %d objects (%s), install %d", len(got), strings.Join(kinds, ", "), len(want))
	}
	for _, o := range want {
		var w map[string]any
		if err := yaml.Unmarshal(o.YAML, &w); err != nil {
			t.Fatal(err)
		}
		g, ok := byKey[o.Kind+"/"+o.Name]
		if !ok {
			t.Errorf("the chart renders no %s %s", o.Kind, o.Name)
			continue
		}
		for _, d := range diff("", g, w) {
			t.Errorf("%s %s: %s", o.Kind, o.Name, d)
		}
	}
	if t.Failed() {
		t.Logf("values:\n%s", values)
	}
}

// withoutHelmsLabels removes the documented differences: on the object's
// own metadata (not the pod template's, so that moving between install and
// Helm rolls no pod) the managed-by label says Helm, and helm.sh/chart
// names the chart.
func withoutHelmsLabels(u *unstructured.Unstructured) {
	labels := u.GetLabels()
	if labels["app.kubernetes.io/managed-by"] == "Helm" {
		labels["app.kubernetes.io/managed-by"] = install.ManagedBy
	}
	delete(labels, "helm.sh/chart")
	u.SetLabels(labels)
}

// diff lists the paths where got and want differ (decoded JSON values).
func diff(path string, got, want any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: got %s, want %s", path, show(got), show(want))}
		}
		var out []string
		keys := slices.Sorted(func(yield func(string) bool) {
			seen := map[string]bool{}
			for k := range w {
				seen[k] = true
				if !yield(k) {
					return
				}
			}
			for k := range g {
				if !seen[k] && !yield(k) {
					return
				}
			}
		})
		for _, k := range keys {
			out = append(out, diff(path+"."+k, g[k], w[k])...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: got %s, want %s", path, show(got), show(want))}
		}
		var out []string
		for i := range w {
			out = append(out, diff(fmt.Sprintf("%s[%d]", path, i), g[i], w[i])...)
		}
		return out
	}
	if !reflect.DeepEqual(got, want) {
		return []string{fmt.Sprintf("%s: got %s, want %s", path, show(got), show(want))}
	}
	return nil
}

// plainJSON is o decoded as encoding/json decodes (numbers as float64),
// as install's side is.
func plainJSON(t *testing.T, o map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestEveryValuesFieldIsCompared: each field of install.Values is set by
// at least one equality case, so a new setting cannot be left out of the
// chart's _data.tpl unnoticed. The exceptions are the two the chart cannot
// take by design: allocateNodeCIDRs (refused by install too) and
// leaderMigrationConfig (migrate-from-intree's, refused by HelmValues).
func TestEveryValuesFieldIsCompared(t *testing.T) {
	// UpstreamSelector: install apply reads it from the live DaemonSet and the
	// chart from Helm's lookup; TestUpgradeFromUpstreamRelease covers the chart.
	skip := []string{"AllocateNodeCIDRs", "LeaderMigrationConfig", "PodOptions", "UpstreamSelector"}
	check := func(typ reflect.Type, field func(install.Values) reflect.Value) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if slices.Contains(skip, f.Name) {
				continue
			}
			set := false
			for _, v := range equalityCases(t) {
				if !field(v).Field(i).IsZero() {
					set = true
				}
			}
			if !set {
				t.Errorf("no equality case sets %s.%s: add one, and the value to the chart's _data.tpl", typ.Name(), f.Name)
			}
		}
	}
	check(reflect.TypeFor[install.Values](), func(v install.Values) reflect.Value { return reflect.ValueOf(v) })
	check(reflect.TypeFor[install.PodOptions](), func(v install.Values) reflect.Value { return reflect.ValueOf(v.PodOptions) })
}
