package routes

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/instances"
)

// target is what a route to one instance names.
type target struct {
	instanceID string
	// eniID is set when the instance has several network interfaces: EC2
	// refuses an instance target then, so the route names the primary
	// interface (the one the instance's source/destination check covers).
	eniID string
	enis  []string
}

// matches reports whether r already leads to the target.
func (t target) matches(r route) bool {
	return !r.blackhole && (r.instanceID == t.instanceID || (r.eniID != "" && slices.Contains(t.enis, r.eniID)))
}

// Create routes want.DestinationCIDR to the instance of want.TargetNode,
// turning the source/destination check of the route's target off first
// (only when it is on). A blackholed route, or one to another target, already at that
// destination is replaced.
func (m *Manager) Create(ctx context.Context, want *cloudprovider.Route) error {
	dest, err := parseDestination(want.DestinationCIDR)
	if err != nil {
		return err
	}
	if !m.inClusterCIDRs(dest) {
		return fmt.Errorf("pod CIDR %s of Node %s is outside the cluster CIDRs %v: the CCM would not recognise the route as its own\n"+
			"fix: set the CCM's --cluster-cidr to the CIDRs the Nodes' pod CIDRs are allocated from", dest, want.TargetNode, m.cidrs)
	}
	node, err := m.nodes.Get(string(want.TargetNode))
	if err != nil {
		return fmt.Errorf("route %s to Node %s: %w", dest, want.TargetNode, err)
	}
	inst, observedAt, err := m.instanceOf(ctx, node)
	if err != nil {
		return fmt.Errorf("route %s to Node %s: %w", dest, want.TargetNode, err)
	}
	tgt := targetOf(inst)

	unlock := m.lockDest(dest)
	defer unlock()
	t, err := m.current(ctx)
	if err != nil {
		m.reportTableProblem(err, &node)
		return fmt.Errorf("route %s to Node %s: %w", dest, want.TargetNode, err)
	}
	m.mu.Lock()
	existing, exists := t.routes[dest]
	m.mu.Unlock()
	if exists && existing.fixed {
		return fmt.Errorf("route %s to Node %s: route table %s has a local or propagated route to %s, which the CCM cannot replace\n"+
			"fix: allocate pod CIDRs (--cluster-cidr) outside the VPC's CIDRs and propagated ranges", dest, want.TargetNode, t.id, dest)
	}
	if err := m.sourceDestCheckOff(ctx, inst, tgt, observedAt); err != nil {
		return fmt.Errorf("route %s to Node %s: %w", dest, want.TargetNode, err)
	}
	switch {
	case exists && tgt.matches(existing):
		klog.V(2).InfoS("Route already leads to the Node's instance", "table", t.id, "destination", dest, "node", want.TargetNode, "instance", inst.ID)
	case exists:
		err = m.replace(ctx, t, dest, tgt, existing)
	default:
		err = m.create(ctx, t, dest, tgt, node)
	}
	if err != nil {
		return fmt.Errorf("route %s to Node %s (instance %s): %w", dest, want.TargetNode, inst.ID, err)
	}
	m.mu.Lock()
	t.routes[dest] = route{dest: dest, instanceID: tgt.instanceID, eniID: tgt.eniID}
	if m.last == t {
		m.owned[dest] = string(want.TargetNode)
	}
	m.mu.Unlock()
	return nil
}

// instanceOf finds the Node's instance in the shared view.
func (m *Manager) instanceOf(ctx context.Context, n Node) (*instances.Instance, observed, error) {
	if n.InstanceID == "" {
		inst, err := m.instances.ByName(ctx, n.Node.Name)
		if err != nil {
			return nil, observed{}, fmt.Errorf("find the Node's instance by private DNS name: %w", err)
		}
		return inst, observed{}, nil
	}
	obs, err := m.instances.ByID(ctx, n.InstanceID)
	switch {
	case err != nil:
		return nil, observed{}, err
	case obs.Instance == nil:
		return nil, observed{}, fmt.Errorf("instance %s is not in EC2", n.InstanceID)
	case obs.Instance.Terminated():
		return nil, observed{}, fmt.Errorf("instance %s is terminated", n.InstanceID)
	}
	return obs.Instance, observed{at: obs.ObservedAt, known: true}, nil
}

