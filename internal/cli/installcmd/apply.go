package installcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/cli/termstatus"
	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
	"github.com/awsccmctl/awsccmctl/internal/install/deploy"
	"github.com/awsccmctl/awsccmctl/internal/install/detect"
)

// ClusterOptions are the flags of the commands that talk to the cluster.
type ClusterOptions struct {
	ValueOptions
	// Kube builds the client (kubectl's kubeconfig flags; --namespace is
	// install's own, the CCM's namespace).
	Kube *genericclioptions.ConfigFlags
	// DryRun is "", client or server.
	DryRun string
}

func (o *ClusterOptions) addFlags(cmd *cobra.Command) {
	o.AddFlags(cmd.Flags())
	o.Kube = genericclioptions.NewConfigFlags(true)
	o.Kube.Namespace = nil // --namespace is the CCM's namespace (ValueOptions)
	o.Kube.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&o.DryRun, "dry-run", "", "client: print what would be done without sending anything that writes; server: the API server runs every write (validation, admission) and persists nothing")
}

// prepare reads the values and the kubeconfig and builds the clients.
func (o *ClusterOptions) prepare(cmd *cobra.Command) (install.Values, deploy.Clients, error) {
	if o.DryRun != apply.DryRunNone && o.DryRun != apply.DryRunClient && o.DryRun != apply.DryRunServer {
		return install.Values{}, deploy.Clients{}, exitcode.UsageError(fmt.Errorf("--dry-run %q: want client or server", o.DryRun))
	}
	v, err := o.Values(cmd.Flags())
	if err != nil {
		return v, deploy.Clients{}, err
	}
	cfg, err := o.Kube.ToRESTConfig()
	if err != nil {
		return v, deploy.Clients{}, exitcode.UsageError(fmt.Errorf("kubeconfig: %w", err))
	}
	clients, err := deploy.NewClients(cfg)
	if err != nil {
		return v, deploy.Clients{}, exitcode.UsageError(fmt.Errorf("kubeconfig: %w", err))
	}
	return v, clients, nil
}

// render validates v (again: detection may have filled it) and renders it
// into the objects to apply.
func render(v install.Values) ([]*unstructured.Unstructured, error) {
	if err := v.Validate(); err != nil {
		return nil, exitcode.UsageError(fmt.Errorf("invalid install values:\n%s", describe(err)))
	}
	objs, err := deploy.Objects(v)
	if re := (*deploy.RenderError)(nil); errors.As(err, &re) {
		return nil, exitcode.UsageError(err)
	}
	return objs, err
}

// ApplyOptions are the flags of `install apply`.
type ApplyOptions struct {
	ClusterOptions
	Diff     bool
	Force    bool
	Wait     bool
	Timeout  time.Duration
	NoDetect bool
}

