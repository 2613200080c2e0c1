package install

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cloud-provider/names"

	"github.com/awsccmctl/awsccmctl/internal/ecrcredential"
	"github.com/awsccmctl/awsccmctl/internal/fielderr"
	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/tagging"
	"github.com/awsccmctl/awsccmctl/internal/version"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

// Names of the rendered objects and the values they share. Uninstall selects
// the objects by Labels, and an upgrade applies over objects of these names:
// they MUST NOT change.
const (
	// AppName is the app.kubernetes.io/name label value, the workload and
	// container name.
	AppName = "aws-cloud-controller-manager"
	// ManagedBy is the app.kubernetes.io/managed-by label value.
	ManagedBy = "awsccmctl"
	// ServiceAccountName is the CCM's ServiceAccount.
	ServiceAccountName = "cloud-controller-manager"
	// ClusterRoleName names the ClusterRole and its ClusterRoleBinding, as
	// upstream and the in-tree bootstrap policy do.
	ClusterRoleName = "system:cloud-controller-manager"
	// AuthReaderBindingName is the kube-system RoleBinding to
	// extension-apiserver-authentication-reader.
	AuthReaderBindingName = "cloud-controller-manager:apiserver-authentication-reader"
	// ConfigMapName holds the cloud config.
	ConfigMapName = "aws-cloud-config"
	// CloudConfigDir is where the ConfigMap is mounted, CloudConfigKey the
	// file in it; the CCM gets --cloud-config=CloudConfigDir/CloudConfigKey.
	CloudConfigDir = "/etc/kubernetes/cloud-config"
	CloudConfigKey = "cloud.conf"
	// LeaderMigrationRetryPeriod is the CCM's --leader-elect-retry-period
	// while it runs with leader migration: how soon it takes the migration
	// lease once the holder released it.
	LeaderMigrationRetryPeriod = 500 * time.Millisecond
	// LeaderMigrationKey is the leader-migration file in the same ConfigMap,
	// present only while a migration from the in-tree provider runs.
	LeaderMigrationKey = "leader-migration.yaml"
	// LeaseName is --leader-elect-resource-name (the binary's default); the
	// ClusterRole grants get and update on this Lease only.
	LeaseName = "cloud-controller-manager"
	// SecurePort serves /healthz and /metrics over HTTPS (the binary's
	// default, 10258, what kubeadm and upstream use for a CCM).
	SecurePort = 10258

	// AnnotationCloudConfigHash on the pod template holds the SHA-256 of
	// the cloud config, so that changing it rolls the pods.
	AnnotationCloudConfigHash = "awsccmctl.io/cloud-config-sha256"
	// AnnotationSizedForNodes on the DaemonSet or Deployment holds the Node
	// count its sizing flags were computed for (Values.SizedFor).
	AnnotationSizedForNodes = "awsccmctl.io/sized-for-nodes"

	// LabelName and LabelManagedBy are the recommended label keys.
	LabelName      = "app.kubernetes.io/name"
	LabelManagedBy = "app.kubernetes.io/managed-by"
)

// Defaults filled by Values.Default.
const (
	// DefaultNamespace is where the CCM runs.
	DefaultNamespace = "kube-system"
	// ImageRepository is the project's CCM image; the default tag is the
	// awsccmctl version, so a CLI installs the CCM it was released with.
	ImageRepository = "ghcr.io/awsccmctl/aws-cloud-controller-manager"
	// DefaultClusterName is the binary's own --cluster-name default.
	DefaultClusterName = "kubernetes"
	// DefaultReplicas is the Deployment's replica count: two, so that a
	// node drain never leaves the cluster without a CCM.
	DefaultReplicas = 2
	// DefaultVerbosity is --v; 2 logs every Node initialized or deleted.
	DefaultVerbosity = 2
	// DefaultCPURequest is what kubeadm requests for kube-controller-manager
	// and upstream's chart for the CCM: the CCM is mostly idle between syncs.
	DefaultCPURequest = "200m"
	// DefaultMemoryRequest covers the shared instance view and the Node and
	// Service informers of a cluster of about 1,000 nodes
	// (docs/benchmarks.md measures the heap).
	DefaultMemoryRequest = "128Mi"
	// DefaultBindAddress keeps the secure port on the node's loopback (as
	// kubeadm does for kube-controller-manager); set 0.0.0.0 to scrape
	// /metrics from other hosts.
	DefaultBindAddress = "127.0.0.1"
	// MonitoringBindAddress is the default with Monitoring: Prometheus
	// scrapes the secure port from another host.
	MonitoringBindAddress = "0.0.0.0"
	// DefaultExpectedNodes is the cluster size the CCM's workers and API
	// rate limits are sized for (internal/install/sizing) when neither the
	// user nor the cluster says: the size the bench measures. A smaller
	// cluster loses nothing by it, since the CCM sends about three requests
	// per joining Node whatever its limits, which only set how fast a burst
	// of them is served.
	DefaultExpectedNodes = 1000
)

