package chart

import (
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/install"
)

// TestChartLints: `helm lint --strict` (Helm's library) passes on the
// chart with its defaults and with every equality case's values.
func TestChartLints(t *testing.T) {
	dir := chartDir(t)
	check := func(name string, values []byte) {
		msgs, err := Lint(t, dir, values)
		if err != nil {
			t.Errorf("%s: helm lint --strict: %v\n%v", name, err, msgs)
		}
	}
	check("defaults", nil)
	for name, v := range equalityCases(t) {
		cv, err := install.HelmValues(v)
		if err != nil {
			t.Fatal(err)
		}
		values, err := yaml.Marshal(cv)
		if err != nil {
			t.Fatal(err)
		}
		check(name, values)
	}
}

// TestValuesSchemaRefusesTypos: values.schema.json makes a mistyped or
// ill-typed value fail at install, with Helm's message naming it, instead
// of being ignored.
func TestValuesSchemaRefusesTypos(t *testing.T) {
	dir := chartDir(t)
	for values, want := range map[string]string{
		"tolerationz: []\n":                           "tolerationz",
		"workload: statefulset\n":                     "workload",
		"verbosity: 11\n":                             "verbosity",
		"image:\n  repo: x\n":                         "repo",
		"expectedNodes: 0\n":                          "expectedNodes",
		"bindAddress: localhost\n":                    "bindAddress",
		"dnsPolicy: ClusterFirst\n":                   "dnsPolicy",
		"extraArgs:\n  --node-monitor-period: 5s\n":   "--node-monitor-period",
		"resources:\n  requests:\n    gpu: 1\n":       "gpu",
		"serviceAccount:\n  name: other\n":            "name",
		"controllers: []\n":                           "controllers",
		"ecrCredentialProviderBinDir: relative/dir\n": "ecrCredentialProviderBinDir",
	} {
		_, err := Render(t, dir, []byte(values), "ccm", "kube-system")
		var refused *RefusedError
		if !errors.As(err, &refused) || !strings.Contains(refused.Message, "schema") || !strings.Contains(refused.Message, want) {
			t.Errorf("values %q: error %v, want Helm's schema error naming %s", values, err, want)
		}
		if err := Schema(t, dir, []byte(values)); err == nil {
			t.Errorf("values %q: the schema check alone passed", values)
		}
	}
}

// TestChartRefusesWhatItCannotHonour: upstream's values that this chart
// cannot apply, and settings install refuses too, fail with the reason.
func TestChartRefusesWhatItCannotHonour(t *testing.T) {
	dir := chartDir(t)
	for values, want := range map[string]string{
		"hostNetworking: false\n":                                                   "hostNetworking: false: the CCM runs on the host network",
		"securityContext:\n  privileged: true\n":                                    "securityContext: the chart runs the CCM with a fixed hardened security context",
		"resources:\n  limits:\n    cpu: 1\n":                                       "resources.limits",
		"serviceAccountName: ccm\n":                                                 "serviceAccountName \"ccm\": the chart's object names are fixed",
		"clusterRoleRules:\n- apiGroups: ['*']\n":                                   "clusterRoleRules",
		"args: [--cluster-name=a]\nclusterName: b\n":                                "args --cluster-name=a conflicts with clusterName: b",
		"args: [--v=3]\nverbosity: 2\n":                                             "args --v=3 conflicts with verbosity: 2",
		"args: [--use-service-account-credentials=true]\n":                          "the chart sets --use-service-account-credentials=false",
		"args: [--cloud-provider=gce]\n":                                            "this chart runs the AWS provider",
		"args: [--node-monitor-period]\n":                                           "args: --node-monitor-period has no value",
		"args: [-v=2]\n":                                                            "args[0] \"-v=2\": want --flag=value",
		"args: [--no-such-flag=1]\n":                                                "extraArgs \"no-such-flag\": not a flag of aws-cloud-controller-manager",
		"args: [--node-monitor-period=5s]\nextraArgs:\n  node-monitor-period: 6s\n": "conflicts with extraArgs.node-monitor-period",
		"extraArgs:\n  kube-api-burst: lots\n":                                      "extraArgs \"kube-api-burst\": value \"lots\": not a int32",
		"extraArgs:\n  cluster-name: x\n":                                           "extraArgs \"cluster-name\": set by the chart",
		"configureCloudRoutes: true\n":                                              "clusterCIDR: configureCloudRoutes needs the pod CIDR",
		"podLabels:\n  app.kubernetes.io/name: x\n":                                 "podLabels \"app.kubernetes.io/name\": set by the chart",
		"extraVolumes:\n- name: cloud-config\n  emptyDir: {}\n":                     "extraVolumes \"cloud-config\": the name is taken",
		"region: eu-west-1\ncloudConfig: |\n  [Global]\n":                           "region: set Region in cloudConfig",
		"monitoring:\n  enabled: true\nbindAddress: 127.0.0.1\n":                    "bindAddress \"127.0.0.1\": monitoring.enabled needs the secure port reachable",
		"monitoring:\n  labels: {release: x}\n":                                     "monitoring.labels: they label the ServiceMonitor and PrometheusRule that monitoring.enabled renders",
		"monitoring:\n  enabled: true\n  labels: {app.kubernetes.io/name: x}\n":     `monitoring.labels "app.kubernetes.io/name": set by the chart`,
		"ecrCredentialProviderBinDir: /opt/bin\n":                                   "ecrCredentialProviderBinDir \"/opt/bin\": set only with ecrCredentialProvider",
	} {
		_, err := Render(t, dir, []byte(values), "ccm", "kube-system")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("values %q: error %v, want %q", values, err, want)
		}
	}
}
