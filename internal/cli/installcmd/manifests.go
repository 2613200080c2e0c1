package installcmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/install"
)

// flagOutputDir is the folder of `install manifests`.
const flagOutputDir = "output-dir"

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
object named NN-kind-name.yaml (for GitOps). -o json prints them as one JSON
object instead, a v1 List (not with --output-dir). It does not contact the
cluster.`,
		Example: `  awsccmctl install manifests --cluster-name prod --region eu-central-1 > ccm.yaml
  awsccmctl install manifests --config install.yaml --output-dir deploy/ccm`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := streams.format("manifests", "a YAML stream (text) or a JSON List (json)", formatText, formatJSON)
			if err != nil {
				return err
			}
			if format == formatJSON && o.OutputDir != "" {
				return exitcode.UsageError(fmt.Errorf("--output json writes one List to stdout; it cannot be combined with --%s (files are YAML)", flagOutputDir))
			}
			v, err := o.Values(cmd.Flags())
			if err != nil {
				return err
			}
			if format == formatJSON {
				b, err := install.RenderList(v)
				if err != nil {
					return err
				}
				_, err = streams.Out.Write(b)
				return err
			}
			return install.WriteManifests(v, o.OutputDir, streams.Out, streams.Err)
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&o.OutputDir, flagOutputDir, "", "write one file per object into this folder instead of stdout")
	return cmd
}
