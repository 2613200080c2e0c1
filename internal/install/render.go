package install

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
	"github.com/awsccmctl/awsccmctl/templates"
)

// Well-known taints and labels the workload is placed with.
const (
	// labelControlPlane marks control-plane nodes (kubeadm, kops).
	labelControlPlane = "node-role.kubernetes.io/control-plane"
	// taintUninitialized is set by kubelets with --cloud-provider=external
	// until the CCM initializes the Node: the CCM must tolerate it, or no
	// node would ever be initialized.
	taintUninitialized = "node.cloudprovider.kubernetes.io/uninitialized"
	// taintNotReady: a node whose CNI waits for the CCM stays NotReady.
	taintNotReady = "node.kubernetes.io/not-ready"
)

// Object is one rendered Kubernetes object.
type Object struct {
	// Kind and Name identify the object (Name as in metadata.name).
	Kind, Name string
	// YAML is the object's document, without the --- separator.
	YAML []byte
}

// objectTemplate names the template of one object, in apply order.
type objectTemplate struct{ file, kind, name string }

// Render defaults v (Default never changes a set value), validates it and
// renders every object into one multi-document YAML stream in apply order:
// ServiceAccount, ClusterRole, ClusterRoleBinding, RoleBinding, ConfigMap,
// then the DaemonSet or Deployment, with ECRCredentialProvider the
// ecr-credential-provider DaemonSet, and with Monitoring the metrics
// reader's ServiceAccount, token Secret, ClusterRole and binding, the
// metrics Service, the ServiceMonitor and the PrometheusRule.
func Render(v Values) ([]byte, error) {
	objs, err := RenderObjects(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	for i, o := range objs {
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(o.YAML)
	}
	return b.Bytes(), nil
}

// RenderObjects is Render, one Object per document.
func RenderObjects(v Values) ([]Object, error) {
	v.Default()
	if err := v.Validate(); err != nil {
		return nil, err
	}
	data, err := newTemplateData(&v)
	if err != nil {
		return nil, err
	}
	tmpl, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	order := []objectTemplate{
		{"serviceaccount.yaml.tmpl", "ServiceAccount", ServiceAccountName},
		{"clusterrole.yaml.tmpl", "ClusterRole", ClusterRoleName},
		{"clusterrolebinding.yaml.tmpl", "ClusterRoleBinding", ClusterRoleName},
		{"rolebinding.yaml.tmpl", "RoleBinding", AuthReaderBindingName},
		{"configmap.yaml.tmpl", "ConfigMap", ConfigMapName},
	}
	if v.Workload == WorkloadDeployment {
		order = append(order, objectTemplate{"deployment.yaml.tmpl", "Deployment", AppName})
	} else {
		order = append(order, objectTemplate{"daemonset.yaml.tmpl", "DaemonSet", AppName})
	}
	if v.ECRCredentialProvider {
		// After the CCM's workload, which deploy and tests find first.
		order = append(order, objectTemplate{"ecr-credential-provider-daemonset.yaml.tmpl", "DaemonSet", ECRDaemonSetName})
	}
	if v.Monitoring {
		// Last: the Service and ServiceMonitor need nothing before them,
		// and the RBAC of the scraper comes before its token Secret.
		order = append(order,
			objectTemplate{"metrics-reader-serviceaccount.yaml.tmpl", "ServiceAccount", MetricsReaderName},
			objectTemplate{"metrics-reader-token-secret.yaml.tmpl", "Secret", MetricsTokenSecretName},
			objectTemplate{"metrics-reader-clusterrole.yaml.tmpl", "ClusterRole", MetricsReaderName},
			objectTemplate{"metrics-reader-clusterrolebinding.yaml.tmpl", "ClusterRoleBinding", MetricsReaderName},
			objectTemplate{"metrics-service.yaml.tmpl", "Service", MetricsServiceName},
			objectTemplate{"servicemonitor.yaml.tmpl", "ServiceMonitor", MetricsServiceName},
			objectTemplate{"prometheusrule.yaml.tmpl", "PrometheusRule", MetricsServiceName},
		)
	}
	objs := make([]Object, 0, len(order))
	for _, ot := range order {
		var td any = data
		if ot.name == ECRDaemonSetName {
			td = newECRTemplateData(&v)
		}
		var b bytes.Buffer
		if err := tmpl.ExecuteTemplate(&b, ot.file, td); err != nil {
			return nil, fmt.Errorf("render %s: %w", ot.file, err)
		}
		doc := append(bytes.TrimSpace(b.Bytes()), '\n')
		// A safety net behind quote and toYaml: every document is YAML.
		var probe map[string]any
		if err := yaml.Unmarshal(doc, &probe); err != nil {
			return nil, fmt.Errorf("render %s: the result is not YAML: %w", ot.file, err)
		}
		objs = append(objs, Object{Kind: ot.kind, Name: ot.name, YAML: doc})
	}
	return objs, nil
}

// templateData is what the templates see.
type templateData struct {
	Namespace, ServiceAccount, ClusterRole, AuthReaderBinding, ConfigMap string
	Workload, Container, Image, LeaseName, PriorityClassName             string
	Labels, SelectorLabels, ConfigMapData, NodeSelector                  map[string]string
	WorkloadAnnotations                                                  map[string]string
	Affinity                                                             *corev1.Affinity
	Tolerations                                                          []corev1.Toleration
	Args                                                                 []string
	CPURequest, MemoryRequest, ProbeHost, CloudConfigDir                 string
	CloudConfigHashKey, CloudConfigHash                                  string
	SecurePort                                                           int
	Replicas                                                             int32
	// The pod's extras (PodOptions); PodLabels and PodAnnotations include
	// the installer's own.
	PodLabels, PodAnnotations, ServiceAccountAnnotations map[string]string
	DNSPolicy                                            string
	Env                                                  []corev1.EnvVar
	ImagePullSecrets                                     []corev1.LocalObjectReference
	ExtraVolumes                                         []corev1.Volume
	ExtraVolumeMounts                                    []corev1.VolumeMount
	// Monitoring's objects (Values.Monitoring): names, and the
	// PrometheusRule's rules as plain maps (alertRules).
	MetricsService, MetricsPortName, MetricsReader, MetricsTokenSecret string
	AlertRuleGroup                                                     string
	AlertRules                                                         []map[string]any
	// MonitoringLabels label the ServiceMonitor and PrometheusRule: Labels
	// and Values.MonitoringLabels.
	MonitoringLabels map[string]string
}

func newTemplateData(v *Values) (*templateData, error) {
	ini, err := renderCloudConfig(v.CloudConfig)
	if err != nil {
		return nil, fmt.Errorf("cloudConfig: %w", err)
	}
	d := &templateData{
		Namespace:          v.Namespace,
		ServiceAccount:     ServiceAccountName,
		ClusterRole:        ClusterRoleName,
		AuthReaderBinding:  AuthReaderBindingName,
		ConfigMap:          ConfigMapName,
		Workload:           AppName,
		Container:          AppName,
		Image:              v.Image,
		LeaseName:          LeaseName,
		Labels:             Labels(),
		SelectorLabels:     map[string]string{LabelName: AppName},
		ConfigMapData:      map[string]string{CloudConfigKey: string(ini)},
		Args:               v.args(),
		CPURequest:         v.CPURequest,
		MemoryRequest:      v.MemoryRequest,
		ProbeHost:          probeHost(v.BindAddress),
		CloudConfigDir:     CloudConfigDir,
		CloudConfigHashKey: AnnotationCloudConfigHash,
		CloudConfigHash:    fmt.Sprintf("%x", sha256.Sum256(ini)),
		SecurePort:         SecurePort,
		MetricsService:     MetricsServiceName,
		MetricsPortName:    MetricsPortName,
		MetricsReader:      MetricsReaderName,
		MetricsTokenSecret: MetricsTokenSecretName,
		AlertRuleGroup:     AlertRuleGroup,
		Tolerations: []corev1.Toleration{
			{Key: taintUninitialized, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
			{Key: taintNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		},
	}
	// On the workload, not the pod template: the flags themselves roll the
	// Pods when the size changes them.
	d.WorkloadAnnotations = map[string]string{AnnotationSizedForNodes: strconv.Itoa(v.SizedFor())}
	if v.UpstreamSelector && v.Workload == WorkloadDaemonSet {
		d.SelectorLabels = UpstreamSelectorLabels()
		maps.Copy(d.Labels, d.SelectorLabels)
	}
	if v.Monitoring {
		d.AlertRules = alertRules()
		d.MonitoringLabels = maps.Clone(d.Labels)
		maps.Copy(d.MonitoringLabels, v.MonitoringLabels)
	}
	if v.LeaderMigrationConfig != nil {
		d.ConfigMapData[LeaderMigrationKey] = string(v.LeaderMigrationConfig)
	}
	if v.Workload == WorkloadDeployment {
		d.Replicas = *v.Replicas
		// Nodes matter to the cluster, not only to one node: the CCM is
		// cluster-critical, and only node-critical on the control plane.
		d.PriorityClassName = "system-cluster-critical"
		// hostNetwork: two replicas on one node would fight for the port.
		d.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey:   corev1.LabelHostname,
				LabelSelector: &metav1.LabelSelector{MatchLabels: d.SelectorLabels},
			}},
		}}
	} else {
		d.PriorityClassName = "system-node-critical"
		d.NodeSelector = map[string]string{labelControlPlane: ""}
		d.Tolerations = append([]corev1.Toleration{
			{Key: labelControlPlane, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		}, d.Tolerations...)
	}
	d.addPodOptions(&v.PodOptions)
	return d, nil
}

