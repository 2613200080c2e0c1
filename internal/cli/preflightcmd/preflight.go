// Package preflightcmd is `awsccmctl preflight`: it proves a cluster's or a
// node's prerequisites for the external AWS CCM, and changes nothing.
package preflightcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/awschecks"
	"github.com/awsccmctl/awsccmctl/internal/preflight/clusterchecks"
	"github.com/awsccmctl/awsccmctl/internal/preflight/nodechecks"
	"github.com/awsccmctl/awsccmctl/internal/preflight/nodefiles"
)

// Streams are where the command writes.
type Streams struct{ Out, Err io.Writer }

// Options are the command's flags.
type Options struct {
	Mode       string
	Node       bool
	Root       string
	Ignore     []string
	FailOn     string
	Categories []string
	// AWS runs the AWS checks too.
	AWS bool
	// CloudConfig is the CCM's cloud-config file (region, cluster ID, endpoints).
	CloudConfig string
	// Region overrides the region.
	Region string
	// HostNetwork says the CCM will run with hostNetwork: true.
	HostNetwork bool
	// CloudRoutes says whether the CCM will configure cloud routes: on,
	// off, or auto (node mode: from this node's kube-controller-manager
	// manifest; otherwise unknown).
	CloudRoutes string
	// Kube builds the cluster client in cluster mode (kubectl's flags).
	Kube *genericclioptions.ConfigFlags
}

