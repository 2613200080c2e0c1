package migrate

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
)

// The order of a control-plane node step.
//
// Each control-plane node step restarts kube-controller-manager. Restarting
// one that does not lead changes no Lease. Restarting the leader hands its
// Leases over: Lease kube-controller-manager to another
// kube-controller-manager and, while it runs the cloud loops, the migration
// lease. Rolled last, the leader hands over once, to managers that already
// run as the step wants. Rolled first, a kube-controller-manager still in
// the previous mode takes the Leases and hands them over again when its own
// node comes. Both are safe (the gates refuse the states that are not:
// trap C, and an in-tree kube-controller-manager without leader migration
// while the CCM may hold the migration lease); the order only saves a
// hand-over.

// touchesKCMPhase reports whether a node phase (with its restore scope)
// restarts kube-controller-manager.
func touchesKCMPhase(phase, scope string) bool {
	switch phase {
	case PhaseControlPlaneLeaderMigration, PhaseControlPlaneExternal:
		return true
	case PhaseRestore:
		return scope != ScopeKubelet
	}
	return false
}

// nodeOrder returns the order in which to run a control-plane node step
// on its nodes, one at a time, and sets e.orderReason: the plan's order with
// the node of the leading kube-controller-manager moved last. Nil for a
// step that restarts no kube-controller-manager or runs on one node.
func (e *env) nodeOrder(ctx context.Context, s *Step, phase, scope string) []string {
	e.orderReason = ""
	if !touchesKCMPhase(phase, scope) || len(s.Nodes) < 2 {
		return nil
	}
	order := slices.Clone(s.Nodes)
	main, err := readLease(ctx, e.client, leadermigration.KCMLeaseName)
	if err != nil || !main.fresh(e.now()) {
		e.orderReason = "no kube-controller-manager leads now (Lease kube-controller-manager is not renewed): any order"
		return order
	}
	leader, ok := e.nodeOfIdentity(ctx, main.Holder, s.Nodes)
	if !ok {
		e.orderReason = fmt.Sprintf("the leading kube-controller-manager's identity %s names none of these nodes: run last the node whose kube-controller-manager leads (the node step prints it), so the Leases change hands once", main.Holder)
		return order
	}
	order = append(slices.DeleteFunc(order, func(n string) bool { return n == leader }), leader)
	e.orderReason = fmt.Sprintf("%s last: its kube-controller-manager leads (Lease kube-controller-manager held by %s); restarted last, it hands the Leases over once, to managers already restarted", leader, main.Holder)
	return order
}

// nodeOfIdentity maps a leader-election identity (<hostname>_<uuid>, the
// same for kube-controller-manager and the CCM) to the one node among
// nodes whose name or Hostname/InternalDNS address has that host name
// (compared by first label: EC2 hosts often call themselves ip-10-0-1-10
// while the Node is ip-10-0-1-10.ec2.internal).
func (e *env) nodeOfIdentity(ctx context.Context, identity string, nodes []string) (string, bool) {
	i := strings.LastIndex(identity, "_")
	if i <= 0 {
		return "", false
	}
	host := firstLabel(identity[:i])
	var found []string
	for _, n := range nodes {
		names := []string{n}
		if node, err := e.client.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{}); err == nil {
			for _, a := range node.Status.Addresses {
				if a.Type == corev1.NodeHostName || a.Type == corev1.NodeInternalDNS {
					names = append(names, a.Address)
				}
			}
		}
		if slices.ContainsFunc(names, func(name string) bool { return strings.EqualFold(firstLabel(name), host) }) {
			found = append(found, n)
		}
	}
	if len(found) != 1 {
		return "", false
	}
	return found[0], true
}

func firstLabel(name string) string {
	label, _, _ := strings.Cut(name, ".")
	return label
}
