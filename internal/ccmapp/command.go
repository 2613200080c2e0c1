package ccmapp

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/app"
	cloudcontrollerconfig "k8s.io/cloud-provider/app/config"
	"k8s.io/cloud-provider/options"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/instances"
	"github.com/awsccmctl/awsccmctl/internal/routes"
	"github.com/awsccmctl/awsccmctl/internal/tagging"
	"github.com/awsccmctl/awsccmctl/internal/topology"
	"github.com/awsccmctl/awsccmctl/pkg/awscloud"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

// Options customise the command for tests.
type Options struct {
	// Stop ends the controllers; nil runs until the process exits.
	Stop <-chan struct{}
	// OnCloudError is called when the provider cannot start. The default
	// prints the error and exits 1: the library's initializer cannot return
	// an error, and a CCM without a cloud must not run.
	OnCloudError func(error)
	// Registerer receives the AWS API metrics (default: the legacy registry
	// served on /metrics).
	Registerer awsapi.Registerer
	// Ready is called with the provider once it is built.
	Ready func(*awsapi.Metrics, *awscloud.Cloud)
	// HandleSignals stops the CCM on SIGTERM or SIGINT and releases the
	// leader Leases it holds before the command returns (shutdown.go). The
	// binary sets it; a test process keeps its own signals.
	HandleSignals bool
}

// legacyRegisterer adapts the component-base legacy registry.
type legacyRegisterer struct{}

func (legacyRegisterer) MustRegister(cs ...metrics.Registerable) { legacyregistry.MustRegister(cs...) }

// NewCommand returns the aws-cloud-controller-manager command.
func NewCommand(o Options) (*cobra.Command, error) {
	ccmOptions, err := options.NewCloudControllerManagerOptions()
	if err != nil {
		return nil, fmt.Errorf("build controller-manager options: %w", err)
	}
	// Default the provider name so --cloud-provider may be left out, as
	// upstream allows; any other name is refused in the initializer.
	ccmOptions.KubeCloudShared.CloudProvider.Name = awscloud.ProviderName

	flags := awscloud.NewFlags()
	fss := cliflag.NamedFlagSets{}
	flags.AddFlags(fss.FlagSet("aws"))
	taggingOptions := tagging.NewOptions()
	taggingOptions.AddFlags(fss.FlagSet("tagging controller"))

	if o.OnCloudError == nil {
		o.OnCloudError = func(err error) {
			fmt.Fprintf(os.Stderr, "aws-cloud-controller-manager: cannot start the AWS cloud provider:\n%v\n", err)
			klog.FlushAndExit(klog.ExitFlushTimeout, 1)
		}
	}
	if o.Registerer == nil {
		o.Registerer = legacyRegisterer{}
	}
	stop := o.Stop
	var stopOwn chan struct{}
	if stop == nil {
		stopOwn = make(chan struct{})
		stop = stopOwn
	}
	// held is what the leader election takes, known once the configuration
	// is complete (in the initializer).
	var held *leaderLeases
	var cloud *awscloud.Cloud
	initializer := func(c *cloudcontrollerconfig.CompletedConfig) cloudprovider.Interface {
		shared := c.ComponentConfig.KubeCloudShared.CloudProvider
		if shared.Name != awscloud.ProviderName {
			o.OnCloudError(fmt.Errorf("--cloud-provider=%q: this binary only serves %q", shared.Name, awscloud.ProviderName))
			return nil
		}
		// The cloud config is read before the flags are judged, and every
		// problem is reported at once, the file's first: a missing or
		// broken --cloud-config reported only after a fixed --cluster-cidr
		// costs the operator a second failed start.
		var problems []error
		if _, err := cloudconfig.Load(shared.CloudConfigFile); err != nil {
			problems = append(problems, err)
		}
		if err := flags.Validate(); err != nil {
			problems = append(problems, err)
		}
		if _, err := routes.ParseClusterCIDRs(c.ComponentConfig.KubeCloudShared.ClusterCIDR); err != nil {
			problems = append(problems, err)
		}
		if err := checkRouteFlags(c); err != nil {
			problems = append(problems, err)
		}
		if len(problems) > 0 {
			o.OnCloudError(errors.Join(problems...))
			return nil
		}
		configureControllers(c)
		held = leaderLeasesOf(c)
		m := awsapi.NewMetrics(o.Registerer)
		var err error
		cloud, err = awscloud.New(context.Background(), awscloud.Config{
			CloudConfigPath: shared.CloudConfigFile, Flags: flags, Metrics: m, ViewMetrics: instances.NewMetrics(o.Registerer),
			RouteMetrics:    routes.NewMetrics(o.Registerer),
			TopologyMetrics: topology.NewMetrics(o.Registerer),
			TaggingTags:     taggingTags(taggingOptions, c.ComponentConfig.Generic.Controllers),
			ClusterCIDR:     c.ComponentConfig.KubeCloudShared.ClusterCIDR,
			ClusterName:     c.ComponentConfig.KubeCloudShared.ClusterName,
		})
		if err != nil {
			o.OnCloudError(err)
			return nil
		}
		if o.Ready != nil {
			o.Ready(m, cloud)
		}
		return cloud
	}
	cmd := app.NewCloudControllerManagerCommand(ccmOptions, initializer, controllerConstructors(taggingOptions, o.Registerer), controllerAliases(), fss, stop)
	// The tagging controller's flags are checked before anything starts,
	// so a bad --tags fails the command with every problem listed.
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := taggingOptions.Validate(taggingEnabled(ccmOptions.Generic.Controllers)); err != nil {
			return err
		}
		if o.HandleSignals && stopOwn != nil {
			stopOnSignal(stopOwn)
		}
		err := run(cmd, args)
		// Run returns once stop is closed (or serving failed): release
		// what this process led before it exits. Only the binary does:
		// tests run several CCMs in one process, on one host name.
		// Only a process that led: one that failed before it (another
		// CCM on this host holds the secure port) must not clear that
		// CCM's Lease, whose holder has the same host name.
		if o.HandleSignals && held != nil && cloud != nil && cloud.Led() {
			held.release()
		}
		return err
	}
	cmd.Use = "aws-cloud-controller-manager"
	cmd.Long = `aws-cloud-controller-manager runs the Kubernetes cloud controllers for AWS:
it initializes Nodes (providerID, addresses, zone and instance-type labels),
removes Nodes whose instances are gone, and taints stopped ones.`
	return cmd, nil
}
