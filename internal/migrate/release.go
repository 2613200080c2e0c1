package migrate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/leaderlease"
	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
)

// Releasing a Lease whose holder is proven gone.
//
// kube-controller-manager 1.26 does not release its Leases when it stops,
// so a restarted holder leaves every candidate waiting a full lease
// duration (15 s) after its last renewal: every kube-controller-manager
// controller at each control-plane step, and the cloud loops at the
// cut-over. The node step knows more than the Lease does: it saw which
// local process held which Lease before it changed the manifest, and saw
// that process exit (internal/procwatch: a stopped process is not gone).
// On that report apply clears the holder, which is what a holder does when
// it releases; the candidates take the Lease at their next retry. A holder
// that is alive, even stalled, is never released: without the report the
// Lease expires as before.

// releasable are the Leases a departed kube-controller-manager may hold.
// A node report never releases the CCM's own Lease (no node step watches
// the CCM's process); releaseGoneCCM does, on its Pod's removal.
var releasable = []string{leadermigration.KCMLeaseName, leadermigration.LeaseName}

// release is one Lease to release: still held by an identity whose process
// a node saw exit.
type release struct {
	Lease    string
	Identity string
	Node     string
	ExitedAt time.Time
}

// departedHolders returns the Leases (by name, of those in held) whose
// holder is an identity that a report written since `since` says has exited,
// and that the identity held when the node looked. A Lease that changed
// hands since is not among them.
func departedHolders(reports map[string]NodeReport, held map[string]lease, since time.Time) []release {
	var out []release
	for _, node := range slices.Sorted(maps.Keys(reports)) {
		r := reports[node]
		d := r.Departed
		if d == nil || d.Identity == "" || r.Time.Time.Before(since.Add(-time.Second)) {
			continue
		}
		for _, name := range d.Leases {
			l, ok := held[name]
			if !ok || !l.Exists || l.Holder != d.Identity {
				continue
			}
			out = append(out, release{Lease: name, Identity: d.Identity, Node: node, ExitedAt: d.ExitedAt.Time})
		}
	}
	return out
}

// releaseDeparted releases the Leases still held by kube-controller-manager
// processes that the node steps of the current step (on nodes) saw exit,
// and returns
// what it released. The update is conditional on the Lease's
// resourceVersion: a Lease that a candidate took in between is left alone.
func (e *env) releaseDeparted(ctx context.Context, nodes []string) ([]release, error) {
	reports, err := ReadNodeReportsOf(ctx, e.client, nodes)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(slices.Collect(maps.Values(reports)), func(r NodeReport) bool { return r.Departed != nil }) {
		return nil, nil
	}
	leases := e.client.CoordinationV1().Leases(leadermigration.LeaseNamespace)
	held := map[string]lease{}
	for _, name := range releasable {
		l, err := leases.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("read Lease %s/%s: %w", leadermigration.LeaseNamespace, name, err)
		}
		held[name] = leaseOf(l)
	}
	var done []release
	for _, r := range departedHolders(reports, held, e.stepStarted) {
		ok, err := e.releaseIfHeld(ctx, r.Lease, r.Identity)
		if err != nil {
			return done, err
		}
		if !ok {
			continue
		}
		done = append(done, r)
		if e.out != nil {
			fmt.Fprintf(e.out, "%s   released Lease %s/%s held by %s: its process on %s exited at %s\n",
				e.now().UTC().Format("15:04:05.000"), leadermigration.LeaseNamespace, r.Lease, r.Identity, r.Node, r.ExitedAt.UTC().Format("15:04:05.000"))
		}
		if r.Lease == leadermigration.LeaseName {
			e.migrationReleased = &r
		}
	}
	return done, nil
}

// The CCM's Leases when its Pod is gone.
//
// The CCM does not release its Leases either when it stops (cloud-provider
// runs its elections without ReleaseOnCancel), so each restart of the
// leading CCM Pod, at finalize's rolling update and in a rollback, would
// leave the cloud loops without a manager for a lease duration. A Pod's
// object is removed only once its kubelet reports its containers stopped
// (graceful deletion, which every workload controller and `apply` use), so
// a CCM holder whose Pod is gone is a process that is gone. The CCM runs on
// the host network: its identity (<hostname>_<uuid>) names its node, and
// the Pods on that node when a holder is first seen are the candidates for
// being that holder. Once none of them exists, its Leases are released. A
// holder first seen after its Pod was already replaced is never released:
// its Lease expires as before.

// ccmHolderPods remembers, per CCM identity seen holding a Lease, the UIDs
// of the CCM Pods on its node at that moment.
type ccmHolderPods map[string][]types.UID

// releaseGoneCCM releases the CCM and migration Leases held by a CCM whose
// Pod is gone.
func (e *env) releaseGoneCCM(ctx context.Context) error {
	l, err := readLeases(ctx, e.client)
	if err != nil {
		return err
	}
	pods, err := e.client.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{install.LabelName: install.AppName}).String(),
	})
	if err != nil {
		return fmt.Errorf("list CCM Pods: %w", err)
	}
	live := map[types.UID]bool{}
	byNode := map[string][]types.UID{}
	for _, p := range pods.Items {
		live[p.UID] = true
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p.UID)
	}
	holder := l.CCM.Holder
	if holder == "" || !l.CCM.Exists {
		return nil
	}
	if e.ccmPods == nil {
		e.ccmPods = ccmHolderPods{}
	}
	if _, seen := e.ccmPods[holder]; !seen {
		node, ok := e.nodeOfIdentity(ctx, holder, slices.Sorted(maps.Keys(byNode)))
		if !ok {
			e.ccmPods[holder] = nil // cannot tell its Pod: never released
			return nil
		}
		e.ccmPods[holder] = byNode[node]
		return nil
	}
	candidates := e.ccmPods[holder]
	if len(candidates) == 0 || slices.ContainsFunc(candidates, func(u types.UID) bool { return live[u] }) {
		return nil
	}
	names := []string{install.LeaseName}
	if l.Migration.Holder == holder {
		names = append(names, leadermigration.LeaseName)
	}
	for _, name := range names {
		ok, err := e.releaseIfHeld(ctx, name, holder)
		if err != nil {
			return err
		}
		if ok && e.out != nil {
			fmt.Fprintf(e.out, "%s   released Lease %s/%s held by %s: its CCM Pod is gone\n",
				e.now().UTC().Format("15:04:05.000"), leadermigration.LeaseNamespace, name, holder)
		}
	}
	return nil
}

// releaseIfHeld clears the Lease's holder if it is still identity,
// conditionally on its resourceVersion.
func (e *env) releaseIfHeld(ctx context.Context, name, identity string) (bool, error) {
	holder, err := leaderlease.ReleaseIf(ctx, e.client, leadermigration.LeaseNamespace, name,
		func(h string) bool { return h == identity }, "awsccmctl-migrate")
	return holder != "", err
}

// restartsCCM reports whether a step (or its undo) replaces or removes the
// CCM's Pods while the CCM may lead: finalize's rolling update either way,
// and the undo of install-ccm.
func restartsCCM(s *Step, undo bool) bool {
	base, _, _ := strings.Cut(s.Name, "/")
	return base == StepFinalize || (undo && base == StepInstallCCM)
}
