package install

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

// strictDecoder refuses unknown and duplicate fields.
var strictDecoder = serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// decodeStrict decodes every object of one rendering into its typed object.
func decodeStrict(t *testing.T, objs []Object) []runtime.Object {
	t.Helper()
	var out []runtime.Object
	for _, o := range objs {
		if o.Kind == "ServiceMonitor" || o.Kind == "PrometheusRule" {
			// Not in client-go's scheme: TestMonitoringObjectsMatchCRDs
			// validates them against prometheus-operator's CRDs.
			checkUntyped(t, o)
			continue
		}
		obj, gvk, err := strictDecoder.Decode(o.YAML, nil, nil)
		if err != nil {
			t.Fatalf("%s %s does not decode strictly: %v\n%s", o.Kind, o.Name, err, o.YAML)
		}
		if gvk.Kind != o.Kind {
			t.Errorf("%s %s decodes as a %s", o.Kind, o.Name, gvk.Kind)
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			t.Fatal(err)
		}
		if m.GetName() != o.Name {
			t.Errorf("%s %s is named %q", o.Kind, o.Name, m.GetName())
		}
		if !maps.Equal(m.GetLabels(), Labels()) {
			t.Errorf("%s %s has labels %v, want %v", o.Kind, o.Name, m.GetLabels(), Labels())
		}
		out = append(out, obj)
	}
	return out
}

// checkUntyped checks what decodeStrict checks of an object of a kind
// outside client-go's scheme: its name, kind, API group and labels.
func checkUntyped(t *testing.T, o Object) {
	t.Helper()
	var u map[string]any
	if err := yaml.UnmarshalStrict(o.YAML, &u); err != nil {
		t.Fatalf("%s %s: %v", o.Kind, o.Name, err)
	}
	obj := unstructured.Unstructured{Object: u}
	if obj.GetKind() != o.Kind || obj.GetName() != o.Name || obj.GroupVersionKind().Group != MonitoringAPIGroup {
		t.Errorf("%s %s is a %s named %q", o.Kind, o.Name, obj.GroupVersionKind(), obj.GetName())
	}
	// The installer's labels (uninstall selects on them), and any
	// monitoringLabels besides (TestMonitoringLabels).
	for k, v := range Labels() {
		if obj.GetLabels()[k] != v {
			t.Errorf("%s %s has labels %v, want %s=%s among them", o.Kind, o.Name, obj.GetLabels(), k, v)
		}
	}
}

// TestEveryDocumentDecodesStrictly decodes each document into its typed
// object and checks what the issue requires of it.
func TestEveryDocumentDecodesStrictly(t *testing.T) {
	for name, v := range goldenCases(t) {
		t.Run(name, func(t *testing.T) {
			v.Default()
			for _, obj := range decodeStrict(t, renderCase(t, v)) {
				switch o := obj.(type) {
				case *corev1.ServiceAccount:
					if o.Namespace != v.Namespace {
						t.Errorf("ServiceAccount in %q, want %q", o.Namespace, v.Namespace)
					}
				case *rbacv1.ClusterRole:
					checkClusterRole(t, o)
				case *rbacv1.RoleBinding:
					if o.Namespace != "kube-system" || o.RoleRef.Name != "extension-apiserver-authentication-reader" {
						t.Errorf("RoleBinding %s/%s to %s", o.Namespace, o.Name, o.RoleRef.Name)
					}
				case *corev1.ConfigMap:
					checkConfigMap(t, o, v)
				case *corev1.Service:
					checkMetricsService(t, o)
				case *appsv1.DaemonSet:
					if v.Workload != WorkloadDaemonSet {
						t.Error("DaemonSet rendered for a Deployment")
					}
					checkPodSpec(t, &o.Spec.Template.Spec, true, &v)
				case *appsv1.Deployment:
					if v.Workload != WorkloadDeployment || o.Spec.Replicas == nil || *o.Spec.Replicas != *v.Replicas {
						t.Errorf("Deployment replicas %v for values %v", o.Spec.Replicas, v.Replicas)
					}
					checkPodSpec(t, &o.Spec.Template.Spec, false, &v)
				}
			}
		})
	}
}

func checkClusterRole(t *testing.T, r *rbacv1.ClusterRole) {
	t.Helper()
	for _, rule := range r.Rules {
		for _, res := range rule.Resources {
			switch res {
			case "persistentvolumes", "endpoints", "serviceaccounts", "serviceaccounts/token", "secrets", "configmaps":
				t.Errorf("ClusterRole grants %s %v: no controller of ours uses it (docs/reference/rbac.md)", res, rule.Verbs)
			}
			for _, verb := range rule.Verbs {
				if verb == "*" || res == "*" {
					t.Errorf("ClusterRole has a wildcard: %v", rule)
				}
			}
		}
	}
}

