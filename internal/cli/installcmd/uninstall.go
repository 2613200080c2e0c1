package installcmd

import (
	"github.com/spf13/cobra"

	"github.com/awsccmctl/awsccmctl/internal/install/deploy"
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
			v, clients, err := o.prepare(cmd)
			if err != nil {
				return err
			}
			objs, err := render(v)
			if err != nil {
				return err
			}
			r, err := deploy.Uninstall(cmd.Context(), clients, objs, o.DryRun, streams.Err)
			if err != nil {
				return clusterError(err)
			}
			return writeReport(streams, r)
		},
	}
	o.addFlags(cmd)
	return cmd
}
