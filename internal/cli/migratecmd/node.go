package migratecmd

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/migrate"
	"github.com/awsccmctl/awsccmctl/internal/migrate/nodephase"
	"github.com/awsccmctl/awsccmctl/internal/preflight/nodefiles"
)

type nodeOptions struct {
	Root             string
	Phase            string
	Scope            string
	DryRun           bool
	NodeName         string
	ProviderID       string
	HostnameOverride string
	Wait             time.Duration
}

func newNodeCommand(streams Streams) *cobra.Command {
	o := &nodeOptions{Root: "/", Wait: 3 * time.Minute}
	cmd := &cobra.Command{
		Use:   "node",
		Short: "The node-local part: edit this node's static Pod manifests and kubelet flags for one phase",
		Long: `node edits this node's files for one phase of the migration, keeping a backup
of every file outside the static Pod directory, writing atomically and
printing a unified diff. Re-running a phase changes nothing; --phase restore
puts the backups back byte for byte.

Phases: control-plane-leader-migration, control-plane-external,
kubelet-external, restore (--scope control-plane or kubelet restores part).

After a control-plane phase it waits for the local kube-controller-manager's
/healthz?verbose (kubeadm binds it to 127.0.0.1, so only the node can read
it) and, with --kubeconfig, reports the phase and what it saw to
kube-system/` + migrate.ReportsName + `, where apply reads it. The node's own
kubelet credentials are enough (the migration-rbac step grants system:nodes
that ConfigMap alone).`,
		Args: cobra.NoArgs,
	}
	kube := genericclioptions.NewConfigFlags(false)
	kube.KubeConfig = new(string)
	cmd.Flags().StringVar(kube.KubeConfig, "kubeconfig", "", "report to the cluster with this kubeconfig (e.g. /etc/kubernetes/kubelet.conf)")
	f := cmd.Flags()
	f.StringVar(&o.Root, "root", o.Root, "the node's root file system (for chroots and tests)")
	f.StringVar(&o.Phase, "phase", "", "control-plane-leader-migration, control-plane-external, kubelet-external or restore")
	f.StringVar(&o.Scope, "scope", "", "with --phase restore: control-plane or kubelet (default: everything)")
	f.BoolVar(&o.DryRun, "dry-run", false, "print the diff, write nothing")
	f.StringVar(&o.NodeName, "node-name", "", "this node's Node name in reports (default: the host name)")
	f.StringVar(&o.ProviderID, "provider-id", "", "kubelet-external: also set --provider-id (aws:///<zone>/<instance-id>)")
	f.StringVar(&o.HostnameOverride, "hostname-override", "", "kubelet-external: also set --hostname-override (keep the Node's name)")
	f.DurationVar(&o.Wait, "wait", o.Wait, "how long to wait for the local kube-controller-manager after a control-plane phase (0: do not wait)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		format, err := streams.Output()
		if err != nil {
			return err
		}
		return runNode(cmd.Context(), *o, *kube.KubeConfig, format, streams)
	}
	return cmd
}

// nodeOutput is `node -o json`.
type nodeOutput struct {
	Result *nodephase.Result   `json:"result"`
	Report *migrate.NodeReport `json:"report,omitempty"`
}

