package installcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
)

// DefaultWaitTimeout bounds --wait.
const DefaultWaitTimeout = 5 * time.Minute

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

// prepare reads the values and the kubeconfig.
func (o *ClusterOptions) prepare(cmd *cobra.Command) (install.Values, *rest.Config, error) {
	if o.DryRun != apply.DryRunNone && o.DryRun != apply.DryRunClient && o.DryRun != apply.DryRunServer {
		return install.Values{}, nil, exitcode.UsageError(fmt.Errorf("--dry-run %q: want client or server", o.DryRun))
	}
	v, err := o.Values(cmd.Flags())
	if err != nil {
		return v, nil, err
	}
	cfg, err := o.Kube.ToRESTConfig()
	if err != nil {
		return v, nil, exitcode.UsageError(fmt.Errorf("kubeconfig: %w", err))
	}
	return v, cfg, nil
}

// render renders v into objects to apply.
func render(v install.Values) ([]*unstructured.Unstructured, error) {
	if err := v.Validate(); err != nil {
		return nil, exitcode.UsageError(fmt.Errorf("invalid install values:\n%s", describe(err)))
	}
	stream, err := install.Render(v)
	if err != nil {
		return nil, exitcode.UsageError(err)
	}
	objs, err := apply.Decode(stream)
	if err != nil {
		return nil, fmt.Errorf("decode the rendered manifests: %w", err)
	}
	return objs, nil
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
apply it. --dry-run=server sends every write with dryRun=All (validation and
admission run, nothing is stored); --dry-run=client sends no write at all.
--wait then waits for the DaemonSet or Deployment to roll out, for the CCM to
hold its Lease, and for every Node to be initialised (providerID set, no
uninitialized taint), and ends with the post-install checks of preflight.`,
		Example: `  awsccmctl install apply --cluster-name prod --region eu-central-1 --diff --dry-run=server
  awsccmctl install apply --config install.yaml --wait`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, cfg, err := o.prepare(cmd)
			if err != nil {
				return err
			}
			if !o.NoDetect {
				if err := newDetector(cfg, v, streams.Err).Detect(cmd.Context(), &v); err != nil {
					return clusterError(err)
				}
			}
			objs, err := render(v)
			if err != nil {
				return err
			}
			return Apply(cmd.Context(), cfg, objs, *o, streams)
		},
	}
	o.addFlags(cmd)
	f := cmd.Flags()
	f.BoolVar(&o.Diff, "diff", false, "print a unified diff of the live objects against what apply makes of them, before applying")
	f.BoolVar(&o.Force, "force-conflicts", false, "take over fields another field manager owns")
	f.BoolVar(&o.Wait, "wait", false, "wait for the rollout, the CCM's Lease and initialised Nodes, then run the post-install checks")
	f.DurationVar(&o.Timeout, "timeout", DefaultWaitTimeout, "how long --wait waits for each step")
	f.BoolVar(&o.NoDetect, "no-detect", false, "do not fill the region and cluster ID from the Nodes and their instances' tags")
	return cmd
}

// newDetector builds the autodetection with the real clients: EC2 through
// the same client factory as the CCM (credentials chain, endpoint
// overrides of the cloud config).
func newDetector(cfg *rest.Config, v install.Values, log io.Writer) Detector {
	d := Detector{Log: log}
	d.Kube, _ = kubernetes.NewForConfig(cfg)
	d.EC2 = func(ctx context.Context, region string) (EC2Describer, error) {
		c, err := awsapi.NewClients(ctx, awsapi.Options{Region: region, CloudConfig: v.CloudConfig})
		if err != nil {
			return nil, err
		}
		return c.EC2, nil
	}
	return d
}

// ApplyReport is the -o json result of apply and uninstall.
type ApplyReport struct {
	DryRun  string         `json:"dryRun,omitempty"`
	Objects []apply.Result `json:"objects"`
}

// Apply applies objs and, with o.Wait, waits for the CCM to take over.
func Apply(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured, o ApplyOptions, streams Streams) error {
	if ctx == nil {
		ctx = context.Background()
	}
	client, err := apply.NewClient(cfg)
	if err != nil {
		return exitcode.UsageError(fmt.Errorf("kubeconfig: %w", err))
	}
	start := time.Now()
	if o.Diff {
		d, err := client.Diff(ctx, objs)
		if err != nil {
			return clusterError(err)
		}
		if d == "" {
			d = "no differences\n"
		}
		fmt.Fprint(streams.Out, d)
	}
	fmt.Fprintf(streams.Err, "applying %d objects (server-side apply, field manager %s)\n", len(objs), apply.FieldManager)
	results, err := client.Apply(ctx, objs, apply.Options{DryRun: o.DryRun, Force: o.Force, Progress: streams.Err})
	if err != nil {
		return clusterError(err)
	}
	if err := writeReport(streams, ApplyReport{DryRun: o.DryRun, Objects: results}); err != nil {
		return err
	}
	if !o.Wait {
		return nil
	}
	if o.DryRun != apply.DryRunNone {
		fmt.Fprintln(streams.Err, "--wait: nothing to wait for in a dry run")
		return nil
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return waitForCCM(ctx, cs, objs, start, o.Timeout, streams)
}

// writeReport prints the results: -o json as an ApplyReport, text as one
// line per object (the progress lines on stderr already said it, so text
// output adds only the summary).
func writeReport(streams Streams, r ApplyReport) error {
	format := "text"
	if streams.Output != nil {
		f, err := streams.Output()
		if err != nil {
			return err
		}
		format = f
	}
	if format == "json" {
		enc := json.NewEncoder(streams.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	counts := map[string]int{}
	var order []string
	for _, res := range r.Objects {
		if counts[res.Action] == 0 {
			order = append(order, res.Action)
		}
		counts[res.Action]++
	}
	summary := ""
	for i, a := range order {
		if i > 0 {
			summary += ", "
		}
		summary += fmt.Sprintf("%d %s", counts[a], a)
	}
	if r.DryRun != "" {
		summary += " (dry run: " + r.DryRun + ")"
	}
	_, err := fmt.Fprintln(streams.Out, summary)
	return err
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
