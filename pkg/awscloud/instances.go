package awscloud

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/awsccmctl/awsccmctl/internal/instances"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
)

// instancesV2 implements cloudprovider.InstancesV2 on the shared view.
type instancesV2 struct{ c *Cloud }

// unresolvableError means the CCM cannot tell which instance a Node is. It
// is never read as "the instance does not exist".
type unresolvableError struct{ msg string }

func (e *unresolvableError) Error() string { return e.msg }

// instanceID finds the instance ID of node: spec.providerID first, then a
// resource-based name (i-...), then the private DNS name.
func (i *instancesV2) instanceID(ctx context.Context, node *corev1.Node) (string, error) {
	ref := i.c.refs.of(node)
	if ref.err != nil {
		i.c.events.Eventf(node, corev1.EventTypeWarning, ReasonInvalidProviderID,
			"spec.providerID is not an AWS providerID: %v. Fix the kubelet's --provider-id (aws:///<zone>/<instance-id>) and re-register the Node.", ref.err)
		return "", &unresolvableError{msg: fmt.Sprintf("node %s: %v", node.Name, ref.err)}
	}
	if ref.instanceID != "" {
		return ref.instanceID, nil
	}
	inst, err := i.c.view.ByName(ctx, node.Name)
	if errors.Is(err, instances.ErrNotFound) {
		i.c.events.Eventf(node, corev1.EventTypeWarning, ReasonNodeNotResolvable,
			"Node has no spec.providerID and no running EC2 instance in %s has the private DNS name %q. "+
				"Start the kubelet with --provider-id=aws:///<zone>/<instance-id>, or with --hostname-override set to the instance's private DNS name "+
				"(custom DHCP option sets change the hostname).", i.c.env.VPCID, node.Name)
		return "", &unresolvableError{msg: fmt.Sprintf("node %s has no providerID and no instance in VPC %s has that private DNS name", node.Name, i.c.env.VPCID)}
	}
	if err != nil {
		return "", err
	}
	return inst.ID, nil
}

// observe resolves node to its instance and returns what the view knows.
func (i *instancesV2) observe(ctx context.Context, node *corev1.Node) (string, instances.Observation, error) {
	id, err := i.instanceID(ctx, node)
	if err != nil {
		return "", instances.Observation{}, err
	}
	obs, err := i.c.view.ByID(ctx, id)
	return id, obs, err
}

// InstanceMetadata returns providerID, type, zone, region, addresses and the
// zone-ID label of the node's instance.
func (i *instancesV2) InstanceMetadata(ctx context.Context, node *corev1.Node) (*cloudprovider.InstanceMetadata, error) {
	id, obs, err := i.observe(ctx, node)
	if err != nil {
		return nil, err
	}
	inst := obs.Instance
	if inst == nil {
		i.c.events.Eventf(node, corev1.EventTypeWarning, ReasonInstanceNotFound,
			"EC2 instance %s is not found in region %s (missing since %s). If it was just launched, EC2 may not show it yet; otherwise check the providerID and the region.",
			id, i.c.env.Region, obs.AbsentSince.UTC().Format("15:04:05Z"))
		return nil, fmt.Errorf("instance %s of node %s: %w", id, node.Name, cloudprovider.InstanceNotFound)
	}
	if inst.Terminated() {
		i.c.events.Eventf(node, corev1.EventTypeWarning, ReasonInstanceTerminated,
			"EC2 instance %s is terminated; the Node is deleted once it is NotReady. If the providerID is wrong, re-register the Node.", id)
		return nil, fmt.Errorf("instance %s of node %s is terminated", id, node.Name)
	}
	zoneID, err := i.c.zones.ID(ctx, inst.Zone)
	if err != nil {
		return nil, err
	}
	// The status loop asks about every Node, so a tripped breaker learns
	// here that the instances are back even if no Node is NotReady.
	i.c.recheckBreaker(ctx)
	labels := map[string]string{ZoneIDLabel: zoneID}
	if err := i.topologyLabels(ctx, node, inst, labels); err != nil {
		return nil, err
	}
	addrs, err := nodeAddresses(inst, i.c.cfg.Global.NodeIPFamilies)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", node.Name, err)
	}
	return &cloudprovider.InstanceMetadata{
		ProviderID:       providerid.Format(inst.Zone, inst.ID),
		InstanceType:     inst.Type,
		NodeAddresses:    inNodeOrder(addrs, node.Status.Addresses),
		Zone:             inst.Zone,
		Region:           i.c.env.Region,
		AdditionalLabels: labels,
	}, nil
}

// InstanceExists says false only on positive evidence: the instance is
// terminated, or successful lookups have missed it at least twice over the
// absence grace period and the node deletion breaker finds few other Nodes
// missing. Errors, throttles and timeouts return an error, so the lifecycle
// controller never deletes a Node because AWS was unreachable.
func (i *instancesV2) InstanceExists(ctx context.Context, node *corev1.Node) (bool, error) {
	id, obs, err := i.observe(ctx, node)
	if err != nil {
		return false, err
	}
	if obs.Instance != nil {
		if obs.Instance.Terminated() {
			klog.InfoS("Instance is terminated; the Node may be deleted", "node", klog.KObj(node), "instance", id)
			return false, nil
		}
		i.c.recheckBreaker(ctx)
		return true, nil
	}
	missingFor := obs.ObservedAt.Sub(obs.AbsentSince)
	if obs.AbsentChecks >= 2 && missingFor >= i.c.flags.AbsenceGracePeriod {
		release, err := i.releaseMissing(ctx, node, id, missingFor)
		if err != nil {
			return false, err
		}
		if !release {
			return true, nil // withheld: the Node stays
		}
		klog.InfoS("Instance has been missing from EC2 past the grace period; the Node may be deleted",
			"node", klog.KObj(node), "instance", id, "missingFor", missingFor, "checks", obs.AbsentChecks)
		i.c.events.Eventf(node, corev1.EventTypeWarning, ReasonInstanceAbsent,
			"EC2 instance %s has been missing from EC2 for %s (%d lookups); the Node is treated as deleted.", id, missingFor.Round(1e9), obs.AbsentChecks)
		return false, nil
	}
	klog.V(2).InfoS("Instance missing from EC2 but within the grace period; keeping the Node",
		"node", klog.KObj(node), "instance", id, "missingFor", missingFor, "gracePeriod", i.c.flags.AbsenceGracePeriod)
	return true, nil
}

// InstanceShutdown is true for stopped and stopping instances.
func (i *instancesV2) InstanceShutdown(ctx context.Context, node *corev1.Node) (bool, error) {
	_, obs, err := i.observe(ctx, node)
	if err != nil {
		return false, err
	}
	return obs.Instance != nil && obs.Instance.ShutDown(), nil
}