// UpstreamSelectorLabels are the selector of the DaemonSet upstream's
// manifests and chart make (k8s-app=<name>).
func UpstreamSelectorLabels() map[string]string {
	return map[string]string{"k8s-app": AppName}
}

// addPodOptions adds the user's pod settings to what the installer renders.
func (d *templateData) addPodOptions(o *PodOptions) {
	d.PodLabels = maps.Clone(d.Labels)
	maps.Copy(d.PodLabels, o.PodLabels)
	d.PodAnnotations = map[string]string{d.CloudConfigHashKey: d.CloudConfigHash}
	maps.Copy(d.PodAnnotations, o.PodAnnotations)
	d.ServiceAccountAnnotations = o.ServiceAccountAnnotations
	d.DNSPolicy = string(o.DNSPolicy)
	d.Env = o.Env
	d.ImagePullSecrets = o.ImagePullSecrets
	d.ExtraVolumes = o.ExtraVolumes
	d.ExtraVolumeMounts = o.ExtraVolumeMounts
	if o.NodeSelector != nil {
		d.NodeSelector = o.NodeSelector
	}
	d.Tolerations = append(d.Tolerations, o.Tolerations...)
	if o.PriorityClassName != "" {
		d.PriorityClassName = o.PriorityClassName
	}
}

