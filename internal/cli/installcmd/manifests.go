package installcmd

import (
	"github.com/spf13/cobra"

	"github.com/awsccmctl/awsccmctl/internal/install"
)

// ManifestsOptions are the flags of `install manifests`.
type ManifestsOptions struct {
	ValueOptions
	// OutputDir, when set, receives one file per object instead of stdout.
	OutputDir string
}

func newManifestsCommand(streams Streams) *cobra.Command {
	o := &ManifestsOptions{}
	cmd := &cobra.Command{
		Use:   "manifests",
		Short: "Write the CCM's manifests as YAML, to stdout or one file per object (--output-dir)",
		Long: `manifests renders the objects install would apply, in apply order, as one
multi-document YAML stream on stdout, or with --output-dir as one file per
object named NN-kind-name.yaml (for GitOps). It does not contact the cluster.`,
		Example: `  awsccmctl install manifests --cluster-name prod --region eu-central-1 > ccm.yaml
  awsccmctl install manifests --config install.yaml --output-dir deploy/ccm`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := o.Values(cmd.Flags())
			if err != nil {
				return err
			}
			return install.WriteManifests(v, o.OutputDir, streams.Out, streams.Err)
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&o.OutputDir, "output-dir", "", "write one file per object into this folder instead of stdout")
	return cmd
}