// NewCommand returns the preflight command; output returns the -o value.
func NewCommand(streams Streams, output func() (string, error)) *cobra.Command {
	o := &Options{Mode: string(preflight.ModePreInstall), Root: "/", FailOn: "error", AWS: true, HostNetwork: true, CloudRoutes: "auto",
		Kube: genericclioptions.NewConfigFlags(true)}
	cmd := &cobra.Command{
		Use:   "preflight",
		Short: "Check every prerequisite of the external AWS cloud controller manager; changes nothing",
		Long: `preflight checks what would make the AWS cloud controller manager fail or
misbehave and says how to fix each problem. It only reads.

Without --node it reads the cluster through the API (kubectl's kubeconfig
flags): versions, control-plane flags from the mirror Pods and kubeadm-config,
Nodes, Leases and other CCMs. With --node it reads the files of the node it
runs on (static pod manifests, kubelet flags and configuration), which is what
bootstrap scripts call before the cluster exists. --aws (on by default) adds
the AWS checks: identity, cluster tags, instances, subnets, security groups,
route tables, IMDS settings, IAM permissions and the load balancers the CCM
will adopt.

Exit codes: 0 all passed, 1 checks failed, 2 usage error, 3 the cluster or
AWS could not be reached. Guide: docs/preflight.md; every check:
docs/reference/preflight-checks.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := output()
			if err != nil {
				return err
			}
			return Run(cmd.Context(), *o, format, streams)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Mode, "mode", o.Mode, "when preflight runs: pre-install, pre-migrate or post-install")
	f.BoolVar(&o.Node, "node", false, "check this node's files instead of the cluster")
	f.StringVar(&o.Root, "root", o.Root, "with --node: the node's root file system (for chroots and tests)")
	f.StringSliceVar(&o.Ignore, "ignore-checks", nil, "check IDs whose failures become warnings, or all")
	f.StringVar(&o.FailOn, "fail-on", o.FailOn, "what fails the run: error, or warning")
	f.StringSliceVar(&o.Categories, "category", nil, "run only these categories")
	f.BoolVar(&o.AWS, "aws", o.AWS, "also check AWS: identity, cluster tags, instances, IMDS settings and IAM permissions")
	f.StringVar(&o.CloudConfig, "cloud-config", "", "the CCM's cloud-config file (region, VPC, cluster ID, endpoint overrides)")
	f.StringVar(&o.Region, "region", "", "AWS region (default: from --cloud-config, else IMDS)")
	f.BoolVar(&o.HostNetwork, "host-network", o.HostNetwork, "the CCM will run with hostNetwork: true (as the rendered install does)")
	f.StringVar(&o.CloudRoutes, "cloud-routes", o.CloudRoutes, "whether the CCM will configure cloud routes (the route table must then be tagged): on, off, or auto (with --node: from this node's kube-controller-manager manifest)")
	o.Kube.AddFlags(f)
	return cmd
}

// Run runs preflight and writes the report; its error carries the exit code.
func Run(ctx context.Context, o Options, format string, streams Streams) error {
	if ctx == nil {
		ctx = context.Background()
	}
	mode, err := preflight.ParseMode(o.Mode)
	if err != nil {
		return exitcode.UsageError(err)
	}
	if o.FailOn != "error" && o.FailOn != "warning" {
		return exitcode.UsageError(fmt.Errorf("--fail-on %q: want error or warning", o.FailOn))
	}
	if o.CloudRoutes == "" {
		o.CloudRoutes = "auto"
	}
	if o.CloudRoutes != "auto" && o.CloudRoutes != "on" && o.CloudRoutes != "off" {
		return exitcode.UsageError(fmt.Errorf("--cloud-routes %q: want on, off or auto", o.CloudRoutes))
	}
	report, err := collect(ctx, o, mode)
	if err != nil {
		return err
	}
	if err := preflight.Write(streams.Out, report, format, isTerminal(streams.Out)); err != nil {
		return err
	}
	for _, f := range report.Findings {
		if f.ID == clusterchecks.IDClusterReachable && f.Status == preflight.StatusFail {
			return &exitcode.Error{Code: exitcode.Unreachable, Err: fmt.Errorf("cannot reach the cluster: %s", f.Message)}
		}
	}
	if !report.Success {
		return &exitcode.Error{Code: exitcode.Failed, Err: fmt.Errorf("preflight failed: %s", failedIDs(report))}
	}
	return nil
}

// Collect runs the checks of o.Mode and returns the report without writing
// it: what `migrate-from-intree plan` decides from. Errors carry exit codes.
func Collect(ctx context.Context, o Options) (preflight.Report, error) {
	mode, err := preflight.ParseMode(o.Mode)
	if err != nil {
		return preflight.Report{}, exitcode.UsageError(err)
	}
	if o.CloudRoutes == "" {
		o.CloudRoutes = "auto"
	}
	return collect(ctx, o, mode)
}

func collect(ctx context.Context, o Options, mode preflight.Mode) (preflight.Report, error) {
	checks, err := o.checks(ctx, mode)
	if err != nil {
		return preflight.Report{}, err
	}
	report, err := preflight.Run(ctx, checks, preflight.Options{
		Mode: mode, Categories: o.Categories, Ignore: o.Ignore, FailOnWarning: o.FailOn == "warning",
	})
	if err != nil {
		return preflight.Report{}, exitcode.UsageError(err)
	}
	return report, nil
}

// checks builds the checks for node or cluster mode.
func (o Options) checks(ctx context.Context, mode preflight.Mode) ([]preflight.Check, error) {
	if o.Node {
		node, err := nodefiles.Read(o.Root)
		if err != nil {
			return nil, exitcode.UsageError(fmt.Errorf("read node files under %s: %w", o.Root, err))
		}
		checks := nodechecks.Checks(nodechecks.Input{Node: node, Mode: mode})
		if o.AWS {
			in, err := awsNodeInput(ctx, o, node, mode)
			if err != nil {
				return nil, err
			}
			in.CloudRoutes = o.cloudRoutes(node)
			checks = append(checks, awschecks.Checks(in)...)
		}
		return checks, nil
	}
	if o.Kube == nil {
		o.Kube = genericclioptions.NewConfigFlags(true)
	}
	cfg, err := o.Kube.ToRESTConfig()
	if err != nil {
		return nil, exitcode.UsageError(fmt.Errorf("kubeconfig: %w", err))
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, exitcode.UsageError(fmt.Errorf("kubeconfig: %w", err))
	}
	if !o.AWS {
		return clusterchecks.Checks(clusterchecks.Input{Client: client, Mode: mode}), nil
	}
	// The AWS input needs the Nodes now; the cluster checks reuse the list.
	nodes, err := listNodes(ctx, client)
	if err != nil {
		return nil, err
	}
	in, err := awsClusterInput(ctx, o, client, nodes, mode)
	if err != nil {
		return nil, err
	}
	in.CloudRoutes = o.cloudRoutes(nil)
	checks := clusterchecks.Checks(clusterchecks.Input{Client: client, Mode: mode, Nodes: nodes})
	return append(checks, awschecks.Checks(in)...), nil
}

// cloudRoutes resolves --cloud-routes; auto reads node's
// kube-controller-manager manifest when there is one.
func (o Options) cloudRoutes(node *nodefiles.Node) awschecks.CloudRoutes {
	switch o.CloudRoutes {
	case "on":
		return awschecks.CloudRoutesOn
	case "off":
		return awschecks.CloudRoutesOff
	}
	if on, known := nodechecks.KCMCloudRoutes(node); known {
		if on {
			return awschecks.CloudRoutesOn
		}
		return awschecks.CloudRoutesOff
	}
	return awschecks.CloudRoutesUnknown
}

func failedIDs(r preflight.Report) string {
	var ids []string
	for _, f := range r.Findings {
		if f.Status == preflight.StatusFail || f.Status == preflight.StatusWarn {
			ids = append(ids, f.ID)
		}
	}
	return strings.Join(ids, ", ")
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
