// Package preflightcmd is `awsccmctl preflight`: it proves a cluster's or a
// node's prerequisites for the external AWS CCM, and changes nothing. It
// parses the flags, calls internal/preflight/gather, which reads the node or
// cluster and runs the checks, prints the report and chooses the exit code.
package preflightcmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/clusterchecks"
	"github.com/awsccmctl/awsccmctl/internal/preflight/gather"
)

// Streams are where the command writes.
type Streams struct{ Out, Err io.Writer }

// Options are the command's flags.
type Options struct {
	Mode string
	Node bool
	// Root is the node's root file system (with Node; "" is /).
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
	o := &Options{Mode: string(preflight.ModePreInstall), FailOn: "error", AWS: true, HostNetwork: true, CloudRoutes: "auto",
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
	f.StringVar(&o.Root, "root", o.Root, "with --node: the node's root file system, for chroots and tests (default /)")
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

// Run validates o, gathers and runs the checks (gather.Collect) and writes
// the report; its error carries the exit code.
func Run(ctx context.Context, o Options, format string, streams Streams) error {
	mode, err := preflight.ParseMode(o.Mode)
	if err != nil {
		return exitcode.UsageError(err)
	}
	if o.FailOn != "error" && o.FailOn != "warning" {
		return exitcode.UsageError(fmt.Errorf("--fail-on %q: want error or warning", o.FailOn))
	}
	// A --root without --node would be ignored: the run would check the
	// cluster of the kubeconfig, not the files the caller pointed at.
	if o.Root != "" && !o.Node {
		return exitcode.UsageError(fmt.Errorf("--root %s needs --node: --root names the node files to check, and without --node preflight checks the cluster", o.Root))
	}
	if o.Node && o.Root == "" {
		o.Root = "/"
	}
	if o.CloudRoutes == "" {
		o.CloudRoutes = gather.CloudRoutesAuto
	}
	if o.CloudRoutes != gather.CloudRoutesAuto && o.CloudRoutes != gather.CloudRoutesOn && o.CloudRoutes != gather.CloudRoutesOff {
		return exitcode.UsageError(fmt.Errorf("--cloud-routes %q: want on, off or auto", o.CloudRoutes))
	}
	report, err := gather.Collect(ctx, o.gatherOptions(mode))
	if err != nil {
		return exitcode.FromPreflight(err)
	}
	if err := preflight.Write(streams.Out, report, format, isTerminal(streams.Out)); err != nil {
		return err
	}
	// A check that failed because the cluster or AWS did not answer proves
	// nothing: "cannot reach" (3), not "checks failed" (1), as
	// docs/reference/exit-codes.md promises, whatever the check's severity,
	// unless the operator ignored that check. The report is written first.
	for _, f := range report.Findings {
		switch {
		case !f.Unreachable || f.Ignored:
		case f.ID == clusterchecks.IDClusterReachable:
			return &exitcode.Error{Code: exitcode.Unreachable, Err: fmt.Errorf("cannot reach the cluster: %s", f.Message)}
		default:
			return &exitcode.Error{Code: exitcode.Unreachable, Err: fmt.Errorf("cannot reach AWS: %s: %s", f.ID, f.Message)}
		}
	}
	if !report.Success {
		return &exitcode.Error{Code: exitcode.Failed, Err: fmt.Errorf("preflight failed: %s", failureSummary(report, o.FailOn == "warning"))}
	}
	return nil
}

// gatherOptions are the library's options for the flags.
func (o Options) gatherOptions(mode preflight.Mode) gather.Options {
	g := gather.Options{Mode: mode, Node: o.Node, Root: o.Root, Ignore: o.Ignore, Categories: o.Categories,
		FailOnWarning: o.FailOn == "warning", AWS: o.AWS, CloudConfig: o.CloudConfig, Region: o.Region,
		HostNetwork: o.HostNetwork, CloudRoutes: o.CloudRoutes}
	if o.Kube != nil {
		g.Kube = o.Kube
	}
	return g
}

// failureSummary names what failed the run: the failed checks, and with
// --fail-on=warning the warned ones, apart, so a warning is never reported
// as a failure.
func failureSummary(r preflight.Report, failOnWarning bool) string {
	var failed, warned []string
	for _, f := range r.Findings {
		switch f.Status {
		case preflight.StatusFail:
			failed = append(failed, f.ID)
		case preflight.StatusWarn:
			warned = append(warned, f.ID)
		default:
			// Passes and skips fail nothing.
		}
	}
	var parts []string
	if len(failed) > 0 {
		parts = append(parts, fmt.Sprintf("%d failed: %s", len(failed), strings.Join(failed, ", ")))
	}
	if failOnWarning && len(warned) > 0 {
		parts = append(parts, fmt.Sprintf("%d warned (--fail-on=warning): %s", len(warned), strings.Join(warned, ", ")))
	}
	return strings.Join(parts, "; ")
}

func isTerminal(w io.Writer) bool {
	// awsccmctl's stdout is os.Stdout behind root's -o json guard, which
	// passes the descriptor on.
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}