// Labels returns the labels every rendered object carries; uninstall
// selects on them.
func Labels() map[string]string {
	return map[string]string{LabelName: AppName, LabelManagedBy: ManagedBy}
}

// probeHost is where the kubelet reaches the secure port: the bind address,
// or loopback when the port listens on every address.
func probeHost(bind string) string {
	if bind == "0.0.0.0" || bind == "::" {
		return "127.0.0.1"
	}
	return bind
}

// renderCloudConfig writes c with the code the CCM reads it with, and reads
// the result back as the CCM does (parse, default, validate), so a file the
// CCM would refuse is never written.
func renderCloudConfig(c *cloudconfig.Config) ([]byte, error) {
	if c == nil {
		c = &cloudconfig.Config{}
	}
	ini, err := cloudconfig.Render(c)
	if err != nil {
		return nil, err
	}
	back, err := cloudconfig.Parse(ini)
	if err != nil {
		return nil, fmt.Errorf("the rendered file does not parse: %w", err)
	}
	back.Default()
	if err := back.Validate(); err != nil {
		return nil, err
	}
	return ini, nil
}

// managedFlags are the CCM flags args sets; ExtraArgs may not repeat them.
func managedFlags() []string {
	return []string{
		"cloud-provider", "cloud-config", "cluster-name", "controllers",
		"configure-cloud-routes", "allocate-node-cidrs", "cluster-cidr",
		"leader-elect", "leader-elect-resource-name", "leader-elect-resource-namespace",
		"use-service-account-credentials", "secure-port", "bind-address", "v",
		"enable-leader-migration", "leader-migration-config",
	}
}

