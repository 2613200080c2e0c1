package installcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
)

func newUninstallCommand(streams Streams) *cobra.Command {
	o := &ClusterOptions{}
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove exactly what install created",
		Long: `uninstall deletes the objects install apply created, workload first, RBAC
last. Give it the same values (--config, --namespace, --workload) as the
install. An object of the same name that does not carry the label
app.kubernetes.io/managed-by=awsccmctl was not created by install and is left
alone; one already gone is reported and skipped. --dry-run=server asks the
API server to run each deletion without doing it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, cfg, err := o.prepare(cmd)
			if err != nil {
				return err
			}
			objs, err := render(v)
			if err != nil {
				return err
			}
			return Uninstall(cmd.Context(), cfg, objs, o.DryRun, streams)
		},
	}
	o.addFlags(cmd)
	return cmd
}

// Uninstall deletes objs (in reverse order) and reports each.
func Uninstall(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured, dryRun string, streams Streams) error {
	if ctx == nil {
		ctx = context.Background()
	}
	client, err := apply.NewClient(cfg)
	if err != nil {
		return exitcode.UsageError(fmt.Errorf("kubeconfig: %w", err))
	}
	fmt.Fprintf(streams.Err, "removing %d objects\n", len(objs))
	results, err := client.Uninstall(ctx, objs, apply.Options{DryRun: dryRun, Progress: streams.Err})
	if err != nil {
		return clusterError(err)
	}
	return writeReport(streams, ApplyReport{DryRun: dryRun, Objects: results})
}
