package migratecmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/migrate"
	"github.com/awsccmctl/awsccmctl/internal/preflight/gather"
)

type planOptions struct {
	File          string
	Mode          string
	Name          string
	InstallConfig string
	Image         string
	Region        string
	CloudConfig   string
	IgnoreChecks  []string
	AWS           bool
	NodeTimeout   time.Duration
}

func newPlanCommand(streams Streams) *cobra.Command {
	o := &planOptions{File: "migration-plan.yaml", Mode: string(migrate.ModeLeaderMigration), AWS: true, NodeTimeout: 30 * time.Minute}
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Read the cluster, run the pre-migrate preflight and write the migration plan (changes nothing)",
		Long: `plan reads the cluster (versions, kube-controller-manager and kube-apiserver
flags from their mirror Pods, kubeadm-config or kops labels, Nodes,
LoadBalancer Services), runs the pre-migrate preflight, and writes a
MigrationPlan (awsccmctl.io/v1alpha1) listing every step with its
precondition, action, gate, timeout and undo.

It refuses, with the reason and the way out, a control plane on 1.27 or
later, a managed control plane, a failed preflight (EBS volumes without the
EBS CSI driver, load balancers the CCM would not adopt unchanged, missing IAM
permissions, ...), and a kube-controller-manager that runs cloud routes.`,
		Args: cobra.NoArgs,
	}
	kube := newClusterFlags(cmd)
	f := cmd.Flags()
	f.StringVarP(&o.File, "file", "f", o.File, "where to write the plan")
	f.StringVar(&o.Mode, "mode", o.Mode, "leader-migration (default; required with several control-plane nodes) or restart (single control-plane node)")
	f.StringVar(&o.Name, "name", "", "the plan's name (default: migrate-<time>)")
	f.StringVar(&o.InstallConfig, "install-config", "", "InstallConfiguration file for the CCM (as `install --config`)")
	f.StringVar(&o.Image, "image", "", "CCM image (default: install's)")
	f.StringVar(&o.Region, "region", "", "AWS region (for preflight and the CCM's cloud config)")
	f.StringVar(&o.CloudConfig, "cloud-config", "", "the CCM's cloud-config file (also read by preflight)")
	f.StringSliceVar(&o.IgnoreChecks, "ignore-checks", nil, "preflight check IDs whose failures become warnings")
	f.BoolVar(&o.AWS, "aws", o.AWS, "run preflight's AWS checks (IAM simulation, load balancers to adopt, ...)")
	f.DurationVar(&o.NodeTimeout, "node-step-timeout", o.NodeTimeout, "how long apply waits for each node step")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		format, err := streams.Output()
		if err != nil {
			return err
		}
		inst, err := o.installConfiguration()
		if err != nil {
			return err
		}
		_, client, err := kube.clients()
		if err != nil {
			return err
		}
		ctx := cmd.Context()
		p, err := migrate.PlanCluster(ctx, client, migrate.ClusterPlanOptions{
			Plan: migrate.PlanOptions{Name: o.Name, Mode: migrate.Mode(o.Mode), Install: inst, NodeStepTimeout: o.NodeTimeout},
			Preflight: gather.Options{
				Ignore: o.IgnoreChecks, AWS: o.AWS, CloudConfig: o.CloudConfig, Region: o.Region,
				HostNetwork: true, CloudRoutes: gather.CloudRoutesAuto, Kube: kube.kube,
			},
			Progress: streams.Err,
		})
		var (
			discover *migrate.DiscoverError
			pf       *migrate.PreflightError
			refused  *migrate.RefusedError
		)
		switch {
		case errors.As(err, &discover):
			return &exitcode.Error{Code: exitcode.Unreachable, Err: err}
		case errors.As(err, &pf):
			return exitcode.FromPreflight(err)
		case err != nil:
			if errors.As(err, &refused) && format == "json" {
				_ = json.NewEncoder(streams.Out).Encode(map[string]any{"refused": true, "refusals": refused.Refusals})
			}
			return runError(ctx, err)
		}
		data, err := migrate.EncodePlan(p)
		if err != nil {
			return err
		}
		// The plan holds no secret and is for review: by whoever approves
		// it, and by the operators who run apply with it.
		if err := os.WriteFile(o.File, data, 0o644); err != nil { //nolint:gosec // G306: see above
			return exitcode.UsageError(fmt.Errorf("--file: %w", err))
		}
		if format == "json" {
			enc := json.NewEncoder(streams.Out)
			enc.SetIndent("", "  ")
			return enc.Encode(map[string]any{"refused": false, "file": o.File, "plan": p})
		}
		fmt.Fprintf(streams.Out, "plan %s (%s) written to %s\n", p.Metadata.Name, p.Spec.Mode, o.File)
		for i, s := range p.Spec.Steps {
			where := "cluster"
			if s.Runs == migrate.RunsNodes {
				where = fmt.Sprintf("nodes: %d, phase %s", len(s.Nodes), s.Phase)
			}
			fmt.Fprintf(streams.Out, "  %d. %-34s %s (%s; timeout %s)\n", i+1, s.Name, s.Description, where, s.Timeout.Duration)
		}
		if p.Spec.Mode == migrate.ModeLeaderMigration {
			fmt.Fprintf(streams.Out, "expected hand-over gap: about a second once the node that restarts the holder reports its exit (run the node steps with --kubeconfig); about %s without that report (gate bound %s)\n",
				p.Spec.Handover.ExpectedGap.Duration, p.Spec.Handover.GateBound.Duration)
		}
		fmt.Fprintf(streams.Out, "next: awsccmctl migrate-from-intree apply --plan %s\n", o.File)
		return nil
	}
	return cmd
}

// installConfiguration merges --install-config and the flags.
func (o *planOptions) installConfiguration() (install.Configuration, error) {
	var c install.Configuration
	if o.InstallConfig != "" {
		data, err := os.ReadFile(o.InstallConfig)
		if err != nil {
			return c, exitcode.UsageError(fmt.Errorf("--install-config: %w", err))
		}
		dc, err := install.DecodeConfig(data)
		if err != nil {
			return c, exitcode.UsageError(fmt.Errorf("--install-config %s: %w", o.InstallConfig, err))
		}
		c = *dc
	}
	if o.Image != "" {
		c.Image = o.Image
	}
	if o.Region != "" {
		c.Region = o.Region
	}
	if o.CloudConfig != "" {
		data, err := os.ReadFile(o.CloudConfig)
		if err != nil {
			return c, exitcode.UsageError(fmt.Errorf("--cloud-config: %w", err))
		}
		c.CloudConfig = string(data)
	}
	c.APIVersion, c.Kind = install.ConfigAPIVersion, install.ConfigKind
	// Validate now, so a bad value is a usage error here and not a refusal.
	var v install.Values
	if err := c.ApplyTo(&v); err != nil {
		return c, exitcode.UsageError(err)
	}
	v.Default()
	if err := v.Validate(); err != nil {
		return c, exitcode.UsageError(fmt.Errorf("CCM install values: %w", err))
	}
	return c, nil
}
