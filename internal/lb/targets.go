package lb

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
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
	// Running: AWS registers only running instances ("InvalidInstance: ...
	// is not in running state", kubernetes#74694). A stopped or pending
	// instance is not registered, but one already registered is kept: AWS
	// brings it back into service when it starts again.
	Running bool
}

// targets maps the nodes the service controller passes (already without
// excluded, deleting and to-be-deleted nodes) to instances: the Service's
// target-node-labels select among them; nodes without an AWS providerID,
// and instances EC2 does not know or that are terminated, are skipped. An
// EC2 error fails the sync: targets are never removed because EC2 could
// not be asked.
func (r *Reconciler) targets(ctx context.Context, svc *corev1.Service, cfg *lbconfig.Config, nodes []*corev1.Node) ([]target, error) {
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
	found, err := r.Instances.ByIDs(ctx, ids)
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
		out = append(out, target{InstanceID: id, Node: byID[id], Groups: inst.SecurityGroups, Running: inst.State == "running"})
	}
	if len(missing) > 0 {
		r.Events.Eventf(svc, corev1.EventTypeWarning, ReasonTargetSkipped, "nodes whose instances EC2 does not report (or reports terminated) are not targets: %s", strings.Join(missing, ", "))
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

// registrations returns what to register (running targets not yet
// registered) and what to deregister (registered instances that are no
// target at all) given what is registered.
func registrations(targets []target, have []string) (add, remove []string) {
	var all, running []string
	for _, t := range targets {
		all = append(all, t.InstanceID)
		if t.Running {
			running = append(running, t.InstanceID)
		}
	}
	return minus(running, have), minus(have, all)
}

var instanceIDRE = regexp.MustCompile(`i-[0-9a-f]{8,17}`)

// registerRunning calls register with ids. When AWS refuses instances as
// not running (InvalidInstance, InvalidTarget: the instance view saw them
// running a moment ago), it drops the instances the error names and tries
// once more with the rest, so one stopping node does not hold back the
// others. The dropped ones are registered at a later sync.
func registerRunning(ids []string, register func([]string) error) error {
	err := register(ids)
	if err == nil || !isCode(err, "InvalidInstance", "InvalidTarget") {
		return err
	}
	refused := instanceIDRE.FindAllString(err.Error(), -1)
	rest := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return slices.Contains(refused, id) })
	if len(rest) == len(ids) {
		return err
	}
	klog.InfoS("AWS refused instances that are not running; registering the others", "refused", refused, "registering", len(rest))
	if len(rest) == 0 {
		return nil
	}
	return register(rest)
}