func targetOf(inst *instances.Instance) target {
	t := target{instanceID: inst.ID}
	for _, e := range inst.ENIs {
		t.enis = append(t.enis, e.ID)
	}
	if len(inst.ENIs) > 1 {
		t.eniID = inst.ENIs[0].ID // ordered by device index: the primary
	}
	return t
}

// create adds the route, or replaces one that appeared since the table was
// read. A full table is remembered (see fullTable).
func (m *Manager) create(ctx context.Context, t *table, dest netip.Prefix, tgt target, node Node) error {
	if err := m.refusedAsFull(t.id); err != nil {
		m.warnFull(node, dest, err)
		return err
	}
	in := &ec2.CreateRouteInput{RouteTableId: aws.String(t.id)}
	setDestination(dest, &in.DestinationCidrBlock, &in.DestinationIpv6CidrBlock)
	setTarget(tgt, &in.InstanceId, &in.NetworkInterfaceId)
	err := m.mutate(ctx, func() error { _, err := m.ec2.CreateRoute(ctx, in); return err })
	switch {
	case err == nil:
		klog.InfoS("Created route", "table", t.id, "destination", dest, "instance", tgt.instanceID, "networkInterface", tgt.eniID)
		return nil
	case isCode(err, codeRouteAlreadyExists):
		return m.replace(ctx, t, dest, tgt, route{})
	case isCode(err, codeRouteLimitExceeded):
		full := m.rememberFull(t, err)
		m.warnFull(node, dest, full)
		return full
	}
	return fmt.Errorf("create route in %s: %w", t.id, err)
}

// replace points the route at dest to tgt instead of old.
func (m *Manager) replace(ctx context.Context, t *table, dest netip.Prefix, tgt target, old route) error {
	in := &ec2.ReplaceRouteInput{RouteTableId: aws.String(t.id)}
	setDestination(dest, &in.DestinationCidrBlock, &in.DestinationIpv6CidrBlock)
	setTarget(tgt, &in.InstanceId, &in.NetworkInterfaceId)
	if err := m.mutate(ctx, func() error { _, err := m.ec2.ReplaceRoute(ctx, in); return err }); err != nil {
		return fmt.Errorf("replace route in %s: %w", t.id, err)
	}
	klog.InfoS("Replaced route", "table", t.id, "destination", dest, "instance", tgt.instanceID, "networkInterface", tgt.eniID,
		"wasBlackhole", old.blackhole, "wasInstance", old.instanceID, "wasNetworkInterface", old.eniID, "wasTarget", old.other)
	return nil
}

// Delete removes a route the controller owns: one the last listing
// reported (or the controller made since) that still leads where it did,
// to the Node, or is still blackholed. A route that was replaced
// meanwhile is left alone; anything else is refused.
func (m *Manager) Delete(ctx context.Context, r *cloudprovider.Route) error {
	dest, err := parseDestination(r.DestinationCIDR)
	if err != nil {
		return err
	}
	unlock := m.lockDest(dest)
	defer unlock()
	if _, err := m.current(ctx); err != nil {
		return fmt.Errorf("delete route %s: %w", dest, err)
	}
	m.mu.Lock()
	t := m.last
	now, exists := t.routes[dest]
	node, owned := m.owned[dest]
	m.mu.Unlock()
	switch {
	case !exists:
		return nil
	case !owned:
		return fmt.Errorf("delete route %s from %s: not a route of this controller (its target is not a cluster Node's instance), so it is left alone", dest, t.id)
	case r.Blackhole != now.blackhole || (!r.Blackhole && node != string(r.TargetNode)):
		klog.InfoS("Route changed since it was listed; not deleting it", "table", t.id, "destination", dest,
			"listedBlackhole", r.Blackhole, "listedNode", r.TargetNode, "nowBlackhole", now.blackhole, "nowNode", node)
		return nil
	}
	in := &ec2.DeleteRouteInput{RouteTableId: aws.String(t.id)}
	setDestination(dest, &in.DestinationCidrBlock, &in.DestinationIpv6CidrBlock)
	err = m.mutate(ctx, func() error { _, err := m.ec2.DeleteRoute(ctx, in); return err })
	if err != nil && !isCode(err, codeRouteNotFound) {
		return fmt.Errorf("delete route %s from %s: %w", dest, t.id, err)
	}
	klog.InfoS("Deleted route", "table", t.id, "destination", dest, "node", r.TargetNode, "blackhole", r.Blackhole)
	m.mu.Lock()
	delete(t.routes, dest)
	delete(m.owned, dest)
	m.forgetFull(t.id)
	m.mu.Unlock()
	return nil
}

