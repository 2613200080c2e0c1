package installcmd

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/ecrcredential"
	"github.com/awsccmctl/awsccmctl/internal/fielderr"
	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

// Streams are where the commands write: results to Out, progress to Err.
// Output returns the -o format (text or json); nil means text.
type Streams struct {
	Out, Err io.Writer
	Output   func() (string, error)
}

// NewCommand returns `install` and its subcommands.
func NewCommand(streams Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install the AWS cloud controller manager on a cluster",
		Long: `install puts the AWS cloud controller manager on a cluster: a ServiceAccount,
the ClusterRole system:cloud-controller-manager with only what the controllers
use, its bindings, the cloud-config ConfigMap and a DaemonSet on the
control-plane nodes (or, with --workload=deployment, a Deployment for control
planes whose nodes are not in the cluster).

Values come from flags, AWSCCMCTL_<FLAG> environment variables, then an
InstallConfiguration file (--config), then the defaults.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newManifestsCommand(streams))
	cmd.AddCommand(newKubeadmCommand(streams))
	cmd.AddCommand(newKopsCommand(streams))
	cmd.AddCommand(newIAMCommand(streams))
	cmd.AddCommand(newApplyCommand(streams), newUninstallCommand(streams))
	return cmd
}

// Flag names shared by the install subcommands.
const (
	flagConfig               = "config"
	flagImage                = "image"
	flagNamespace            = "namespace"
	flagClusterName          = "cluster-name"
	flagRegion               = "region"
	flagCloudConfig          = "cloud-config"
	flagWorkload             = "workload"
	flagReplicas             = "replicas"
	flagConfigureCloudRoutes = "configure-cloud-routes"
	flagAllocateNodeCIDRs    = "allocate-node-cidrs"
	flagClusterCIDR          = "cluster-cidr"
	flagControllers          = "controllers"
	flagLeaderElect          = "leader-elect"
	flagVerbosity            = "verbosity"
	flagCPURequest           = "cpu-request"
	flagMemoryRequest        = "memory-request"
	flagBindAddress          = "bind-address"
	flagExtraArgs            = "extra-args"
	flagExpectedNodes        = "expected-nodes"
	flagECRDaemonSet         = "ecr-credential-provider"
	flagECRDaemonSetBinDir   = "ecr-credential-provider-bin-dir"
	flagMonitoring           = "monitoring"
)

// fieldFlags maps the field names in internal/install's validation errors
// to the flags that set them, so every message names both.
var fieldFlags = map[string]string{
	"namespace": flagNamespace, "image": flagImage, "clusterName": flagClusterName,
	"cloudConfig": flagCloudConfig, "region": flagRegion, "workload": flagWorkload, "replicas": flagReplicas,
	"clusterCIDR": flagClusterCIDR, "controllers": flagControllers, "verbosity": flagVerbosity,
	"cpuRequest": flagCPURequest, "memoryRequest": flagMemoryRequest, "bindAddress": flagBindAddress,
	"extraArgs": flagExtraArgs, "ecrCredentialProviderBinDir": flagECRDaemonSetBinDir,
	"expectedNodes": flagExpectedNodes, "monitoring": flagMonitoring,
}

// ValueOptions are the flags that make install.Values.
type ValueOptions struct {
	// ConfigFile is an InstallConfiguration file.
	ConfigFile string
	// CloudConfigFile is an INI cloud-config file, read as the CCM reads it.
	CloudConfigFile string
	// Region sets [Global] Region of the cloud config.
	Region string

	Image, Namespace, ClusterName, Workload, ClusterCIDR string
	CPURequest, MemoryRequest, BindAddress               string
	Replicas                                             int32
	Verbosity                                            int
	ConfigureCloudRoutes, AllocateNodeCIDRs, LeaderElect bool
	Controllers                                          []string
	ExtraArgs                                            map[string]string
	// ExpectedNodes is the Node count the CCM is sized for.
	ExpectedNodes int
	// ECRDaemonSet and ECRDaemonSetBinDir render the ecr-credential-provider
	// DaemonSet and choose the host directory it installs into.
	ECRDaemonSet       bool
	ECRDaemonSetBinDir string
	// Monitoring renders the ServiceMonitor, PrometheusRule and what they
	// need (install.Values.Monitoring).
	Monitoring bool
}

// AddFlags registers the value flags. Defaults shown are internal/install's;
// a flag counts only when set (on the command line or by the environment),
// so the file's values are not overridden by flag defaults.
func (o *ValueOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigFile, flagConfig, "", "InstallConfiguration file (apiVersion "+install.ConfigAPIVersion+"); for this command it replaces the global --config")
	fs.StringVar(&o.Image, flagImage, install.DefaultImage(), "CCM image, with a tag or digest")
	fs.StringVar(&o.Namespace, flagNamespace, install.DefaultNamespace, "namespace of the CCM's ServiceAccount, ConfigMap and workload")
	fs.StringVar(&o.ClusterName, flagClusterName, install.DefaultClusterName, "the CCM's --cluster-name (used in load-balancer names and tags)")
	fs.StringVar(&o.Region, flagRegion, "", "AWS region, written to the cloud config's [Global] Region (default: from IMDS)")
	fs.StringVar(&o.CloudConfigFile, flagCloudConfig, "", "INI cloud-config file for the CCM (docs/cloud-config.md); parsed and validated as the CCM would")
	fs.StringVar(&o.Workload, flagWorkload, string(install.WorkloadDaemonSet), "daemonset (on control-plane nodes) or deployment (control plane outside the cluster)")
	fs.Int32Var(&o.Replicas, flagReplicas, install.DefaultReplicas, "replicas of the Deployment (--workload=deployment)")
	fs.BoolVar(&o.ConfigureCloudRoutes, flagConfigureCloudRoutes, false, "run the route controller (needs --cluster-cidr)")
	fs.BoolVar(&o.AllocateNodeCIDRs, flagAllocateNodeCIDRs, false, "refused: the CCM allocates no node CIDRs (kube-controller-manager does, with its --allocate-node-cidrs and --cluster-cidr)")
	fs.StringVar(&o.ClusterCIDR, flagClusterCIDR, "", "pod CIDR of the cluster (one, or an IPv4 and an IPv6 one separated by a comma)")
	fs.StringSliceVar(&o.Controllers, flagControllers, []string{"*"}, "the CCM's --controllers")
	fs.BoolVar(&o.LeaderElect, flagLeaderElect, true, "the CCM's --leader-elect")
	fs.IntVar(&o.Verbosity, flagVerbosity, install.DefaultVerbosity, "the CCM's log verbosity (--v)")
	fs.StringVar(&o.CPURequest, flagCPURequest, install.DefaultCPURequest, "CPU request of the CCM container")
	fs.StringVar(&o.MemoryRequest, flagMemoryRequest, install.DefaultMemoryRequest, "memory request of the CCM container")
	fs.StringVar(&o.BindAddress, flagBindAddress, install.DefaultBindAddress, "the CCM's secure-port --bind-address (0.0.0.0 to scrape /metrics from other hosts)")
	fs.StringToStringVar(&o.ExtraArgs, flagExtraArgs, nil, "more CCM flags, name=value without dashes (e.g. node-monitor-period=10s); a sizing flag given here replaces the computed value")
	fs.IntVar(&o.ExpectedNodes, flagExpectedNodes, 0, fmt.Sprintf("Nodes the cluster is expected to have: the CCM's workers and API rate limits (--concurrent-node-syncs, --concurrent-node-lifecycle-syncs, --kube-api-qps, --kube-api-burst) are sized for them, docs/install-sizing.md (default: install apply counts the Nodes, at least %d; install manifests %d)", install.DefaultExpectedNodes, install.DefaultExpectedNodes))
	fs.BoolVar(&o.ECRDaemonSet, flagECRDaemonSet, false, "also render the ecr-credential-provider DaemonSet, which copies the kubelet's private ECR credential provider from the CCM image onto every node (docs/ecr-credential-provider.md)")
	fs.BoolVar(&o.Monitoring, flagMonitoring, false, "also render a metrics Service, a prometheus-operator ServiceMonitor and a PrometheusRule with the CCM's alerts, and the scraper's RBAC (needs prometheus-operator's CRDs; the secure port then listens on 0.0.0.0: docs/install-existing-cluster.md#monitoring-with-prometheus)")
	fs.StringVar(&o.ECRDaemonSetBinDir, flagECRDaemonSetBinDir, "", "with --"+flagECRDaemonSet+": the nodes' kubelet --image-credential-provider-bin-dir (default "+ecrcredential.DefaultBinDir+")")
}

// Values merges, in order, the defaults, the --config file and the flags set
// in fs (command line or environment), then defaults and validates the
// result. Every problem is a usage error naming the flag or field.
func (o *ValueOptions) Values(fs *pflag.FlagSet) (install.Values, error) {
	var v install.Values
	if o.ConfigFile != "" {
		data, err := os.ReadFile(o.ConfigFile)
		if err != nil {
			return v, exitcode.UsageError(fmt.Errorf("--%s: %w", flagConfig, err))
		}
		c, err := install.DecodeConfig(data)
		if err == nil {
			err = c.ApplyTo(&v)
		}
		if err != nil {
			return v, exitcode.UsageError(fmt.Errorf("--%s %s: %w", flagConfig, o.ConfigFile, err))
		}
	}
	set := fs.Changed
	setString := func(name string, dst *string, src string) {
		if set(name) {
			*dst = src
		}
	}
	setString(flagImage, &v.Image, o.Image)
	setString(flagNamespace, &v.Namespace, o.Namespace)
	setString(flagClusterName, &v.ClusterName, o.ClusterName)
	setString(flagWorkload, (*string)(&v.Workload), strings.ToLower(o.Workload))
	setString(flagClusterCIDR, &v.ClusterCIDR, o.ClusterCIDR)
	setString(flagCPURequest, &v.CPURequest, o.CPURequest)
	setString(flagMemoryRequest, &v.MemoryRequest, o.MemoryRequest)
	setString(flagBindAddress, &v.BindAddress, o.BindAddress)
	if set(flagCloudConfig) {
		data, err := os.ReadFile(o.CloudConfigFile)
		if err != nil {
			return v, exitcode.UsageError(fmt.Errorf("--%s: %w", flagCloudConfig, err))
		}
		// Parsed only: the ConfigMap keeps the file's values, and the CCM
		// fills its defaults. Validation (with the defaults) comes below.
		cc, err := cloudconfig.Parse(data)
		if err != nil {
			// Every problem, the validation's of the values that did
			// parse included, not only the decoding's.
			return v, exitcode.UsageError(fmt.Errorf("--%s %s: %w", flagCloudConfig, o.CloudConfigFile, cloudconfig.Check(data)))
		}
		v.CloudConfig = cc
	}
	setString(flagRegion, &v.Region, o.Region)
	if set(flagReplicas) {
		v.Replicas = &o.Replicas
	}
	if set(flagConfigureCloudRoutes) {
		v.ConfigureCloudRoutes = o.ConfigureCloudRoutes
	}
	if set(flagAllocateNodeCIDRs) {
		v.AllocateNodeCIDRs = o.AllocateNodeCIDRs
	}
	if set(flagControllers) {
		v.Controllers = o.Controllers
	}
	if set(flagLeaderElect) {
		v.LeaderElect = &o.LeaderElect
	}
	if set(flagVerbosity) {
		v.Verbosity = &o.Verbosity
	}
	if set(flagExtraArgs) {
		v.ExtraArgs = o.ExtraArgs
	}
	if set(flagExpectedNodes) {
		n := o.ExpectedNodes
		v.ExpectedNodes = &n
	}
	if set(flagECRDaemonSet) {
		v.ECRCredentialProvider = o.ECRDaemonSet
	}
	setString(flagECRDaemonSetBinDir, &v.ECRCredentialProviderBinDir, o.ECRDaemonSetBinDir)
	if set(flagMonitoring) {
		v.Monitoring = o.Monitoring
	}
	// An empty value given on purpose is a mistake (an unset variable in a
	// script), not a request for the default, which Default would fill in.
	var problems []string
	for _, f := range []struct{ name, value string }{
		{flagImage, o.Image}, {flagNamespace, o.Namespace}, {flagClusterName, o.ClusterName},
		{flagWorkload, o.Workload}, {flagCPURequest, o.CPURequest}, {flagMemoryRequest, o.MemoryRequest},
		{flagBindAddress, o.BindAddress},
	} {
		if set(f.name) && strings.TrimSpace(f.value) == "" {
			problems = append(problems, fmt.Sprintf("  - --%s: empty; give a value, or leave the flag out for the default", f.name))
		}
	}
	v.Default()
	if err := v.Validate(); err != nil {
		problems = append(problems, describe(err))
	}
	if len(problems) > 0 {
		return v, exitcode.UsageError(fmt.Errorf("invalid install values:\n%s", strings.Join(problems, "\n")))
	}
	return v, nil
}

// describe lists the problems of a joined error one per line, each naming
// the flag that sets its field (install's problems are *fielderr.Error).
func describe(err error) string {
	var b strings.Builder
	for i, e := range fielderr.Problems(err) {
		if i > 0 {
			b.WriteByte('\n')
		}
		msg := e.Error()
		if fe, ok := fielderr.FieldOf(e); ok {
			if flag, ok := fieldFlags[fe.Field]; ok {
				msg = fmt.Sprintf("%s (--%s)%s", fe.Field, flag, fe.Err)
			}
		}
		b.WriteString("  - " + strings.ReplaceAll(msg, "\n", "\n    "))
	}
	return b.String()
}