// Workload is how the CCM's pods are run.
type Workload string

// Workloads.
const (
	// WorkloadDaemonSet runs one pod on every control-plane node.
	WorkloadDaemonSet Workload = "daemonset"
	// WorkloadDeployment runs Replicas pods on any nodes, for control planes
	// whose nodes are not part of the cluster.
	WorkloadDeployment Workload = "deployment"
)

// DefaultImage returns the default image: ImageRepository at this build's
// version.
func DefaultImage() string { return ImageRepository + ":" + version.Get().Version }

// Values is everything the manifests are rendered from. Call Default, then
// Validate, then Render (which does both again).
type Values struct {
	// Namespace of the ServiceAccount, ConfigMap and workload.
	Namespace string
	// Image of the CCM, with a tag or digest.
	Image string
	// ClusterName is --cluster-name (used in load-balancer names and tags).
	ClusterName string
	// CloudConfig is rendered into the ConfigMap. nil: an empty [Global]
	// section (region, VPC and cluster ID from IMDS and instance tags).
	CloudConfig *cloudconfig.Config
	// Region is written to the cloud config's [Global] Region, over
	// CloudConfig's own; empty: CloudConfig's. Kept apart from CloudConfig
	// so that a bad region is blamed on the region, not on the file.
	Region string
	// Workload is WorkloadDaemonSet or WorkloadDeployment.
	Workload Workload
	// Replicas of the Deployment (ignored for a DaemonSet); nil: default.
	Replicas *int32
	// ConfigureCloudRoutes starts the route controller; it needs
	// ClusterCIDR. Rendered explicitly: the binary's default is true.
	ConfigureCloudRoutes bool
	// AllocateNodeCIDRs is refused: the CCM binary accepts
	// --allocate-node-cidrs (k8s.io/cloud-provider's shared flags) but no
	// controller of it reads the flag, as the library runs no node IPAM
	// controller; kube-controller-manager allocates node CIDRs.
	AllocateNodeCIDRs bool
	// ClusterCIDR is --cluster-cidr: one CIDR, or an IPv4 and an IPv6 one
	// separated by a comma.
	ClusterCIDR string
	// Controllers is --controllers; nil: ["*"].
	Controllers []string
	// LeaderElect is --leader-elect; nil: true.
	LeaderElect *bool
	// Verbosity is --v; nil: DefaultVerbosity.
	Verbosity *int
	// CPURequest and MemoryRequest are the container's resource requests.
	CPURequest    string
	MemoryRequest string
	// BindAddress is --bind-address of the secure port.
	BindAddress string
	// ExtraArgs are more CCM flags, by name without dashes. They must not
	// repeat a flag Values already sets, except the sizing flags
	// (sizing.FlagNames): a value given here replaces the computed one.
	ExtraArgs map[string]string
	// ExpectedNodes is the number of Nodes the cluster is expected to have;
	// the CCM's workers and client-side API rate limits are sized for it
	// (sizing.ForNodes). nil: DefaultExpectedNodes, unless install apply's
	// detection fills it from the cluster (ExpectedNodesForCount). Default
	// leaves it nil, so that detection can tell it was not given.
	ExpectedNodes *int
	// ECRCredentialProvider renders the ecr-credential-provider DaemonSet:
	// on every node it copies the kubelet's ECR credential provider from
	// Image into ECRCredentialProviderBinDir on the host.
	ECRCredentialProvider bool
	// ECRCredentialProviderBinDir is the nodes' kubelet
	// --image-credential-provider-bin-dir (default
	// ecrcredential.DefaultBinDir); only with ECRCredentialProvider.
	ECRCredentialProviderBinDir string
	// LeaderMigrationConfig, when set, runs the CCM with leader migration
	// (KEP-2436) for the move from the in-tree provider: the file
	// (internal/leadermigration.Render for the CCM) goes into the cloud-config
	// ConfigMap as LeaderMigrationKey and the CCM gets
	// --enable-leader-migration and --leader-migration-config. It needs
	// leader election in kube-system, where kube-controller-manager holds the
	// migration lease.
	LeaderMigrationConfig []byte
	// PodOptions are the pod's settings named as upstream's chart names
	// them (node selector, tolerations, env, volumes, annotations).
	PodOptions
	// Monitoring renders what Prometheus (prometheus-operator) needs to
	// scrape the CCM and alert on it: a headless Service on the secure
	// port, a ServiceMonitor, a PrometheusRule with Alerts, and a
	// metrics-reader ServiceAccount, token Secret and ClusterRole (with
	// its binding) whose token the ServiceMonitor scrapes with. It moves
	// the BindAddress default to MonitoringBindAddress.
	Monitoring bool
	// UpstreamSelector keeps the selector of a DaemonSet made from
	// upstream's manifests or chart (UpstreamSelectorLabels), which the
	// API server does not let an apply change, and gives the pods and
	// objects its label too. install apply sets it when the live DaemonSet
	// has that selector; the chart does the same with Helm's lookup.
	UpstreamSelector bool
	// MonitoringLabels are added to the ServiceMonitor's and the
	// PrometheusRule's labels, for a Prometheus that selects them by label
	// (kube-prometheus-stack: release=<its release>). Only with Monitoring.
	MonitoringLabels map[string]string
}

