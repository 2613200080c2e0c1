package lb

import (
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/awsccmctl/awsccmctl/internal/lbconfig"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
)

// target is one instance behind the load balancer.
type target struct {
	InstanceID string
	Node       string
	// Groups are the instance's security groups.
	Groups []string
}

// targets maps the nodes the service controller passes (already without
// excluded, deleting and to-be-deleted nodes) to instances: the Service's
// target-node-labels select among them; nodes without an AWS providerID,
// and instances EC2 does not know or that are terminated, are skipped. An
// EC2 error fails the sync: targets are never removed because EC2 could
// not be asked.
func (r *Reconciler) targets(ctx context.Context, svc *v1.Service, cfg *lbconfig.Config, nodes []*v1.Node) ([]target, error) {
	var ids []string
	byID := map[string]string{}
	var noProviderID []string
	for _, n := range nodes {
		if !matchesLabels(n.Labels, cfg.TargetNodeLabels) {
			continue
		}
		id, err := providerid.Parse(n.Spec.ProviderID)
		if err != nil {
			noProviderID = append(noProviderID, n.Name)
			continue
		}
		if _, dup := byID[id.InstanceID]; !dup {
			ids = append(ids, id.InstanceID)
		}
		byID[id.InstanceID] = n.Name
	}
	if len(noProviderID) > 0 {
		// Normal while nodes join: the cloud-node controller sets the
		// providerID and the service controller syncs again.
		klog.V(2).InfoS("Nodes without an AWS providerID are not load-balancer targets yet", "service", klog.KObj(svc), "nodes", noProviderID)
	}
	found, err := r.Instances(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("look up the instances of %d nodes: %w", len(ids), err)
	}
	var out []target
	var missing []string
	for _, id := range ids {
		inst, ok := found[id]
		if !ok || inst == nil || inst.Terminated() {
			missing = append(missing, byID[id]+" ("+id+")")
			continue
		}
		out = append(out, target{InstanceID: id, Node: byID[id], Groups: inst.SecurityGroups})
	}
	if len(missing) > 0 {
		r.Events().Eventf(svc, v1.EventTypeWarning, ReasonTargetSkipped, "nodes whose instances EC2 does not report (or reports terminated) are not targets: %s", strings.Join(missing, ", "))
	}
	slices.SortFunc(out, func(a, b target) int { return strings.Compare(a.InstanceID, b.InstanceID) })
	return out, nil
}

// matchesLabels: every key of sel is on the node, with the given value
// unless that is empty.
func matchesLabels(labels, sel map[string]string) bool {
	for k, v := range sel {
		got, ok := labels[k]
		if !ok || (v != "" && got != v) {
			return false
		}
	}
	return true
}

func targetIDs(ts []target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.InstanceID
	}
	return out
}
