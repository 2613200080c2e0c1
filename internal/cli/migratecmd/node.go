package migratecmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/cli/termstatus"
	"github.com/awsccmctl/awsccmctl/internal/kubeletrun"
	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/migrate"
	"github.com/awsccmctl/awsccmctl/internal/migrate/nodephase"
	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/procwatch"
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
	// RestartKubelet restarts the kubelet with systemctl after a phase
	// that changes its flags, or when it still runs other ones.
	RestartKubelet bool
	// KubeletCredentials reports with the kubelet's own kubeconfig, found
	// through its flags under Root (the node command in a Pod).
	KubeletCredentials bool
	// ChrootSystemctl runs the host's systemctl chrooted into Root.
	ChrootSystemctl bool
}

func newNodeCommand(streams Streams) *cobra.Command {
	o := &nodeOptions{Root: "/", Wait: 3 * time.Minute, RestartKubelet: true}
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
that ConfigMap alone).

After kubelet-external or a restore of the kubelet it restarts the kubelet
with systemctl when its flags changed (--restart-kubelet=false leaves that
to you), waits for it to answer /healthz, and reports what the running
kubelet runs: its --cloud-provider as the process has it, its start time and
its health.`,
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
	f.StringVar(&o.NodeName, "node-name", "", "this node's Node name in reports (default: the name in the kubelet's client certificate, system:node:<name> in /var/lib/kubelet/pki/kubelet-client-current.pem, else the host name)")
	f.StringVar(&o.ProviderID, "provider-id", "", "kubelet-external: also set --provider-id (aws:///<zone>/<instance-id>)")
	f.StringVar(&o.HostnameOverride, "hostname-override", "", "kubelet-external: also set --hostname-override (keep the Node's name)")
	f.DurationVar(&o.Wait, "wait", o.Wait, "how long to wait for the local kube-controller-manager after a control-plane phase, and for the restarted kubelet (0: do not wait)")
	f.BoolVar(&o.RestartKubelet, "restart-kubelet", o.RestartKubelet, "after kubelet-external or a restore of the kubelet, restart the kubelet with systemctl (daemon-reload first when a unit file changed) when its flags changed or it runs other ones, and wait for it to answer /healthz; false leaves the restart to you (hosts without systemd)")
	f.BoolVar(&o.KubeletCredentials, "kubelet-credentials", false, "report with the kubelet's own credentials: the kubeconfig its flags name, read under --root (for the node command run in a Pod by `apply --node-runner=pods`)")
	f.BoolVar(&o.ChrootSystemctl, "chroot-systemctl", false, "run the host's own systemctl chrooted into --root (for the node command run in a Pod that sees the host's file system at --root)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		format, err := streams.Output()
		if err != nil {
			return err
		}
		if o.KubeletCredentials && *kube.KubeConfig != "" {
			return exitcode.UsageError(errors.New("--kubelet-credentials and --kubeconfig both name the credentials: pass one"))
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
	name := o.NodeName
	if name == "" {
		name = defaultNodeName(o.Root)
	}
	// Before the manifest changes: which local process holds which Lease,
	// so that its exit can be reported and the Lease released at once.
	var local *migrate.LocalKCM
	// client reads this node's Node (kubelet-external, also in a dry run);
	// reporter, the same client, writes the report (not in a dry run).
	var client, reporter kubernetes.Interface
	switch {
	case o.KubeletCredentials:
		var path string
		if client, path, err = kubeletCredentials(o.Root); err != nil {
			return &exitcode.Error{Code: exitcode.Unreachable, Err: err}
		}
		fmt.Fprintf(streams.Err, "reporting with the kubelet's credentials (%s)\n", path)
	case kubeconfig != "":
		if client, err = reportClient(kubeconfig); err != nil {
			return &exitcode.Error{Code: exitcode.Unreachable, Err: err}
		}
	}
	if !o.DryRun && client != nil {
		reporter = client
		if touchesKCM(phase, nodephase.Scope(o.Scope)) {
			local, err = identifyLocalKCM(ctx, reporter, o.Root)
			switch {
			case err != nil:
				fmt.Fprintf(streams.Err, "could not tell which Leases the local kube-controller-manager holds (%v): they will expire instead of being released\n", err)
			case local != nil && local.Identity != "":
				fmt.Fprintf(streams.Err, "the local kube-controller-manager (%s) holds %v as %s: run this phase on this node after the other control-plane nodes, so the Leases change hands once\n",
					local.Process, local.Leases, local.Identity)
			}
		}
	}
	id := identityFlags{HostnameOverride: o.HostnameOverride}
	if phase == nodephase.PhaseKubeletExternal {
		if id, err = nodeIdentity(ctx, o.Root, name, o.HostnameOverride, client); err != nil {
			return &exitcode.Error{Code: exitcode.Unreachable, Err: err}
		}
		sayIdentity(streams.Err, id)
	}
	res, err := nodephase.Apply(nodephase.Options{
		Root: o.Root, Phase: phase, Scope: nodephase.Scope(o.Scope), DryRun: o.DryRun,
		LeaderMigrationConfig: lm, ProviderID: o.ProviderID, HostnameOverride: id.HostnameOverride, HostnameLabel: id.HostnameLabel,
	})
	if err != nil {
		return &exitcode.Error{Code: exitcode.Failed, Err: fmt.Errorf("node phase %s: %w", phase, err)}
	}
	if format != "json" {
		writeNodeResult(streams.Out, res)
	}
	var report *migrate.NodeReport
	if !o.DryRun {
		report = &migrate.NodeReport{Node: name, Phase: string(phase)}
		report.Changed = res.ChangedPaths()
		if res.Changed && local != nil && local.Identity != "" && o.Wait > 0 {
			report.Departed, err = awaitDeparture(ctx, local, o.Wait)
			if err != nil {
				fmt.Fprintf(streams.Err, "%v: its Leases will expire instead of being released\n", err)
			} else if reporter != nil {
				// At once, before the new one answers: apply releases the
				// Leases on this report.
				early := *report
				early.InProgress, early.Time = true, metav1.NowMicro()
				if _, err := migrate.WriteNodeReport(ctx, reporter, early); err != nil {
					return &exitcode.Error{Code: exitcode.Unreachable, Err: err}
				}
				fmt.Fprintf(streams.Err, "kube-controller-manager %s exited at %s; reported, so apply releases %v\n",
					local.Process, report.Departed.ExitedAt.UTC().Format("15:04:05.000"), local.Leases)
			}
		}
		if touchesKCM(phase, nodephase.Scope(o.Scope)) && o.Wait > 0 {
			report.KCMHealthz, err = waitKCM(ctx, o.Root, phase, o.Wait, waitLog(streams, format))
			if err != nil {
				report.KCMHealthzError = err.Error()
			}
		}
		if touchesKubelet(phase, nodephase.Scope(o.Scope)) {
			settled, err := settleKubelet(ctx, o, res)
			report.Kubelet, report.KubeletRestarted, report.KubeletFilesCloudProvider = settled.Running, settled.Restarted, settled.Want
			if !settled.FilesModified.IsZero() {
				t := metav1.NewMicroTime(settled.FilesModified)
				report.KubeletFilesModified = &t
			}
			report.KubeletNodeName = kubeletNodeName(settled.Running, o.Root)
			if err != nil {
				report.KubeletError = err.Error()
			}
			sayKubelet(streams.Err, settled.Want, o.RestartKubelet, report)
		}
		report.Time = metav1.NowMicro()
		if reporter != nil {
			cm, err := migrate.WriteNodeReport(ctx, reporter, *report)
			if err != nil {
				return &exitcode.Error{Code: exitcode.Unreachable, Err: err}
			}
			fmt.Fprintf(streams.Err, "reported phase %s of %s to kube-system/%s\n", phase, report.Node, cm)
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
	if report != nil && report.KubeletRestarted && report.KubeletError != "" {
		return &exitcode.Error{Code: exitcode.Failed, Err: fmt.Errorf("kubelet after phase %s: %s", phase, report.KubeletError)}
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
	default: // kubelet-external changes the kubelet only
		return false
	}
}

func touchesKubelet(p nodephase.Phase, scope nodephase.Scope) bool {
	switch p {
	case nodephase.PhaseKubeletExternal:
		return true
	case nodephase.PhaseRestore:
		return scope != nodephase.ScopeControlPlane
	default: // the control-plane phases change static Pods only
		return false
	}
}

// kubeletSettled is what settleKubelet saw: the kubelet running last,
// whether it restarted it, and what the files say.
type kubeletSettled struct {
	Running   *kubeletrun.Running
	Restarted bool
	// Want is the --cloud-provider the files say ("" for none).
	Want string
	// FilesModified is the newest modification time of the files the
	// kubelet's command line comes from: a kubelet started before it runs
	// older flags.
	FilesModified time.Time
}

// settleKubelet reads what the running kubelet runs, found by the healthz
// endpoint its files under root configure, and, with o.RestartKubelet,
// restarts it when the phase changed its files or it runs another
// --cloud-provider than they say.
func settleKubelet(ctx context.Context, o nodeOptions, res *nodephase.Result) (kubeletSettled, error) {
	var out kubeletSettled
	node, err := nodefiles.Read(o.Root)
	if err != nil {
		return out, err
	}
	k := node.Kubelet
	if k == nil {
		return out, errors.New("the node's files start no kubelet")
	}
	out.Want, _ = k.Flags.Get("cloud-provider")
	for _, p := range k.Sources {
		if st, err := os.Stat(filepath.Join(o.Root, p)); err == nil && st.ModTime().After(out.FilesModified) {
			out.FilesModified = st.ModTime()
		}
	}
	ep, err := kubeletrun.EndpointOf(k)
	if err != nil {
		return out, err
	}
	fs, err := procwatch.New("")
	if err != nil {
		return out, err
	}
	out.Running, err = kubeletrun.Observe(ctx, fs, ep)
	changed, reload := false, false
	for _, p := range res.ChangedPaths() {
		if slices.Contains(k.Sources, p) {
			changed = true
			reload = reload || kubeletrun.IsUnitFile(p)
		}
	}
	stale := err == nil && (out.Running.CloudProvider != out.Want || out.Running.StartedBefore(out.FilesModified))
	if !o.RestartKubelet || (!changed && !stale) {
		return out, err
	}
	out.Restarted = true
	out.Running, err = kubeletrun.Restart(ctx, fs, ep, systemdOf(o, k), reload, out.Running, o.Wait)
	return out, err
}

// systemdOf is how the node's kubelet is restarted: its unit, with the
// host's systemctl chrooted into the root when the command runs in a Pod.
func systemdOf(o nodeOptions, k *nodefiles.Kubelet) kubeletrun.Systemd {
	s := kubeletrun.Systemd{Unit: kubeletrun.UnitOf(k.Unit)}
	if o.ChrootSystemctl {
		s.Root = o.Root
	}
	return s
}

// kubeletNodeName is the Node name a kubelet without an in-tree provider
// registers as: its --hostname-override or the node's host name
// (hostNameOf), trimmed and lower-cased; "" when r is nil or the host name
// is not known here.
func kubeletNodeName(r *kubeletrun.Running, root string) string {
	switch {
	case r == nil:
		return ""
	case r.HostnameOverride != "":
		return strings.ToLower(strings.TrimSpace(r.HostnameOverride))
	default:
		return hostNameOf(root)
	}
}

// sayKubelet tells the operator what the running kubelet runs: editing its
// flags changes nothing until it restarts.
func sayKubelet(w io.Writer, want string, restart bool, r *migrate.NodeReport) {
	k := r.Kubelet
	switch {
	case k == nil && r.KubeletRestarted:
		fmt.Fprintf(w, "the kubelet was restarted but not seen healthy: %s\n", r.KubeletError)
		return
	case k == nil:
		fmt.Fprintf(w, "the running kubelet could not be read: %s\n", r.KubeletError)
		return
	case r.KubeletRestarted:
		fmt.Fprintf(w, "restarted the kubelet (systemctl restart)\n")
	}
	fmt.Fprintf(w, "the running kubelet (pid %d, started %s) runs --cloud-provider=%s; /healthz: %s\n",
		k.PID, k.Started.UTC().Format(time.RFC3339), kubeletrun.ProviderName(k.CloudProvider), k.Healthz)
	if !restart && k.CloudProvider != want {
		fmt.Fprintf(w, "its files say --cloud-provider=%s, and the kubelet reads them only when it restarts: restart it (systemctl daemon-reload && systemctl restart kubelet)\n", kubeletrun.ProviderName(want))
	}
}

// identifyLocalKCM finds the local kube-controller-manager process and the
// Leases it holds (nil when the node runs none).
func identifyLocalKCM(ctx context.Context, client kubernetes.Interface, root string) (*migrate.LocalKCM, error) {
	ep, ok, err := nodephase.LocalKCMEndpoint(root)
	if err != nil || !ok {
		return nil, err
	}
	// The host's /proc whatever --root is: the process runs on the host.
	proc, err := procwatch.New("")
	if err != nil {
		return nil, err
	}
	healthz := nodephase.NewHealthzClient()
	return migrate.IdentifyLocalKCM(ctx, client, proc, ep.Port, func(ctx context.Context) ([]string, error) {
		return nodephase.GetHealthz(ctx, healthz, ep.URL)
	})
}

// awaitDeparture waits, up to wait, for the local kube-controller-manager
// seen before the change to exit. A process that is stopped, not gone,
// never counts.
func awaitDeparture(ctx context.Context, local *migrate.LocalKCM, wait time.Duration) (*migrate.Departure, error) {
	proc, err := procwatch.New("")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	t, err := proc.WaitExit(ctx, local.Process, 50*time.Millisecond)
	if err != nil {
		return nil, fmt.Errorf("kube-controller-manager %s did not exit within %s: %w", local.Process, wait, err)
	}
	return local.Departure(t), nil
}

// waitKCM waits for the local kube-controller-manager as the phase wants
// (nodephase.WaitKCM). A node without one returns nothing.
func waitKCM(ctx context.Context, root string, phase nodephase.Phase, wait time.Duration, log io.Writer) ([]string, error) {
	ep, ok, err := nodephase.LocalKCMEndpoint(root)
	if err != nil || !ok {
		return nil, err
	}
	return nodephase.WaitKCM(ctx, nodephase.NewHealthzClient(), ep, phase, wait, log)
}

// waitLog is where a wait's progress goes: on a terminal (and not -o json)
// a status line that updates in place, otherwise a line per retry.
func waitLog(streams Streams, format string) io.Writer {
	if live := termstatus.ForTerminal(streams.Err, os.Getenv); live != nil && format != "json" {
		return live
	}
	return streams.Err
}

// reportClient is the client the node reports with (and reads the Leases
// with: the node's own credentials, which migration-rbac grants both).
func reportClient(kubeconfig string) (kubernetes.Interface, error) {
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig: %w", err)
	}
	return kubernetes.NewForConfig(cfg)
}