// Default fills every unset field with its default. It never changes a set
// value.
func (v *Values) Default() {
	setString := func(p *string, def string) {
		if *p == "" {
			*p = def
		}
	}
	setString(&v.Namespace, DefaultNamespace)
	setString(&v.Image, DefaultImage())
	setString(&v.ClusterName, DefaultClusterName)
	setString((*string)(&v.Workload), string(WorkloadDaemonSet))
	setString(&v.CPURequest, DefaultCPURequest)
	setString(&v.MemoryRequest, DefaultMemoryRequest)
	if v.Monitoring {
		setString(&v.BindAddress, MonitoringBindAddress)
	}
	setString(&v.BindAddress, DefaultBindAddress)
	setString((*string)(&v.DNSPolicy), string(corev1.DNSDefault))
	if v.ECRCredentialProvider {
		setString(&v.ECRCredentialProviderBinDir, ecrcredential.DefaultBinDir)
	}
	if v.CloudConfig == nil {
		v.CloudConfig = &cloudconfig.Config{}
	}
	if v.Region != "" && v.CloudConfig.Global.Region != v.Region {
		// A copy: the caller's cloud config stays as it was read.
		cc := *v.CloudConfig
		cc.Global.Region = v.Region
		v.CloudConfig = &cc
	}
	if v.Replicas == nil {
		r := int32(DefaultReplicas)
		v.Replicas = &r
	}
	if v.Controllers == nil {
		v.Controllers = []string{"*"}
	}
	if v.LeaderElect == nil {
		t := true
		v.LeaderElect = &t
	}
	if v.Verbosity == nil {
		d := DefaultVerbosity
		v.Verbosity = &d
	}
}

// flagName is a CCM flag name without dashes.
var flagName = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

