package migratecmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/migrate"
)

func newStatusCommand(streams Streams) *cobra.Command {
	var journalFile string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Where the migration stands, from the journal in the cluster (or --journal-file)",
		Args:  cobra.NoArgs,
	}
	kube := newClusterFlags(cmd)
	cmd.Flags().StringVar(&journalFile, "journal-file", "", "read this local copy of the journal instead of the cluster's")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		format, err := streams.Output()
		if err != nil {
			return err
		}
		var j *migrate.Journal
		if journalFile != "" {
			if j, err = migrate.ReadLocal(journalFile); err != nil {
				return exitcode.UsageError(fmt.Errorf("--journal-file: %w", err))
			}
		} else {
			_, client, err := kube.clients()
			if err != nil {
				return err
			}
			j, err = (&migrate.Store{Client: client}).Load(cmd.Context())
			if errors.Is(err, migrate.ErrNoJournal) {
				return &exitcode.Error{Code: exitcode.Failed, Err: err}
			}
			if err != nil {
				return &exitcode.Error{Code: exitcode.Unreachable, Err: err}
			}
		}
		st := migrate.StatusOf(j)
		if format == "json" {
			enc := json.NewEncoder(streams.Out)
			enc.SetIndent("", "  ")
			return enc.Encode(st)
		}
		state := "in progress at " + st.Current
		if st.Done {
			state = "done"
		}
		fmt.Fprintf(streams.Out, "migration %s (%s): %s\n", st.Plan, st.Mode, state)
		if st.Holder != nil {
			fmt.Fprintf(streams.Out, "held by %s (pid %d on %s), last heartbeat %s\n", st.Holder.Command, st.Holder.PID, st.Holder.Host, st.Holder.Heartbeat.UTC().Format(time.RFC3339))
		}
		tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "STEP\tSTATE\tFINISHED\tMESSAGE")
		for _, s := range st.Steps {
			fin := ""
			if s.Finished != nil {
				fin = s.Finished.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, s.State, fin, strings.ReplaceAll(s.Message, "\n", " "))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if h := st.Handover; h != nil {
			fmt.Fprintf(streams.Out, "hand-over: the CCM took the migration lease %s after kube-controller-manager's last renewal\n", h.Gap.Round(10*time.Millisecond))
		}
		return nil
	}
	return cmd
}
