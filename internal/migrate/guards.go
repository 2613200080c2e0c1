package migrate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// GuardError is a broken invariant: the migration stops at once, whatever
// the step, and says what broke.
type GuardError struct{ Problems []string }

func (e *GuardError) Error() string {
	return "guard broken: " + strings.Join(e.Problems, "; ")
}

// takeBaseline records what the guards hold the cluster to: every Node's
// providerID, the digest of its addresses and cloud labels, whether it is
// Ready, and every LoadBalancer Service's hostname.
func takeBaseline(ctx context.Context, client kubernetes.Interface) (*Baseline, error) {
	b := &Baseline{ProviderIDs: map[string]string{}, Hostnames: map[string]string{}, NodeFields: map[string]string{}}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Nodes: %w", err)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		b.ProviderIDs[n.Name] = n.Spec.ProviderID
		b.NodeFields[n.Name] = nodeFieldsDigest(n)
		if !isReady(n) {
			b.NotReady = append(b.NotReady, n.Name)
		}
	}
	svcs, err := client.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Services: %w", err)
	}
	for _, s := range svcs.Items {
		if s.Spec.Type != corev1.ServiceTypeLoadBalancer {
			continue
		}
		b.Hostnames[s.Namespace+"/"+s.Name] = lbHostname(&s)
	}
	return b, nil
}

func lbHostname(s *corev1.Service) string {
	var hs []string
	for _, in := range s.Status.LoadBalancer.Ingress {
		if in.Hostname != "" {
			hs = append(hs, in.Hostname)
		} else if in.IP != "" {
			hs = append(hs, in.IP)
		}
	}
	return strings.Join(hs, ",")
}

// guardObservation is the cluster as the guards compare it with the
// baseline: every Node, and every Service's load-balancer hostname.
type guardObservation struct {
	Nodes     map[string]*corev1.Node
	Hostnames map[string]string
	// Restarting are the Nodes whose kubelet the run restarts (the nodes of
	// the kubelet steps begun): the Ready guard watches them.
	Restarting map[string]bool
	Now        time.Time
}

// decideGuards compares the cluster with the baseline:
//   - node guard: no Node of the baseline deleted, none re-tainted
//     uninitialized, no providerID changed, no address or cloud label
//     changed (nodeFields), and none whose kubelet the run restarts not
//     Ready for longer than notReadyBound when it was Ready at the
//     baseline;
//   - load-balancer guard: every LoadBalancer Service of the baseline keeps
//     its status hostname (a new hostname means a new load balancer: an
//     outage for every client of the old one).
func decideGuards(o guardObservation, b *Baseline) error {
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(b.ProviderIDs)) {
		n, ok := o.Nodes[name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("Node %s was deleted", name))
		case n.Spec.ProviderID != b.ProviderIDs[name]:
			problems = append(problems, fmt.Sprintf("Node %s's providerID changed from %q to %q", name, b.ProviderIDs[name], n.Spec.ProviderID))
		case slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == taintUninitialized }):
			problems = append(problems, fmt.Sprintf("Node %s is tainted %s again: a kubelet re-registered it", name, taintUninitialized))
		case b.NodeFields[name] != "" && nodeFieldsDigest(n) != b.NodeFields[name]:
			problems = append(problems, fmt.Sprintf("Node %s's addresses or cloud labels changed since verify-cluster; now %s", name, nodeFields(n)))
		case o.Restarting[name] && !slices.Contains(b.NotReady, name):
			if d, why := notReadyFor(n, o.Now); d > notReadyBound {
				problems = append(problems, fmt.Sprintf("Node %s has not been Ready for %s (over %s) since its kubelet step began: %s", name, d.Round(time.Second), notReadyBound, why))
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(b.Hostnames)) {
		got, ok := o.Hostnames[key]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("Service %s was deleted", key))
		case got != b.Hostnames[key]:
			problems = append(problems, fmt.Sprintf("Service %s's load balancer changed from %q to %q", key, b.Hostnames[key], got))
		}
	}
	if len(problems) > 0 {
		return &GuardError{Problems: problems}
	}
	return nil
}
