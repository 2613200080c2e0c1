package migratecmd

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/cli/termstatus"
	"github.com/awsccmctl/awsccmctl/internal/migrate"
)

type runOptions struct {
	Plan        string
	Approve     bool
	Until       string
	To          string
	JournalFile string
	Takeover    bool
	Poll        time.Duration
	// NodeRunner, NodeImage and MaxUnavailable: --node-runner=pods runs
	// the node steps as Pods.
	NodeRunner     string
	NodeImage      string
	MaxUnavailable string
}

// Node runners.
const (
	nodeRunnerOperator = "operator"
	nodeRunnerPods     = "pods"
)

// NodeRunners are the --node-runner values (for completion).
var NodeRunners = []string{nodeRunnerOperator, nodeRunnerPods}

// newApplyCommand returns apply, or resume when resume is true: the same
// run, but resume needs an existing journal and may take over a dead run's
// hold.
func newApplyCommand(streams Streams, resume bool) *cobra.Command {
	o := &runOptions{Poll: time.Second}
	use, short := "apply", "Run the plan's steps in order, stopping at each gate"
	if resume {
		use, short = "resume", "Continue a migration after a crash or a stop (every step is idempotent)"
	}
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs}
	kube := newClusterFlags(cmd)
	o.addFlags(cmd)
	cmd.Flags().StringVar(&o.Until, "until", "", "stop after this step")
	if resume {
		cmd.Flags().BoolVar(&o.Takeover, "takeover", false, "take the migration over from a run that still holds it (only when that run is gone)")
	}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		r, err := o.runner(kube, streams, use)
		if err != nil {
			return err
		}
		defer closeLive(r)
		ctx := cmd.Context()
		if resume {
			if _, err := r.Store.Load(ctx); err != nil {
				return runError(ctx, fmt.Errorf("resume: %w; start with `migrate-from-intree apply`", err))
			}
			// A run that died holding the journal on this machine is gone:
			// no need to wait for its heartbeat to go stale.
			r.Takeover = o.Takeover || r.Store.HolderDeadOn(ctx, r.Holder.Host)
		}
		return runError(ctx, r.Apply(ctx, o.Until))
	}
	return cmd
}

func newRollbackCommand(streams Streams) *cobra.Command {
	o := &runOptions{Poll: time.Second}
	cmd := &cobra.Command{
		Use:   "rollback",
		Short: "Undo completed steps, newest first, back to the in-tree provider (or to --to STEP)",
		Args:  cobra.NoArgs,
	}
	kube := newClusterFlags(cmd)
	o.addFlags(cmd)
	cmd.Flags().StringVar(&o.To, "to", "", "undo the steps after this one (default: every step)")
	cmd.Flags().BoolVar(&o.Takeover, "takeover", false, "take the migration over from a run that still holds it")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		r, err := o.runner(kube, streams, "rollback")
		if err != nil {
			return err
		}
		defer closeLive(r)
		ctx := cmd.Context()
		r.Takeover = o.Takeover || r.Store.HolderDeadOn(ctx, r.Holder.Host)
		return runError(ctx, r.Rollback(ctx, o.To))
	}
	return cmd
}

func (o *runOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Plan, "plan", "", "the plan file `migrate-from-intree plan` wrote")
	f.BoolVar(&o.Approve, "approve", false, "run every step without asking (without it, each step that changes something is asked for on the terminal)")
	f.StringVar(&o.JournalFile, "journal-file", "", "local copy of the journal (default: beside the plan, <plan>.journal.json)")
	f.DurationVar(&o.Poll, "poll-interval", o.Poll, "how often the gates look")
	f.StringVar(&o.NodeRunner, "node-runner", nodeRunnerOperator, "who runs the node steps: operator (you run `migrate-from-intree node` on each node; apply waits for its report) or pods (apply runs it on each node as a privileged Pod with the host's file system, PID and network, and deletes the Pods once the step passed; see docs/migrate-from-intree.md)")
	f.StringVar(&o.NodeImage, "node-image", "", "with --node-runner=pods: the image holding awsccmctl at "+migrate.NodePodBinary+" (default: the plan's CCM image)")
	f.StringVar(&o.MaxUnavailable, "max-unavailable", "1", "with --node-runner=pods: how many nodes of a kubelet step run their Pod (and restart their kubelet) at once, a number or a percentage of the step's nodes; control-plane steps run one node at a time")
}

