package install

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/awsccmctl/awsccmctl/internal/install/sizing"
)

// The Helm chart (charts/aws-cloud-controller-manager) renders the same
// templates as Render: hack/gen-chart copies templates/*.yaml.tmpl into it
// and writes ChartBase, the part of their data that no value changes, next
// to them; the chart's hand-written _data.tpl fills in the rest from the
// chart's values, which ChartValues mirrors. test/chart renders the chart
// with Helm for a table of Values and compares every object with
// RenderObjects.

// ChartTemplate is one object template of the chart: its template file,
// and the condition (over the chart's data) under which it renders.
type ChartTemplate struct {
	// File is the template in templates/.
	File string
	// If is a Helm template condition on the chart's data, empty for
	// always; the generated file is wrapped in {{- if If }}.
	If string
	// Data names the data the template sees: "awsccm.data" or
	// "awsccm.ecrData" (both defined in the chart's _data.tpl).
	Data string
}

// ChartTemplates lists the chart's object templates in Render's order.
// pod.yaml.tmpl is not among them: it only defines "podTemplate", and the
// generator copies it as a partial.
func ChartTemplates() []ChartTemplate {
	return []ChartTemplate{
		{File: "serviceaccount.yaml.tmpl", Data: "awsccm.data"},
		{File: "clusterrole.yaml.tmpl", Data: "awsccm.data"},
		{File: "clusterrolebinding.yaml.tmpl", Data: "awsccm.data"},
		{File: "rolebinding.yaml.tmpl", Data: "awsccm.data"},
		{File: "configmap.yaml.tmpl", Data: "awsccm.data"},
		{File: "daemonset.yaml.tmpl", If: `eq .WorkloadType "daemonset"`, Data: "awsccm.data"},
		{File: "deployment.yaml.tmpl", If: `eq .WorkloadType "deployment"`, Data: "awsccm.data"},
		{File: "ecr-credential-provider-daemonset.yaml.tmpl", If: `.Enabled`, Data: "awsccm.ecrData"},
		{File: "metrics-reader-serviceaccount.yaml.tmpl", If: `.Monitoring`, Data: "awsccm.data"},
		{File: "metrics-reader-token-secret.yaml.tmpl", If: `.Monitoring`, Data: "awsccm.data"},
		{File: "metrics-reader-clusterrole.yaml.tmpl", If: `.Monitoring`, Data: "awsccm.data"},
		{File: "metrics-reader-clusterrolebinding.yaml.tmpl", If: `.Monitoring`, Data: "awsccm.data"},
		{File: "metrics-service.yaml.tmpl", If: `.Monitoring`, Data: "awsccm.data"},
		{File: "servicemonitor.yaml.tmpl", If: `.Monitoring`, Data: "awsccm.data"},
		{File: "prometheusrule.yaml.tmpl", If: `.Monitoring`, Data: "awsccm.data"},
	}
}

// ChartBase returns the templates' data for the default values of each
// workload and of the ECR DaemonSet, the CCM's flags and the constants the
// chart computes the rest with. hack/gen-chart writes it into the chart.
func ChartBase() (map[string]any, error) {
	base := map[string]any{}
	for _, w := range []Workload{WorkloadDaemonSet, WorkloadDeployment} {
		// The image is always the values' (_data.tpl); with monitoring,
		// so that the base holds the alert rules.
		v := Values{Workload: w, Image: ImageRepository + ":from-values", Monitoring: true}
		v.Default()
		d, err := newTemplateData(&v)
		if err != nil {
			return nil, err
		}
		base[string(w)] = d
	}
	ecr := Values{ECRCredentialProvider: true, Image: ImageRepository + ":from-values"}
	ecr.Default()
	base["ecr"] = newECRTemplateData(&ecr)
	base["flags"] = ccmFlags()
	base["managedFlags"] = managedFlags()
	base["sizingFlags"] = sizing.FlagNames()
	base["sizing"] = map[string]int{
		"requestsPerNode": sizing.RequestsPerNode, "burstSeconds": sizing.BurstSeconds, "joinSeconds": sizing.JoinSeconds,
		"requestsPerWorker": sizing.RequestsPerWorker, "nodesPerLifecycleWorker": sizing.NodesPerLifecycleWorker,
		"defaultQPS": sizing.DefaultQPS, "defaultBurst": sizing.DefaultBurst,
		"defaultWorkers": sizing.DefaultWorkers, "defaultLifecycleWorkers": sizing.DefaultLifecycleWorkers,
		"maxQPS": sizing.MaxQPS, "maxBurst": sizing.MaxBurst, "maxWorkers": sizing.MaxWorkers, "maxLifecycleWorkers": sizing.MaxLifecycleWorkers,
	}
	empty, err := renderCloudConfig(nil)
	if err != nil {
		return nil, err
	}
	base["defaults"] = map[string]any{
		"clusterName": DefaultClusterName, "replicas": DefaultReplicas, "verbosity": DefaultVerbosity,
		"bindAddress": DefaultBindAddress, "monitoringBindAddress": MonitoringBindAddress, "expectedNodes": DefaultExpectedNodes,
		"cloudConfig": string(empty), "cloudConfigPath": CloudConfigDir + "/" + CloudConfigKey,
		"imageRepository": ImageRepository, "securePort": SecurePort, "leaseName": LeaseName,
	}
	return base, nil
}