// Validate checks the values after Default and returns every problem at
// once, joined with errors.Join; each names the field and says what to do.
func (v *Values) Validate() error {
	var errs []error
	// Every problem names its field (fielderr), so a command can name the
	// flag that sets it.
	add := func(field, format string, args ...any) { errs = append(errs, fielderr.Errorf(field, format, args...)) }

	for _, msg := range validation.IsDNS1123Label(v.Namespace) {
		add("namespace", " %q: %s", v.Namespace, msg)
	}
	if err := ValidateImage(v.Image); err != nil {
		errs = append(errs, err)
	}
	if v.ClusterName == "" || strings.IndexFunc(v.ClusterName, isSpaceOrControl) >= 0 || !utf8.ValidString(v.ClusterName) {
		add("clusterName", " %q: must be non-empty UTF-8, without white space or control characters", v.ClusterName)
	}
	switch v.Workload {
	case WorkloadDaemonSet:
	case WorkloadDeployment:
		if v.Replicas == nil || *v.Replicas < 1 {
			add("replicas", ": a deployment needs at least 1 replica (default %d)", DefaultReplicas)
		}
	default:
		add("workload", " %q: want %s or %s", v.Workload, WorkloadDaemonSet, WorkloadDeployment)
	}
	if v.ClusterCIDR != "" {
		if problem := checkClusterCIDR(v.ClusterCIDR); problem != "" {
			add("clusterCIDR", " %q: %s", v.ClusterCIDR, problem)
		}
	} else {
		if v.ConfigureCloudRoutes {
			add("clusterCIDR", ": configureCloudRoutes needs the pod CIDR (--cluster-cidr); set it, or turn cloud routes off")
		}
	}
	if v.AllocateNodeCIDRs {
		add("allocateNodeCIDRs", ": the CCM allocates no node CIDRs (k8s.io/cloud-provider runs no node IPAM controller, so its --allocate-node-cidrs does nothing); "+
			"run kube-controller-manager with --allocate-node-cidrs=true --cluster-cidr=<pod CIDR> and drop allocateNodeCIDRs (--allocate-node-cidrs) from the install")
	}
	v.validateControllers(add)
	if v.Verbosity != nil && (*v.Verbosity < 0 || *v.Verbosity > 10) {
		add("verbosity", " %d: want 0 to 10", *v.Verbosity)
	}
	for _, q := range []struct{ field, value string }{{"cpuRequest", v.CPURequest}, {"memoryRequest", v.MemoryRequest}} {
		if qty, err := resource.ParseQuantity(q.value); err != nil {
			add(q.field, " %q: not a Kubernetes quantity (e.g. 200m, 128Mi): %v", q.value, err)
		} else if qty.Sign() <= 0 {
			add(q.field, " %q: must be positive", q.value)
		}
	}
	if ip := net.ParseIP(v.BindAddress); ip == nil {
		add("bindAddress", " %q: not an IP address (e.g. 127.0.0.1 or 0.0.0.0)", v.BindAddress)
	} else if v.Monitoring && ip.IsLoopback() {
		// Prometheus scrapes from another host: the ServiceMonitor would
		// only ever see connection refused.
		add("bindAddress", " %q: monitoring (--monitoring) needs the secure port reachable from Prometheus, and a loopback address is not; "+
			"leave bindAddress out (monitoring defaults it to %s), set a node address, or drop monitoring", v.BindAddress, MonitoringBindAddress)
	}
	v.validateMonitoringLabels(add)
	if v.UpstreamSelector {
		for k := range UpstreamSelectorLabels() {
			if _, ok := v.PodLabels[k]; ok {
				add("podLabels", " %q: the DaemonSet made from upstream's manifests selects its pods by it; remove it", k)
			}
		}
	}
	if v.ExpectedNodes != nil && *v.ExpectedNodes < 1 {
		add("expectedNodes", " %d: must be at least 1, the number of Nodes the cluster is expected to have (leave it out to have install apply count them, or for the default %d)", *v.ExpectedNodes, DefaultExpectedNodes)
	}
	managed, known := managedFlags(), ccmFlags()
	for _, k := range slices.Sorted(maps.Keys(v.ExtraArgs)) {
		switch {
		case !flagName.MatchString(k):
			add("extraArgs", " %q: not a flag name; write it without dashes, e.g. node-monitor-period", k)
		case slices.Contains(managed, k):
			add("extraArgs", " %q: set by the installer; use its own field or flag instead", k)
		case known[k] == "":
			// The CCM would exit at start with "unknown flag" and crash-loop.
			add("extraArgs", " %q: not a flag of aws-cloud-controller-manager (see aws-cloud-controller-manager --help)", k)
		case !utf8.ValidString(v.ExtraArgs[k]):
			add("extraArgs", " %q: the value is not valid UTF-8", k)
		default:
			if err := checkFlagValue(known[k], v.ExtraArgs[k]); err != nil {
				add("extraArgs", " %q: value %q: %v", k, v.ExtraArgs[k], err)
			}
		}
	}
	regionOK := true
	if v.Region != "" {
		if err := (&cloudconfig.Config{Global: cloudconfig.Global{Region: v.Region}}).Validate(); err != nil {
			regionOK = false
			msg := err.Error()
			if i := strings.Index(msg, "is not an AWS region"); i >= 0 {
				msg = msg[i:]
			}
			add("region", " %q %s", v.Region, msg)
		}
	}
	if cc := v.CloudConfig; cc != nil {
		if !regionOK {
			// Reported above, on the region; the rest of the file still
			// gets checked.
			c := *cc
			c.Global.Region = ""
			cc = &c
		}
		if _, err := renderCloudConfig(cc); err != nil {
			add("cloudConfig", ": %v", err)
		}
	}
	if v.LeaderMigrationConfig != nil {
		v.validateLeaderMigration(add)
	}
	v.validateECRCredentialProvider(add)
	v.validatePodOptions(add)
	return errors.Join(errs...)
}

