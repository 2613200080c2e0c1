package migrate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/procwatch"
)

// LocalKCM is the kube-controller-manager running on a node, as the node
// step saw it before it changed the manifest: which process it is and the
// Leases it holds, so that the node can later prove that holder gone.
type LocalKCM struct {
	Process procwatch.Process
	// Checks is its /healthz?verbose.
	Checks []string
	// Identity is its leader-election identity, when it holds a Lease;
	// Leases names them.
	Identity string
	Leases   []string
}

// kcmLeads reports whether a kube-controller-manager's /healthz?verbose
// shows it leading: it lists a controller's check. A candidate lists only
// its own (leaderElection, and ping and log where served).
func kcmLeads(checks []string) bool {
	return slices.ContainsFunc(checks, func(c string) bool {
		return c != "leaderElection" && c != "ping" && c != "log"
	})
}

// IdentifyLocalKCM finds the kube-controller-manager listening on port and
// the Leases it holds. The Lease's holder is the local process when the
// local /healthz?verbose shows it running what that Lease guards and the
// Lease had the same holder, acquired at the same time, before and after
// that read: two processes never lead one Lease at once, so the holder of
// that whole span is the one that answered. A node where nothing listens
// returns nil.
func IdentifyLocalKCM(ctx context.Context, client kubernetes.Interface, proc procwatch.FS, port int, healthz func(context.Context) ([]string, error)) (*LocalKCM, error) {
	p, err := proc.ListenerOf(port)
	if errors.Is(err, procwatch.ErrNoListener) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find kube-controller-manager on port %d: %w", port, err)
	}
	before, err := heldLeases(ctx, client)
	if err != nil {
		return nil, err
	}
	checks, err := healthz(ctx)
	if err != nil {
		return nil, fmt.Errorf("kube-controller-manager /healthz?verbose: %w", err)
	}
	after, err := heldLeases(ctx, client)
	if err != nil {
		return nil, err
	}
	if again, err := proc.ListenerOf(port); err != nil || again != p {
		return nil, fmt.Errorf("kube-controller-manager on port %d changed while it was read (%v, then %v): run again", port, p, again)
	}
	local := &LocalKCM{Process: p, Checks: checks}
	runs := map[string]bool{
		leadermigration.KCMLeaseName: kcmLeads(checks),
		leadermigration.LeaseName:    len(leadermigration.Running(checks, leadermigration.KCMNames())) > 0,
	}
	for _, name := range releasable {
		b, a := before[name], after[name]
		if !runs[name] || a.Holder == "" || a.Holder != b.Holder || !a.Acquired.Equal(b.Acquired) {
			continue
		}
		if local.Identity != "" && local.Identity != a.Holder {
			return nil, fmt.Errorf("kube-controller-manager on port %d runs under Leases of two identities (%s, %s): run again", port, local.Identity, a.Holder)
		}
		local.Identity = a.Holder
		local.Leases = append(local.Leases, name)
	}
	return local, nil
}

// heldLeases reads the Leases a kube-controller-manager may hold.
func heldLeases(ctx context.Context, client kubernetes.Interface) (map[string]lease, error) {
	out := map[string]lease{}
	for _, name := range releasable {
		l, err := readLease(ctx, client, name)
		if err != nil {
			return nil, err
		}
		out[name] = l
	}
	return out, nil
}

// Departure returns the report that local has exited at t, or nil when it
// held no Lease.
func (l *LocalKCM) Departure(t time.Time) *Departure {
	if l == nil || l.Identity == "" {
		return nil
	}
	return &Departure{Identity: l.Identity, Leases: l.Leases, PID: l.Process.PID, StartTime: l.Process.StartTime, ExitedAt: metav1.NewMicroTime(t)}
}
