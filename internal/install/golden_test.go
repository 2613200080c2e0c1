package install

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// testImage keeps the golden files independent of the build's version.
const testImage = ImageRepository + ":v1.37.0"

func ptr[T any](v T) *T { return &v }

// goldenCases are rendered by every test that needs valid values: the golden
// comparison, strict decoding, the flag-parse test and server-side dry run.
func goldenCases(t testing.TB) map[string]Values {
	t.Helper()
	// Parsed, not defaulted, as the command reads --cloud-config: the
	// ConfigMap keeps the user's file and the CCM fills the defaults.
	data, err := os.ReadFile(filepath.Join("testdata", "cloud-full.conf"))
	if err != nil {
		t.Fatal(err)
	}
	full, err := cloudconfig.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	lm, err := leadermigration.Render(leadermigration.ComponentCCM)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Values{
		"default-daemonset": {Image: testImage},
		// What migrate-from-intree applies during the move.
		"leader-migration": {Image: testImage, LeaderMigrationConfig: lm},
		"deployment": {
			Image: testImage, Workload: WorkloadDeployment, Replicas: ptr(int32(3)),
			ClusterName: "prod-eu", CloudConfig: &cloudconfig.Config{Global: cloudconfig.Global{Region: "eu-central-1"}},
		},
		"cloud-routes-full-config": {
			Image: "registry.example.com/mirror/aws-cloud-controller-manager@sha256:" + sha256Hex, Namespace: "cloud-system",
			ClusterName: "prod-eu", CloudConfig: full,
			ConfigureCloudRoutes: true, ClusterCIDR: "10.244.0.0/16,fd00:10:244::/56",
			Controllers: []string{"*", "-service"}, Verbosity: ptr(4), LeaderElect: ptr(true),
			CPURequest: "100m", MemoryRequest: "256Mi", BindAddress: "0.0.0.0",
			ExtraArgs: map[string]string{"node-monitor-period": "10s", "aws-instance-cache-max-age": "2m"},
		},
		// Every pod option upstream's chart has a value for.
		"pod-options": {Image: testImage, PodOptions: podOptionsCase()},
		// install --monitoring: the metrics Service, ServiceMonitor,
		// PrometheusRule and the scraper's RBAC; the secure port on every
		// address.
		"monitoring": {Image: testImage, Monitoring: true, MonitoringLabels: map[string]string{"release": "kube-prometheus-stack"}},
		// Sized for 5,000 Nodes, with the user's --kube-api-qps winning
		// over the computed one.
		"expected-nodes-5000-qps-override": {
			Image: testImage, ExpectedNodes: ptr(5000), ExtraArgs: map[string]string{"kube-api-qps": "300"},
		},
	}
}

const sha256Hex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// renderCase defaults and renders one case.
func renderCase(t testing.TB, v Values) []Object {
	t.Helper()
	v.Default()
	objs, err := RenderObjects(v)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return objs
}

// TestGolden compares Render's output with testdata/golden/<case>.yaml;
// go test ./internal/install -run TestGolden -update rewrites them.
func TestGolden(t *testing.T) {
	for name, v := range goldenCases(t) {
		t.Run(name, func(t *testing.T) {
			v.Default()
			got, err := Render(v)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", name+".yaml")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the rendering (run with -update if the change is intended); got:\n%s", path, got)
			}
		})
	}
}

// TestRenderJoinsObjectsInApplyOrder: Render is RenderObjects joined by ---.
func TestRenderJoinsObjectsInApplyOrder(t *testing.T) {
	for name, v := range goldenCases(t) {
		t.Run(name, func(t *testing.T) {
			objs := renderCase(t, v)
			workload := "DaemonSet"
			if v.Workload == WorkloadDeployment {
				workload = "Deployment"
			}
			want := []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "RoleBinding", "ConfigMap", workload}
			if v.Monitoring {
				want = append(want, "ServiceAccount", "Secret", "ClusterRole", "ClusterRoleBinding", "Service", "ServiceMonitor", "PrometheusRule")
			}
			if len(objs) != len(want) {
				t.Fatalf("%d objects, want %d", len(objs), len(want))
			}
			var joined [][]byte
			for i, o := range objs {
				if o.Kind != want[i] {
					t.Errorf("object %d is a %s, want %s", i, o.Kind, want[i])
				}
				joined = append(joined, o.YAML)
			}
			v.Default()
			stream, err := Render(v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(stream, bytes.Join(joined, []byte("---\n"))) {
				t.Error("Render is not RenderObjects joined by ---")
			}
		})
	}
}

// podOptionsCase sets every PodOptions field, as a cluster moving from
// upstream's chart would: IRSA, a proxy, a mirror's pull secret, the host's
// CA bundle, its own taints.
func podOptionsCase() PodOptions {
	return PodOptions{
		NodeSelector: map[string]string{"node.kubernetes.io/pool": "system"},
		Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "system", Effect: corev1.TaintEffectNoSchedule}},
		Env: []corev1.EnvVar{
			{Name: "HTTPS_PROXY", Value: "http://proxy.internal:3128"},
			{Name: "NO_PROXY", Value: "169.254.169.254,10.0.0.0/8,.svc"},
		},
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
	}
}