func runNode(ctx context.Context, o nodeOptions, kubeconfig, format string, streams Streams) error {
	phase, err := nodephase.ParsePhase(o.Phase)
	if err != nil {
		return exitcode.UsageError(fmt.Errorf("--phase: %w", err))
	}
	if o.Scope != "" && phase != nodephase.PhaseRestore {
		return exitcode.UsageError(errors.New("--scope goes with --phase restore"))
	}
	lm, err := leadermigration.Render(leadermigration.ComponentKCM)
	if err != nil {
		return err
	}
	res, err := nodephase.Apply(nodephase.Options{
		Root: o.Root, Phase: phase, Scope: nodephase.Scope(o.Scope), DryRun: o.DryRun,
		LeaderMigrationConfig: lm, ProviderID: o.ProviderID, HostnameOverride: o.HostnameOverride,
	})
	if err != nil {
		return &exitcode.Error{Code: exitcode.Failed, Err: fmt.Errorf("node phase %s: %w", phase, err)}
	}
	if format != "json" {
		writeNodeResult(streams.Out, res)
	}
	var report *migrate.NodeReport
	if !o.DryRun {
		name := o.NodeName
		if name == "" {
			name, _ = os.Hostname()
		}
		report = &migrate.NodeReport{Node: name, Phase: string(phase), Time: metav1.Now()}
		report.Changed = res.ChangedPaths()
		if touchesKCM(phase, nodephase.Scope(o.Scope)) && o.Wait > 0 {
			report.KCMHealthz, err = waitKCM(ctx, o.Root, phase, o.Wait, streams.Err)
			if err != nil {
				report.KCMHealthzError = err.Error()
			}
		}
		if kubeconfig != "" {
			if err := writeReport(ctx, kubeconfig, *report); err != nil {
				return &exitcode.Error{Code: exitcode.Unreachable, Err: err}
			}
			fmt.Fprintf(streams.Err, "reported phase %s of %s to kube-system/%s\n", phase, report.Node, migrate.ReportsName)
		}
	}
	if format == "json" {
		enc := json.NewEncoder(streams.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(nodeOutput{Result: res, Report: report}); err != nil {
			return err
		}
	}
	if report != nil && report.KCMHealthzError != "" {
		return &exitcode.Error{Code: exitcode.Failed, Err: fmt.Errorf("kube-controller-manager after phase %s: %s", phase, report.KCMHealthzError)}
	}
	return nil
}

func writeNodeResult(w io.Writer, res *nodephase.Result) {
	fmt.Fprintf(w, "phase %s on a %s node:\n", res.Phase, res.Layout)
	for _, c := range res.Files {
		fmt.Fprintf(w, "  %-9s %s\n", c.Action, c.Path)
	}
	for _, c := range res.Files {
		if c.Diff != "" {
			fmt.Fprint(w, c.Diff)
		}
	}
	if res.Layout == nodephase.LayoutKubeadm && (res.Phase == nodephase.PhaseControlPlaneExternal || res.Phase == nodephase.PhaseControlPlaneLeaderMigration) {
		fmt.Fprintln(w, "kubeadm: kube-system/kubeadm-config must say the same, or `kubeadm upgrade` brings the old flags back; `migrate-from-intree apply` does it in its kubeadm-config step")
	}
}

func touchesKCM(p nodephase.Phase, scope nodephase.Scope) bool {
	switch p {
	case nodephase.PhaseControlPlaneLeaderMigration, nodephase.PhaseControlPlaneExternal:
		return true
	case nodephase.PhaseRestore:
		return scope != nodephase.ScopeKubelet
	}
	return false
}

// waitKCM waits for the local kube-controller-manager to answer
// /healthz?verbose as the phase wants: after control-plane-external, with
// none of the migrated controllers. A node without one returns nothing.
func waitKCM(ctx context.Context, root string, phase nodephase.Phase, wait time.Duration, log io.Writer) ([]string, error) {
	n, err := nodefiles.Read(root)
	if err != nil {
		return nil, err
	}
	pod := n.StaticPods[leadermigration.ComponentKCM]
	if pod == nil {
		return nil, nil
	}
	port, ok := pod.Flags.Get("secure-port")
	if !ok {
		port = "10257"
	}
	host, _ := pod.Flags.Get("bind-address")
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	url := "https://" + net.JoinHostPort(host, port) + "/healthz?verbose"
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		// The component's self-signed serving certificate, on this node.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // #nosec G402 -- loopback, read-only health endpoint
	}}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	last := "no answer yet"
	for {
		checks, err := getHealthz(ctx, client, url)
		switch {
		case err != nil:
			last = err.Error()
		case phase == nodephase.PhaseControlPlaneExternal && len(migrate.Running(checks, leadermigration.KCMNames())) > 0:
			last = fmt.Sprintf("still runs %v", migrate.Running(checks, leadermigration.KCMNames()))
		default:
			return checks, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s after %s: %s", url, wait, last)
		case <-time.After(500 * time.Millisecond):
		}
		fmt.Fprintf(log, "waiting for kube-controller-manager (%s): %s\n", url, last)
	}
}

func getHealthz(ctx context.Context, client *http.Client, url string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return migrate.HealthzChecks(string(body)), nil
}

func writeReport(ctx context.Context, kubeconfig string, r migrate.NodeReport) error {
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return migrate.WriteNodeReport(ctx, cs, r)
}