// args are the CCM's command-line flags. Each is a flag of
// internal/ccmapp.NewCommand (a test parses them with its flag set).
func (v *Values) args() []string {
	a := []string{
		"--cloud-provider=aws",
		"--cloud-config=" + CloudConfigDir + "/" + CloudConfigKey,
		"--cluster-name=" + v.ClusterName,
		"--controllers=" + strings.Join(v.Controllers, ","),
		// Always explicit: the binary's default is true.
		"--configure-cloud-routes=" + strconv.FormatBool(v.ConfigureCloudRoutes),
	}
	if v.ClusterCIDR != "" {
		a = append(a, "--cluster-cidr="+v.ClusterCIDR)
	}
	a = append(a, "--leader-elect="+strconv.FormatBool(*v.LeaderElect))
	if *v.LeaderElect {
		a = append(a,
			"--leader-elect-resource-name="+LeaseName,
			"--leader-elect-resource-namespace="+v.Namespace)
	}
	if v.LeaderMigrationConfig != nil {
		a = append(a,
			"--enable-leader-migration=true",
			"--leader-migration-config="+CloudConfigDir+"/"+LeaderMigrationKey)
		// The CCM takes a released migration lease at its next attempt,
		// one retry period (jittered up to 2.2 periods) later: the default
		// 2 s alone would spend most of the hand-over budget. Only while
		// the migration runs: finalize renders the CCM without it.
		if _, user := v.ExtraArgs["leader-elect-retry-period"]; !user {
			a = append(a, "--leader-elect-retry-period="+LeaderMigrationRetryPeriod.String())
		}
	}
	a = append(a,
		// false: every controller uses the CCM's own ServiceAccount. true
		// would make the CCM create one ServiceAccount per controller and
		// mint their tokens, which needs serviceaccounts create and
		// serviceaccounts/token create (the right to impersonate any
		// ServiceAccount of the namespace) for per-controller audit names
		// only.
		"--use-service-account-credentials=false",
		"--secure-port="+strconv.Itoa(SecurePort),
		"--bind-address="+v.BindAddress,
		"--v="+strconv.Itoa(*v.Verbosity),
	)
	// Sized for SizedFor Nodes; a sizing flag in ExtraArgs replaces its
	// computed value (below).
	a = append(a, v.sizingArgs()...)
	for _, k := range slices.Sorted(maps.Keys(v.ExtraArgs)) {
		a = append(a, "--"+k+"="+v.ExtraArgs[k])
	}
	return a
}

// parseTemplates parses every template with the quoting functions.
func parseTemplates() (*template.Template, error) {
	t := template.New("manifests").Option("missingkey=error")
	t.Funcs(template.FuncMap{
		"quote":   quote,
		"toYaml":  toYAML,
		"nindent": nindent,
		"include": func(name string, data any) (string, error) {
			var b bytes.Buffer
			err := t.ExecuteTemplate(&b, name, data)
			return b.String(), err
		},
	})
	return t.ParseFS(templates.FS, "*.yaml.tmpl")
}

// quote writes s as a YAML double-quoted scalar, always on one line,
// whatever s holds (quotes, colons, newlines, "true", "1e3"): backslash and
// double quote are escaped, and so is every character YAML does not allow
// raw in a stream (C0 and C1 controls, DEL, U+FFFE, U+FFFF) and the line
// separators U+0085, U+2028 and U+2029.
func quote(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%q is not valid UTF-8", s)
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == 0x2028 || r == 0x2029 || r == 0xfffe || r == 0xffff:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}

// toYAML writes v as block YAML (sigs.k8s.io/yaml), without the final
// newline; place it with nindent.
func toYAML(v any) (string, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// nindent starts a new line and indents every line of s by n spaces.
func nindent(n int, s string) string {
	pad := strings.Repeat(" ", n)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" { // no trailing white space on empty lines
			lines[i] = pad + l
		}
	}
	return "\n" + strings.Join(lines, "\n")
}