// nodePods is the --node-runner=pods options (nil for the operator).
func (o *runOptions) nodePods(p *migrate.MigrationPlan) (*migrate.NodePods, error) {
	switch o.NodeRunner {
	case nodeRunnerOperator, "":
		if o.NodeImage != "" {
			return nil, exitcode.UsageError(errors.New("--node-image goes with --node-runner=pods"))
		}
		return nil, nil
	case nodeRunnerPods:
	default:
		return nil, exitcode.UsageError(fmt.Errorf("--node-runner %q: want %s or %s", o.NodeRunner, nodeRunnerOperator, nodeRunnerPods))
	}
	np := &migrate.NodePods{Image: o.NodeImage, MaxUnavailable: intstr.Parse(o.MaxUnavailable)}
	if np.Image == "" {
		v, err := p.Values()
		if err != nil {
			return nil, err
		}
		v.Default()
		np.Image = v.Image
	}
	if err := np.Validate(); err != nil {
		return nil, exitcode.UsageError(err)
	}
	return np, nil
}

// closeLive leaves a step's status line on the terminal as it stands when
// the run ends during the wait.
func closeLive(r *migrate.Runner) {
	if live, ok := r.Out.(*termstatus.Line); ok {
		live.Close()
	}
}

// runner builds the Runner. The command's context ends on SIGINT/SIGTERM
// (cmd/awsccmctl), which stops the run at once.
func (o *runOptions) runner(kube *clusterFlags, streams Streams, command string) (*migrate.Runner, error) {
	p, err := readPlan(o.Plan)
	if err != nil {
		return nil, err
	}
	if !o.Approve && (streams.IsTerminal == nil || !streams.IsTerminal()) {
		return nil, exitcode.UsageError(errors.New("without --approve every step that changes something is asked for on a terminal, and there is none: pass --approve"))
	}
	nodePods, err := o.nodePods(p)
	if err != nil {
		return nil, err
	}
	cfg, client, err := kube.clients()
	if err != nil {
		return nil, err
	}
	applier, err := newApplier(cfg)
	if err != nil {
		return nil, exitcode.UsageError(err)
	}
	// On a terminal each step's wait is one line that updates in place.
	out := streams.Err
	if live := termstatus.ForTerminal(streams.Err, os.Getenv); live != nil {
		out = live
	}
	r := &migrate.Runner{
		Client: client, Applier: applier, Plan: p, Out: out, Poll: o.Poll,
		Store:  &migrate.Store{Client: client, LocalPath: journalPath(o.Plan, o.JournalFile)},
		Holder: holder(command), NodePods: nodePods,
		NodeCommand: func(phase, scope string) string {
			if scope != "" {
				phase += " --scope " + scope
			}
			return fmt.Sprintf("awsccmctl migrate-from-intree node --phase %s --kubeconfig <kubeconfig>", phase)
		},
	}
	if !o.Approve {
		in := bufio.NewReader(streams.In)
		r.Approve = func(s *migrate.Step, undo bool) (bool, error) {
			what := s.Action
			verb := "run"
			if undo {
				what, verb = s.Undo, "undo"
			}
			fmt.Fprintf(streams.Err, "%s step %s?\n  %s\n[y/N] ", verb, s.Name, what)
			line, err := in.ReadString('\n')
			if err != nil && line == "" {
				return false, fmt.Errorf("read the answer: %w", err)
			}
			a := strings.ToLower(strings.TrimSpace(line))
			return a == "y" || a == "yes", nil
		}
	}
	return r, nil
}