// ChartImage is the chart's image value, as upstream's chart names it.
type ChartImage struct {
	Repository string `json:"repository"`
	Tag        string `json:"tag,omitempty"`
	// Digest pins the image (sha256:...), with or without a tag.
	Digest string `json:"digest,omitempty"`
}

// ChartMonitoring is the chart's monitoring value (Values.Monitoring).
type ChartMonitoring struct {
	Enabled bool `json:"enabled"`
	// Labels are Values.MonitoringLabels.
	Labels map[string]string `json:"labels,omitempty"`
}

// ChartServiceAccount is the chart's serviceAccount value.
type ChartServiceAccount struct {
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ChartValues is the chart's values file for the settings Values has (the
// chart also takes upstream's values that have no field here, such as
// args). `install manifests --format helm-values` prints it.
type ChartValues struct {
	Namespace                   string                      `json:"namespace,omitempty"`
	Image                       ChartImage                  `json:"image"`
	ClusterName                 string                      `json:"clusterName,omitempty"`
	CloudConfig                 string                      `json:"cloudConfig,omitempty"`
	Workload                    Workload                    `json:"workload,omitempty"`
	Replicas                    *int32                      `json:"replicas,omitempty"`
	ConfigureCloudRoutes        *bool                       `json:"configureCloudRoutes,omitempty"`
	ClusterCIDR                 string                      `json:"clusterCIDR,omitempty"`
	Controllers                 []string                    `json:"controllers,omitempty"`
	LeaderElect                 *bool                       `json:"leaderElect,omitempty"`
	Verbosity                   *int                        `json:"verbosity,omitempty"`
	BindAddress                 string                      `json:"bindAddress,omitempty"`
	ExtraArgs                   map[string]string           `json:"extraArgs,omitempty"`
	ExpectedNodes               *int                        `json:"expectedNodes,omitempty"`
	ECRCredentialProvider       bool                        `json:"ecrCredentialProvider,omitempty"`
	ECRCredentialProviderBinDir string                      `json:"ecrCredentialProviderBinDir,omitempty"`
	Resources                   corev1.ResourceRequirements `json:"resources"`
	ServiceAccount              *ChartServiceAccount        `json:"serviceAccount,omitempty"`
	Monitoring                  *ChartMonitoring            `json:"monitoring,omitempty"`
	// PodOptions, but ServiceAccountAnnotations, which the chart takes as
	// serviceAccount.annotations (upstream's name).
	PodOptions `json:",inline"`
}

// HelmValues returns the chart's values that render what Render renders
// for v: v is defaulted and validated first. The region is written into the
// cloud config's text, as Render does. The chart cannot run leader
// migration: migrate-from-intree applies it with install's code.
func HelmValues(v Values) (*ChartValues, error) {
	v.Default()
	if err := v.Validate(); err != nil {
		return nil, err
	}
	if v.LeaderMigrationConfig != nil {
		return nil, errors.New("leaderMigrationConfig: the chart does not run leader migration; migrate-from-intree applies the CCM with it, and finalize leaves the CCM without it")
	}
	ini, err := renderCloudConfig(v.CloudConfig)
	if err != nil {
		return nil, fmt.Errorf("cloudConfig: %w", err)
	}
	empty, err := renderCloudConfig(nil)
	if err != nil {
		return nil, err
	}
	c := &ChartValues{
		Namespace:                   v.Namespace,
		Image:                       splitImage(v.Image),
		ClusterName:                 v.ClusterName,
		Workload:                    v.Workload,
		ClusterCIDR:                 v.ClusterCIDR,
		Controllers:                 v.Controllers,
		LeaderElect:                 v.LeaderElect,
		Verbosity:                   v.Verbosity,
		BindAddress:                 v.BindAddress,
		ExtraArgs:                   v.ExtraArgs,
		ExpectedNodes:               v.ExpectedNodes,
		ECRCredentialProvider:       v.ECRCredentialProvider,
		ECRCredentialProviderBinDir: v.ECRCredentialProviderBinDir,
		ConfigureCloudRoutes:        &v.ConfigureCloudRoutes,
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(v.CPURequest),
			corev1.ResourceMemory: resource.MustParse(v.MemoryRequest),
		}},
		PodOptions: v.PodOptions,
	}
	if string(ini) != string(empty) {
		c.CloudConfig = string(ini)
	}
	if v.Workload == WorkloadDeployment {
		c.Replicas = v.Replicas
	}
	if v.Monitoring {
		c.Monitoring = &ChartMonitoring{Enabled: true, Labels: v.MonitoringLabels}
	}
	if len(v.ServiceAccountAnnotations) > 0 {
		c.ServiceAccount = &ChartServiceAccount{Annotations: v.ServiceAccountAnnotations}
	}
	c.ServiceAccountAnnotations = nil
	return c, nil
}

// splitImage splits a validated image reference into the chart's
// repository, tag and digest, with the grammar ValidateImage checks it by.
func splitImage(ref string) ChartImage {
	m := imageReference.FindStringSubmatch(ref)
	if m == nil {
		return ChartImage{Repository: ref}
	}
	tag, digest := m[imageReference.SubexpIndex("tag")], m[imageReference.SubexpIndex("digest")]
	return ChartImage{
		Repository: strings.TrimSuffix(strings.TrimSuffix(ref, digest), tag),
		Tag:        strings.TrimPrefix(tag, ":"),
		Digest:     strings.TrimPrefix(digest, "@"),
	}
}