func checkConfigMap(t *testing.T, cm *corev1.ConfigMap, v Values) {
	t.Helper()
	ini, ok := cm.Data[CloudConfigKey]
	if !ok {
		t.Fatalf("ConfigMap has no %s", CloudConfigKey)
	}
	// The CCM reads it back to the configuration it was rendered from.
	got, err := cloudconfig.Parse([]byte(ini))
	if err != nil {
		t.Fatalf("the CCM cannot parse the rendered cloud config: %v", err)
	}
	want, _ := cloudconfig.Render(v.CloudConfig)
	back, _ := cloudconfig.Render(got)
	if !bytes.Equal(want, back) {
		t.Errorf("cloud config round trip:\n%s\nwant:\n%s", back, want)
	}
}

func checkPodSpec(t *testing.T, p *corev1.PodSpec, controlPlane bool, v *Values) {
	t.Helper()
	if !p.HostNetwork || p.DNSPolicy != v.DNSPolicy {
		t.Errorf("hostNetwork %v, dnsPolicy %q, want %q", p.HostNetwork, p.DNSPolicy, v.DNSPolicy)
	}
	checkPodOptions(t, p, v)
	tolerated := map[string]bool{}
	for _, tol := range p.Tolerations {
		tolerated[tol.Key] = true
	}
	if !tolerated[taintUninitialized] {
		t.Error("the uninitialized taint is not tolerated: no Node could ever be initialized")
	}
	if controlPlane && v.NodeSelector == nil {
		if !tolerated[labelControlPlane] || p.NodeSelector[labelControlPlane] != "" || len(p.NodeSelector) != 1 {
			t.Errorf("not placed on control-plane nodes: selector %v", p.NodeSelector)
		}
	}
	if controlPlane && v.PriorityClassName == "" {
		if p.PriorityClassName != "system-node-critical" {
			t.Errorf("priorityClassName %q", p.PriorityClassName)
		}
	}
	c := p.Containers[0]
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || len(c.Resources.Limits) > 0 {
		t.Errorf("resources %v: want requests and no limits", c.Resources)
	}
	for _, probe := range []*corev1.Probe{c.LivenessProbe, c.StartupProbe} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Scheme != corev1.URISchemeHTTPS ||
			probe.HTTPGet.Port.IntValue() != SecurePort || probe.HTTPGet.Path != "/healthz" {
			t.Errorf("probe %+v: want HTTPS /healthz on %d", probe, SecurePort)
		}
	}
	if !strings.HasPrefix(c.Args[0], "--cloud-provider=") {
		t.Errorf("args %v", c.Args)
	}
}

// checkPodOptions: every PodOptions field reaches the pod, next to what the
// installer renders, never instead of it.
func checkPodOptions(t *testing.T, p *corev1.PodSpec, v *Values) {
	t.Helper()
	c := p.Containers[0]
	if !equality.Semantic.DeepEqual(c.Env, v.Env) && (len(c.Env) > 0 || len(v.Env) > 0) {
		t.Errorf("env %v, want %v", c.Env, v.Env)
	}
	if len(p.Volumes) != 1+len(v.ExtraVolumes) || p.Volumes[0].Name != cloudConfigVolume ||
		len(c.VolumeMounts) != 1+len(v.ExtraVolumeMounts) || c.VolumeMounts[0].Name != cloudConfigVolume {
		t.Errorf("volumes %v, mounts %v: want the cloud config's, then the %d extra", p.Volumes, c.VolumeMounts, len(v.ExtraVolumes))
	}
	if !equality.Semantic.DeepEqual(p.ImagePullSecrets, v.ImagePullSecrets) && (len(p.ImagePullSecrets) > 0 || len(v.ImagePullSecrets) > 0) {
		t.Errorf("imagePullSecrets %v, want %v", p.ImagePullSecrets, v.ImagePullSecrets)
	}
	if v.NodeSelector != nil && !maps.Equal(p.NodeSelector, v.NodeSelector) {
		t.Errorf("nodeSelector %v, want %v", p.NodeSelector, v.NodeSelector)
	}
	if v.PriorityClassName != "" && p.PriorityClassName != v.PriorityClassName {
		t.Errorf("priorityClassName %q, want %q", p.PriorityClassName, v.PriorityClassName)
	}
	for _, want := range v.Tolerations {
		if !slices.ContainsFunc(p.Tolerations, func(got corev1.Toleration) bool { return want.MatchToleration(&got) }) {
			t.Errorf("toleration %v missing from %v", want, p.Tolerations)
		}
	}
}

// checkMetricsService: the Service reaches the CCM's pods on the secure
// port, under the name the ServiceMonitor's endpoint uses.
func checkMetricsService(t *testing.T, s *corev1.Service) {
	t.Helper()
	if s.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("metrics Service clusterIP %q, want None (headless: every pod is scraped)", s.Spec.ClusterIP)
	}
	if !maps.Equal(s.Spec.Selector, map[string]string{LabelName: AppName}) {
		t.Errorf("metrics Service selects %v", s.Spec.Selector)
	}
	if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Name != MetricsPortName || s.Spec.Ports[0].TargetPort.IntValue() != SecurePort {
		t.Errorf("metrics Service ports %+v, want %s to %d", s.Spec.Ports, MetricsPortName, SecurePort)
	}
}
