package installcmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/kopsconfig"
)

// flagName is the kops cluster name of `install kops`.
const flagName = "name"

// KopsOptions are the flags of `install kops`.
type KopsOptions struct {
	Name, Image, ClusterCIDR                string
	ConfigureCloudRoutes, AllocateNodeCIDRs bool
}

func newKopsCommand(streams Streams) *cobra.Command {
	o := &KopsOptions{}
	cmd := &cobra.Command{
		Use:   "kops",
		Short: "Print the kops cluster-spec snippet and commands that run this CCM",
		Long: `kops prints how to make a kops cluster run this cloud controller manager. kops
runs the CCM itself, as its aws-cloud-controller addon configured by
spec.cloudControllerManager of the Cluster; never apply install manifests to a
kops cluster, or two CCMs fight over the Nodes.

Output, all on stdout: the spec.cloudControllerManager snippet (YAML, to merge
with kops edit cluster), then the line "` + kopsconfig.CommandsMarker + `", then the kops
commands that make the same change, one shell command per line. To keep one part:

  awsccmctl install kops --name c.example.com | sed '/^` + kopsconfig.CommandsMarker + `$/,$d'   # snippet
  awsccmctl install kops --name c.example.com | sed '1,/^` + kopsconfig.CommandsMarker + `$/d'   # commands

--configure-cloud-routes and --allocate-node-cidrs are written only when given,
so kops keeps choosing them (from the networking) otherwise. It does not contact
the cluster or the kops state store.

-o json prints both as one JSON object instead: {"cluster": {"spec": ...},
"commands": ["kops edit cluster ...", ...]}.`,
		Example: `  awsccmctl install kops --name prod.k8s.example.com
  awsccmctl install kops --name prod.k8s.example.com --configure-cloud-routes --cluster-cidr 100.96.0.0/11`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := streams.format("kops", "the snippet and commands (text) or them as one JSON object (json)", formatText, formatJSON)
			if err != nil {
				return err
			}
			opts, err := o.Complete(cmd.Flags().Changed)
			if err != nil {
				return err
			}
			return writeKops(opts, format, streams)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Name, flagName, "", "the kops cluster name, as kops get clusters lists it (required)")
	fs.StringVar(&o.Image, flagImage, install.DefaultImage(), "CCM image, with a tag or digest")
	fs.BoolVar(&o.ConfigureCloudRoutes, flagConfigureCloudRoutes, false, "set spec.cloudControllerManager.configureCloudRoutes (needs --cluster-cidr when true)")
	fs.BoolVar(&o.AllocateNodeCIDRs, flagAllocateNodeCIDRs, false, "set spec.cloudControllerManager.allocateNodeCIDRs (kops passes it to the CCM, which ignores it: node CIDRs come from kube-controller-manager, spec.kubeControllerManager.allocateNodeCIDRs)")
	fs.StringVar(&o.ClusterCIDR, flagClusterCIDR, "", "set spec.cloudControllerManager.clusterCIDR, the pod CIDR")
	return cmd
}

// kopsFields maps kopsconfig's fields (and install's image) to flags.
var kopsFields = flagOfField{
	kopsconfig.FieldClusterName:          flagName,
	"image":                              flagImage,
	kopsconfig.FieldClusterCIDR:          flagClusterCIDR,
	kopsconfig.FieldConfigureCloudRoutes: flagConfigureCloudRoutes,
}

// Complete turns the flags into kopsconfig.Options (the booleans only when
// set) and validates them; every problem is a usage error naming its flag.
func (o *KopsOptions) Complete(changed func(string) bool) (kopsconfig.Options, error) {
	opts := kopsconfig.Options{ClusterName: o.Name, Image: o.Image, ClusterCIDR: o.ClusterCIDR}
	if changed(flagConfigureCloudRoutes) {
		v := o.ConfigureCloudRoutes
		opts.ConfigureCloudRoutes = &v
	}
	if changed(flagAllocateNodeCIDRs) {
		v := o.AllocateNodeCIDRs
		opts.AllocateNodeCIDRs = &v
	}
	err := opts.Validate()
	if err == nil {
		return opts, nil
	}
	return opts, exitcode.UsageError(fmt.Errorf("invalid kops options:\n%s", listProblems(err, kopsFields)))
}

// writeKops prints the snippet and the commands: kopsconfig.Output.Text,
// or with -o json Output.JSON.
func writeKops(opts kopsconfig.Options, format string, streams Streams) error {
	out, err := kopsconfig.Render(opts)
	if err != nil {
		return err
	}
	b := out.Text()
	if format == formatJSON {
		if b, err = out.JSON(); err != nil {
			return err
		}
	}
	_, err = streams.Out.Write(b)
	return err
}