// validateLeaderMigration: the CCM meets kube-controller-manager's migration
// lease only when it elects a leader in the same namespace.
func (v *Values) validateLeaderMigration(add func(field, format string, args ...any)) {
	if err := leadermigration.Validate(v.LeaderMigrationConfig, leadermigration.ComponentCCM); err != nil {
		add("leaderMigrationConfig", ": %v", err)
	}
	if v.LeaderElect == nil || !*v.LeaderElect {
		add("leaderMigrationConfig", ": leader migration needs leader election (leaderElect: true)")
	}
	if v.Namespace != leadermigration.LeaseNamespace {
		add("namespace", " %q: leader migration needs the CCM in %s, where kube-controller-manager holds the %s lease", v.Namespace, leadermigration.LeaseNamespace, leadermigration.LeaseName)
	}
}

// checkFlagValue parses value as a flag of the pflag type typ would, for
// the scalar types; the CCM would refuse a bad one at start.
func checkFlagValue(typ, value string) error {
	fs := pflag.NewFlagSet("ccm", pflag.ContinueOnError)
	switch typ {
	case "bool":
		fs.Bool("f", false, "")
	case "duration":
		fs.Duration("f", 0, "")
	case "int":
		fs.Int("f", 0, "")
	case "int32":
		fs.Int32("f", 0, "")
	case "float32":
		fs.Float32("f", 0, "")
	default:
		return nil
	}
	if err := fs.Set("f", value); err != nil {
		return fmt.Errorf("not a %s", typ)
	}
	return nil
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }

func (v *Values) validateControllers(add func(field, format string, args ...any)) {
	if len(v.Controllers) == 0 {
		add("controllers", ": empty; use * for the default set")
	}
	aliases := names.CCMControllerAliases()
	// The tagging controller is this CCM's own (off by default).
	known := []string{"*", tagging.ControllerName}
	for alias, name := range aliases {
		known = append(known, alias, name)
	}
	sort.Strings(known[1:])
	for _, c := range v.Controllers {
		n := strings.TrimPrefix(c, "-")
		if !slices.Contains(known, n) || (n == "*" && c != "*") {
			add("controllers", " %q: unknown; want *, or a name or alias from %s, optionally prefixed with - to disable it", c, strings.Join(known[1:], ", "))
		}
	}
}

// checkClusterCIDR applies the route controller's rules: one CIDR, or two
// of different IP families.
func checkClusterCIDR(s string) string {
	parts := strings.Split(s, ",")
	if len(parts) > 2 {
		return "at most two CIDRs (one IPv4, one IPv6)"
	}
	var v4, v6 int
	for _, p := range parts {
		ip, _, err := net.ParseCIDR(strings.TrimSpace(p))
		if err != nil {
			return fmt.Sprintf("%q is not a CIDR, e.g. 10.244.0.0/16", p)
		}
		if ip.To4() != nil {
			v4++
		} else {
			v6++
		}
	}
	if len(parts) == 2 && (v4 != 1 || v6 != 1) {
		return "two CIDRs must be one IPv4 and one IPv6 (dual stack)"
	}
	return ""
}
