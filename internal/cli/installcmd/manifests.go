package installcmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/version"
)

// Flags of `install manifests`.
const (
	flagOutputDir = "output-dir"
	flagFormat    = "format"
)

// The --format values of `install manifests`.
const (
	manifestsFormatYAML       = "yaml"
	manifestsFormatHelmValues = "helm-values"
)

// ManifestsFormats are the values --format takes (shell completion lists them).
func ManifestsFormats() []string { return []string{manifestsFormatYAML, manifestsFormatHelmValues} }

// ManifestsOptions are the flags of `install manifests`.
type ManifestsOptions struct {
	ValueOptions
	// OutputDir, when set, receives one file per object instead of stdout.
	OutputDir string
	// Format is yaml (the objects) or helm-values (the chart's values file
	// that renders the same objects).
	Format string
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
cluster.

--format helm-values prints instead the values file of the Helm chart
(charts/aws-cloud-controller-manager) that renders the same objects, for a
move from the CLI to Helm or GitOps (docs/helm.md).`,
		Example: `  awsccmctl install manifests --cluster-name prod --region eu-central-1 > ccm.yaml
  awsccmctl install manifests --config install.yaml --output-dir deploy/ccm
  awsccmctl install manifests --config install.yaml --format helm-values > values.yaml`,
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
			switch o.Format {
			case manifestsFormatYAML:
			case manifestsFormatHelmValues:
				if format == formatJSON || o.OutputDir != "" {
					return exitcode.UsageError(fmt.Errorf("--%s=%s writes one YAML values file to stdout; it cannot be combined with -o json or --%s", flagFormat, o.Format, flagOutputDir))
				}
				return writeHelmValues(v, streams)
			default:
				return exitcode.UsageError(fmt.Errorf("--%s %q: want %s", flagFormat, o.Format, strings.Join(ManifestsFormats(), " or ")))
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
	cmd.Flags().StringVar(&o.Format, flagFormat, manifestsFormatYAML, "yaml (the objects) or helm-values (the Helm chart's values file that renders the same objects)")
	return cmd
}

// writeHelmValues prints the chart's values for v.
func writeHelmValues(v install.Values, streams Streams) error {
	c, err := install.HelmValues(v)
	if err != nil {
		return err
	}
	b, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	fmt.Fprintf(streams.Out, "# Values of the aws-cloud-controller-manager Helm chart, %s's, that render\n# what `awsccmctl install manifests` renders with the same flags.\n", version.Get().Version)
	_, err = streams.Out.Write(b)
	return err
}