// setDestination fills the field of dest's family.
func setDestination(dest netip.Prefix, v4, v6 **string) {
	if dest.Addr().Is4() {
		*v4 = aws.String(dest.String())
	} else {
		*v6 = aws.String(dest.String())
	}
}

func setTarget(t target, instance, eni **string) {
	if t.eniID != "" {
		*eni = aws.String(t.eniID)
	} else {
		*instance = aws.String(t.instanceID)
	}
}

// observed is when the view observed an instance, if known.
type observed struct {
	at    time.Time
	known bool
}

// sourceDestCheckOff turns the source/destination check of the route's
// target off, so it accepts traffic for its pods' addresses: only when it
// is on, and not again when the controller already turned it off after the
// view observed it on (the view keeps its observation up to MaxAge).
//
// EC2 keeps the check per network interface; an instance's attribute is
// its primary interface's, and ModifyInstanceAttribute changes it only on
// an instance with one interface ("There are multiple interfaces attached
// to instance ..." otherwise). A route to an instance with several
// interfaces targets the primary one (targetOf), whose check is the
// instance's attribute too, so it is read there and changed with
// ModifyNetworkInterfaceAttribute. An instance with one interface keeps
// upstream's instance call, so the permissions of existing roles still do.
func (m *Manager) sourceDestCheckOff(ctx context.Context, inst *instances.Instance, tgt target, seen observed) error {
	if !inst.SourceDestCheck {
		return nil
	}
	key := inst.ID
	if tgt.eniID != "" {
		key = tgt.eniID
	}
	m.mu.Lock()
	at, done := m.checkOff[key]
	m.mu.Unlock()
	if done && (!seen.known || !at.Before(seen.at)) {
		return nil
	}
	off := &ec2types.AttributeBooleanValue{Value: aws.Bool(false)}
	if tgt.eniID != "" {
		in := &ec2.ModifyNetworkInterfaceAttributeInput{NetworkInterfaceId: aws.String(tgt.eniID), SourceDestCheck: off}
		err := m.mutate(ctx, func() error { _, err := m.ec2.ModifyNetworkInterfaceAttribute(ctx, in); return err })
		switch {
		case isCode(err, codeUnauthorized):
			return fmt.Errorf("turn the source/destination check of network interface %s (primary interface of instance %s) off: %w\n"+
				"fix: tag the interface %s=owned (the least-privilege policy allows the change only on the cluster's interfaces; "+
				"a network-interface TagSpecification in the launch template tags new ones), or grant ec2:ModifyNetworkInterfaceAttribute on it",
				tgt.eniID, inst.ID, err, clustertag.Key(m.env.ClusterID))
		case err != nil:
			return fmt.Errorf("turn the source/destination check of network interface %s (primary interface of instance %s) off: %w", tgt.eniID, inst.ID, err)
		}
		klog.InfoS("Turned the source/destination check off", "instance", inst.ID, "networkInterface", tgt.eniID)
	} else {
		in := &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(inst.ID), SourceDestCheck: off}
		if err := m.mutate(ctx, func() error { _, err := m.ec2.ModifyInstanceAttribute(ctx, in); return err }); err != nil {
			return fmt.Errorf("turn the source/destination check of instance %s off: %w", inst.ID, err)
		}
		klog.InfoS("Turned the source/destination check off", "instance", inst.ID)
	}
	m.mu.Lock()
	m.checkOff[key] = m.clock.Now()
	m.mu.Unlock()
	return nil
}