func newApplyCommand(streams Streams) *cobra.Command {
	o := &ApplyOptions{}
	cmd := &cobra.Command{
		Use:   "apply",
		Short: "Apply the CCM's manifests to the cluster with server-side apply; safe to re-run",
		Long: `apply renders the manifests (as install manifests does) and applies them with
server-side apply (field manager awsccmctl), one progress line per object on
stderr. Re-running it changes only what differs. A field someone changed by
hand (kubectl edit) is a conflict, reported with its manager; --force-conflicts
takes it over.

--diff prints what would change, object by object, as the API server would
apply it (without what the server and controllers write: managedFields,
resourceVersion, uid, generation, status and the like); with a dry run it
exits 1 when there are differences and 0 when there are none, as kubectl diff
does. --dry-run=server sends every write with dryRun=All (validation and
admission run, nothing is stored); --dry-run=client sends no write at all.
--wait then waits for the DaemonSet or Deployment to roll out, for one of its
Pods to hold the CCM's Lease (in the namespace the CCM was rendered with;
with --leader-elect=false, for its Pods to be Ready instead), and for every
Node to be initialised (providerID set, no uninitialized taint), and ends with
the post-install checks of preflight. Ctrl-C stops it: "interrupted", exit 130.
On a terminal each wait is one line that updates in place (what it waits for,
the time elapsed, its state), replaced by its result; through a pipe, with
TERM=dumb or with -o json it prints a line each time the state changes.

apply records the install in the ConfigMap awsccmctl-install of its namespace
(the objects it created, and those it found there: adopted, which never get
the app.kubernetes.io/managed-by label), which uninstall removes exactly.
Whatever would run a second CCM is refused, nothing changed, exit 8: another
--workload than the recorded install's (to switch, uninstall first), a
DaemonSet or Deployment of the CCM's name of the other kind that no install
records, or a second install in another namespace.`,
		Example: `  awsccmctl install apply --cluster-name prod --region eu-central-1 --diff --dry-run=server
  awsccmctl install apply --config install.yaml --wait`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, clients, err := o.prepare(cmd)
			if err != nil {
				return err
			}
			if !o.NoDetect {
				if err := detect.New(clients.Kube, v.CloudConfig, streams.Err).Detect(cmd.Context(), &v); err != nil {
					return clusterError(err)
				}
			}
			// Not a value to detect but what the cluster allows: also
			// with --no-detect.
			v.Default()
			if err := deploy.KeepUpstreamSelector(cmd.Context(), clients.Kube, &v, streams.Err); err != nil {
				return clusterError(err)
			}
			objs, err := render(v)
			if err != nil {
				return err
			}
			format, err := streams.outputFormat()
			if err != nil {
				return err
			}
			// With -o json the diff goes into the document: stdout
			// holds that one document and nothing else.
			var diff bytes.Buffer
			diffOut := streams.Out
			if format == formatJSON {
				diffOut = &diff
			}
			ctx := cmd.Context()
			progress := streams.Err
			// On a terminal (and not -o json, which a program reads) each
			// wait is one line that updates in place.
			if live := termstatus.ForTerminal(streams.Err, os.Getenv); live != nil && o.Wait && format != formatJSON {
				defer live.Close()
				progress = live
			}
			r, err := deploy.Apply(ctx, clients, objs, deploy.ApplyOptions{
				DryRun: o.DryRun, Force: o.Force, Diff: o.Diff, Out: diffOut, Wait: o.Wait, Timeout: o.Timeout,
				Progress: progress, Applied: func(r deploy.Report) error {
					return writeReport(streams, format, reportDocument{Report: r, Diff: diff.String()})
				},
			})
			if err != nil {
				return applyError(ctx, err)
			}
			return diffExit(o.DryRun, r)
		},
	}
	o.addFlags(cmd)
	f := cmd.Flags()
	f.BoolVar(&o.Diff, "diff", false, "print a unified diff of the live objects against what apply makes of them, before applying")
	f.BoolVar(&o.Force, "force-conflicts", false, "take over fields another field manager owns")
	f.BoolVar(&o.Wait, "wait", false, "wait for the rollout, the CCM's Lease held by one of its Pods (or its Pods Ready, without leader election) and initialised Nodes, then run the post-install checks")
	f.DurationVar(&o.Timeout, "timeout", deploy.DefaultWaitTimeout, "how long --wait waits for each step")
	f.BoolVar(&o.NoDetect, "no-detect", false, "do not fill the expected Node count, region and cluster ID from the Nodes and their instances' tags")
	return cmd
}

// reportDocument is the -o json document of install apply and uninstall.
type reportDocument struct {
	deploy.Report
	// Diff is apply --diff's unified diff ("no differences" when none).
	Diff string `json:"diff,omitempty"`
}

// outputFormat is the -o value: text or json.
func (s Streams) outputFormat() (string, error) {
	if s.Output == nil {
		return formatText, nil
	}
	return s.Output()
}

// writeReport prints the results: -o json as a reportDocument, text as its
// summary line (the progress lines on stderr already named each object, and
// the diff was printed before applying).
func writeReport(streams Streams, format string, r reportDocument) error {
	if format == formatJSON {
		enc := json.NewEncoder(streams.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	_, err := fmt.Fprintln(streams.Out, r.Summary())
	return err
}

// diffExit is kubectl diff's convention for --diff with a dry run: exit 1
// when the live objects differ from what the apply would make of them, so
// that a script can tell "up to date" from "would change". An apply that
// was not a dry run made them equal and exits 0.
func diffExit(dryRun string, r deploy.Report) error {
	if dryRun == apply.DryRunNone || r.Differences == nil || !*r.Differences {
		return nil
	}
	return &exitcode.Error{Code: exitcode.Failed, Err: errors.New("the live objects differ from what install apply would make of them (--diff with --dry-run exits 1, as kubectl diff does)")}
}

// applyError gives deploy.Apply's and Uninstall's errors their exit codes:
// interrupted (ctx cancelled) is 130, values that do not match the
// recorded install 8, the CCM not taking over in time (or failed
// post-install checks) and kinds the cluster does not serve (no
// prometheus-operator CRDs for --monitoring) 1.
func applyError(ctx context.Context, err error) error {
	var (
		we *deploy.WaitError
		me *deploy.MismatchError
		ue *deploy.UnservedError
	)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		return &exitcode.Error{Code: exitcode.Interrupted, Err: errors.New("interrupted")}
	case errors.As(err, &me):
		return &exitcode.Error{Code: exitcode.Mismatch, Err: err}
	case errors.As(err, &we), errors.As(err, &ue):
		return &exitcode.Error{Code: exitcode.Failed, Err: err}
	}
	return clusterError(err)
}

// clusterError marks errors reaching the cluster as exit code 3.
func clusterError(err error) error {
	var ue *url.Error
	var oe *net.OpError
	if errors.As(err, &ue) || errors.As(err, &oe) {
		return &exitcode.Error{Code: exitcode.Unreachable, Err: err}
	}
	return err
}
