package routes

import (
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// ReasonRouteTableProblem is the reason of the Warning event on a Node
// whose pod CIDRs cannot be routed because there is no one route table to
// manage (stable: users alert on it).
const ReasonRouteTableProblem = "AWSRouteTableProblem"

// tableFound ends a table problem: the metric drops to 0, and a problem
// that comes back is told to every Node again.
func (m *Manager) tableFound(table string) {
	m.mu.Lock()
	had := m.tableProblem != ""
	m.tableProblem = ""
	clear(m.warnedTable)
	m.mu.Unlock()
	if had {
		klog.InfoS("Route table found again; routes are made and deleted again", "table", table)
	}
	m.metrics.setProblem(0)
}

// reportTableProblem tells the Nodes why their routes cannot be made when
// err is a *TableError: a Warning event on each Node with pod CIDRs (only
// on node, when given), once per Node and problem, so a sync every few
// seconds does not repeat it; a changed problem (another table tagged, say)
// is told again. Failed calls are not table problems: the route controller
// logs and retries them.
func (m *Manager) reportTableProblem(err error, node *Node) {
	var te *TableError
	if !errors.As(err, &te) {
		return
	}
	m.metrics.setProblem(te.Problem)
	key := te.Error()
	var nodes []Node
	if node != nil {
		nodes = []Node{*node}
	} else {
		all, lerr := m.nodes.List()
		if lerr != nil {
			klog.ErrorS(lerr, "Cannot list Nodes to tell them about the route table problem", "problem", firstLine(key))
			return
		}
		nodes = all
	}
	m.mu.Lock()
	if m.tableProblem != key {
		m.tableProblem = key
		clear(m.warnedTable)
	}
	var warn []Node
	for _, n := range nodes {
		if n.Node == nil || !hasPodCIDR(n.Node) || m.warnedTable[n.Node.Name] {
			continue
		}
		m.warnedTable[n.Node.Name] = true
		warn = append(warn, n)
	}
	if node == nil {
		// Forget Nodes that are gone, so the map does not grow.
		names := make(map[string]bool, len(nodes))
		for _, n := range nodes {
			if n.Node != nil {
				names[n.Node.Name] = true
			}
		}
		for name := range m.warnedTable {
			if !names[name] {
				delete(m.warnedTable, name)
			}
		}
	}
	m.mu.Unlock()
	for _, n := range warn {
		if m.events != nil {
			m.events.Eventf(n.Node, corev1.EventTypeWarning, ReasonRouteTableProblem,
				"No route can be made for this Node's pod CIDRs %s: %v", strings.Join(podCIDRs(n.Node), ", "), err)
		}
		m.metrics.warned(ReasonRouteTableProblem)
	}
}

// hasPodCIDR: the route controller routes only Nodes with a pod CIDR.
func hasPodCIDR(n *corev1.Node) bool { return len(podCIDRs(n)) > 0 }

func podCIDRs(n *corev1.Node) []string {
	if len(n.Spec.PodCIDRs) > 0 {
		return n.Spec.PodCIDRs
	}
	if n.Spec.PodCIDR != "" {
		return []string{n.Spec.PodCIDR}
	}
	return nil
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
