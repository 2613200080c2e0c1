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
		Long: `uninstall removes the install recorded in the ConfigMap awsccmctl-install of
the CCM's namespace (install apply writes it: every object it applied, and
whether it created it or found it there). It deletes, workload first and RBAC
last, the objects the install created, and keeps those that existed before
it (adopted), removing the fields only the install set on them (an empty
server-side apply with the install's field manager; the owner's fields stay);
then it deletes the record. Give it the same values (--config,
--namespace, --workload) as the install: when they do not match the recorded
install (no install recorded in --namespace, or objects it does not hold) it
refuses, changes nothing and exits 8. An object already gone is reported and
skipped. --dry-run=server asks the API server to run each deletion without
doing it.`,
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
			format, err := streams.outputFormat()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			r, err := deploy.Uninstall(ctx, clients, objs, o.DryRun, streams.Err)
			if err != nil {
				return applyError(ctx, err)
			}
			return writeReport(streams, format, reportDocument{Report: r})
		},
	}
	o.addFlags(cmd)
	return cmd
}
