package lb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/awsccmctl/awsccmctl/internal/lbconfig"
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

// targetChunk is how many targets one Register/DeregisterTargets carries.
const targetChunk = 100

// targetGroupName is the name of listener l's target group with health
// check hc (lbnames.TargetGroupName, upstream's).
func targetGroupName(clusterID string, svc *corev1.Service, l lbconfig.Listener, hc lbconfig.HealthCheck) string {
	return lbnames.TargetGroupName(clusterID, svc, lbnames.TargetGroupInputs{
		Port: l.Port, NodePort: l.NodePort, TargetProtocol: l.BackendProtocol,
		HealthCheckProtocol: hc.Protocol, HealthCheckInterval: hc.Interval,
	})
}

// syncNLBListeners makes one listener per Service port, each forwarding to
// a target group of the node port with the Service's health check, and
// removes listeners (and their groups) the Service no longer has. With an
// invalid listener or health-check annotation the listeners are kept as
// they are and only targets are synced.
func (r *Reconciler) syncNLBListeners(ctx context.Context, svc *corev1.Service, cfg *lbconfig.Config, st *nlbState, targets []target) error {
	syncTargets := cfg.Valid(lbconfig.KeyTargetNodeLabels)
	if !cfg.Valid(listenerKeys...) || !cfg.Valid(healthCheckKeys...) {
		// The listeners stay as they are, and so does every group of theirs.
		st.used = map[string]bool{}
		for arn := range st.groups {
			st.used[arn] = true
		}
		if !syncTargets {
			return nil
		}
		for _, tg := range st.groups {
			if err := r.syncTargets(ctx, tg, targets, false); err != nil {
				return err
			}
		}
		return nil
	}
	used := map[string]bool{} // target group ARNs forwarded to after this sync
	st.used = used
	var retired []string
	for _, l := range cfg.Listeners {
		cur := listenerOnPort(st.listeners, l.Port)
		var tg *elbv2types.TargetGroup
		if cur != nil {
			tg = st.groups[forwardTarget(cur)]
		}
		if tg == nil || !reusableTargetGroup(tg, l, cfg.HealthCheck) {
			created, err := r.ensureTargetGroup(ctx, svc, cfg, st, l, targets)
			if err != nil {
				return err
			}
			if tg != nil {
				retired = append(retired, aws.ToString(tg.TargetGroupArn))
			}
			tg = created
		} else {
			if err := r.syncHealthCheck(ctx, tg, cfg.HealthCheck); err != nil {
				return err
			}
			if syncTargets {
				if err := r.syncTargets(ctx, tg, targets, st.fresh[aws.ToString(tg.TargetGroupArn)]); err != nil {
					return err
				}
			}
		}
		used[aws.ToString(tg.TargetGroupArn)] = true
		if err := r.syncTargetGroupAttributes(ctx, cfg, tg); err != nil {
			return err
		}
		if err := r.syncListener(ctx, svc, cfg, st, cur, l, tg); err != nil {
			return err
		}
	}
	for _, cur := range st.listeners {
		if slices.ContainsFunc(cfg.Listeners, func(l lbconfig.Listener) bool { return l.Port == aws.ToInt32(cur.Port) }) {
			continue
		}
		if _, err := r.ELBv2.DeleteListener(ctx, &elbv2.DeleteListenerInput{ListenerArn: cur.ListenerArn}); err != nil && !isCode(err, codeListenerNotFound) {
			return fmt.Errorf("delete listener on port %d of %s: %w", aws.ToInt32(cur.Port), cfg.Name, err)
		}
		retired = append(retired, forwardTarget(&cur))
	}
	var errs []error
	for _, arn := range uniqueSorted(retired) {
		if arn == "" || used[arn] {
			continue
		}
		errs = append(errs, r.deleteTargetGroup(ctx, cfg.Name, arn))
	}
	st.cleanupErr = errors.Join(errs...)
	return nil
}

// reusableTargetGroup: protocol, port, health-check protocol and interval
// match (changing them makes a new group, as upstream does: its name
// hashes them).
func reusableTargetGroup(tg *elbv2types.TargetGroup, l lbconfig.Listener, hc lbconfig.HealthCheck) bool {
	return string(tg.Protocol) == l.BackendProtocol && aws.ToInt32(tg.Port) == l.NodePort &&
		string(tg.HealthCheckProtocol) == hc.Protocol && aws.ToInt32(tg.HealthCheckIntervalSeconds) == hc.Interval
}

func listenerOnPort(ls []elbv2types.Listener, port int32) *elbv2types.Listener {
	for i := range ls {
		if aws.ToInt32(ls[i].Port) == port {
			return &ls[i]
		}
	}
	return nil
}

// forwardTarget is the target group a listener forwards to.
func forwardTarget(l *elbv2types.Listener) string {
	for _, a := range l.DefaultActions {
		if a.Type == elbv2types.ActionTypeEnumForward && a.TargetGroupArn != nil {
			return aws.ToString(a.TargetGroupArn)
		}
	}
	return ""
}

// ensureTargetGroup finds the listener's target group by name (left by an
// earlier, interrupted sync) or creates it, and registers the targets.
func (r *Reconciler) ensureTargetGroup(ctx context.Context, svc *corev1.Service, cfg *lbconfig.Config, st *nlbState, l lbconfig.Listener, targets []target) (*elbv2types.TargetGroup, error) {
	name := targetGroupName(r.Env.ClusterID, svc, l, cfg.HealthCheck)
	for _, tg := range st.groups {
		if aws.ToString(tg.TargetGroupName) == name {
			return tg, r.syncTargets(ctx, tg, targets, false)
		}
	}
	if !st.created {
		found, err := r.targetGroupsNamed(ctx, name)
		if err != nil {
			return nil, err
		}
		if len(found) > 0 {
			tg := found[0]
			tags, err := r.tagsOf(ctx, aws.ToString(tg.TargetGroupArn))
			if err != nil {
				return nil, err
			}
			if err := r.ownership(tags[aws.ToString(tg.TargetGroupArn)], svc); err != nil {
				return nil, fmt.Errorf("target group %s exists but %w", name, err)
			}
			st.groups[aws.ToString(tg.TargetGroupArn)] = tg
			return tg, r.syncTargets(ctx, tg, targets, false)
		}
	}
	hc := cfg.HealthCheck
	in := &elbv2.CreateTargetGroupInput{
		Name: aws.String(name), VpcId: st.lb.VpcId, Port: aws.Int32(l.NodePort),
		Protocol: elbv2types.ProtocolEnum(l.BackendProtocol), TargetType: elbv2types.TargetTypeEnumInstance,
		HealthCheckProtocol: elbv2types.ProtocolEnum(hc.Protocol), HealthCheckPort: aws.String(hc.Port),
		HealthCheckIntervalSeconds: aws.Int32(hc.Interval),
		HealthyThresholdCount:      aws.Int32(hc.HealthyThreshold), UnhealthyThresholdCount: aws.Int32(hc.UnhealthyThreshold),
		Tags: elbv2TagList(r.ownedTags(svc, cfg)),
	}
	if hc.Protocol != lbconfig.ProtocolTCP {
		in.HealthCheckPath = aws.String(hc.Path)
	}
	if hc.Timeout > 0 {
		// Upstream parses the annotation but never sends it.
		in.HealthCheckTimeoutSeconds = aws.Int32(hc.Timeout)
	}
	out, err := r.ELBv2.CreateTargetGroup(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("create target group %s: %w", name, err)
	}
	if len(out.TargetGroups) != 1 {
		return nil, fmt.Errorf("create target group %s: AWS returned %d groups", name, len(out.TargetGroups))
	}
	tg := &out.TargetGroups[0]
	arn := aws.ToString(tg.TargetGroupArn)
	st.groups[arn], st.fresh[arn] = tg, true
	klog.InfoS("Created target group", "service", klog.KObj(svc), "name", name, "port", l.NodePort, "protocol", l.BackendProtocol)
	return tg, r.syncTargets(ctx, tg, targets, true)
}

// targetGroupsNamed returns the target groups with these names; unknown
// names are skipped (AWS fails the whole call for one unknown name, so
// names are asked one at a time).
func (r *Reconciler) targetGroupsNamed(ctx context.Context, names ...string) ([]*elbv2types.TargetGroup, error) {
	var out []*elbv2types.TargetGroup
	for _, n := range names {
		got, err := r.ELBv2.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{Names: []string{n}})
		if err != nil {
			if isCode(err, codeTargetGroupNotFound) {
				continue
			}
			return nil, fmt.Errorf("describe target group %s: %w", n, err)
		}
		for i := range got.TargetGroups {
			out = append(out, &got.TargetGroups[i])
		}
	}
	return out, nil
}

// syncHealthCheck changes the settings that differ; the path is compared
// with the target group (upstream compares it with its own request and so
// modifies every HTTP health check on every sync).
func (r *Reconciler) syncHealthCheck(ctx context.Context, tg *elbv2types.TargetGroup, hc lbconfig.HealthCheck) error {
	in := &elbv2.ModifyTargetGroupInput{TargetGroupArn: tg.TargetGroupArn}
	dirty := false
	if aws.ToString(tg.HealthCheckPort) != hc.Port {
		in.HealthCheckPort, dirty = aws.String(hc.Port), true
	}
	if aws.ToInt32(tg.HealthyThresholdCount) != hc.HealthyThreshold || aws.ToInt32(tg.UnhealthyThresholdCount) != hc.UnhealthyThreshold {
		in.HealthyThresholdCount, in.UnhealthyThresholdCount, dirty = aws.Int32(hc.HealthyThreshold), aws.Int32(hc.UnhealthyThreshold), true
	}
	if hc.Protocol != lbconfig.ProtocolTCP && aws.ToString(tg.HealthCheckPath) != hc.Path {
		in.HealthCheckPath, dirty = aws.String(hc.Path), true
	}
	if hc.Timeout > 0 && aws.ToInt32(tg.HealthCheckTimeoutSeconds) != hc.Timeout {
		in.HealthCheckTimeoutSeconds, dirty = aws.Int32(hc.Timeout), true
	}
	if !dirty {
		return nil
	}
	out, err := r.ELBv2.ModifyTargetGroup(ctx, in)
	if err != nil {
		return fmt.Errorf("modify health check of target group %s: %w", aws.ToString(tg.TargetGroupName), err)
	}
	if len(out.TargetGroups) == 1 {
		*tg = out.TargetGroups[0]
	}
	return nil
}

// syncTargets registers and deregisters instances by difference. A fresh
// group has no targets, so it is not described.
func (r *Reconciler) syncTargets(ctx context.Context, tg *elbv2types.TargetGroup, targets []target, fresh bool) error {
	port := aws.ToInt32(tg.Port)
	have := map[string]bool{}
	if !fresh {
		out, err := r.ELBv2.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: tg.TargetGroupArn})
		if err != nil {
			return fmt.Errorf("describe targets of %s: %w", aws.ToString(tg.TargetGroupName), err)
		}
		for _, d := range out.TargetHealthDescriptions {
			if d.TargetHealth != nil && d.TargetHealth.Reason == elbv2types.TargetHealthReasonEnumDeregistrationInProgress {
				continue // on its way out already
			}
			if d.Target != nil && aws.ToInt32(d.Target.Port) == port {
				have[aws.ToString(d.Target.Id)] = true
			}
		}
	}
	add, remove := registrations(targets, slices.Sorted(maps.Keys(have)))
	for start := 0; start < len(remove); start += targetChunk {
		chunk := remove[start:min(start+targetChunk, len(remove))]
		if _, err := r.ELBv2.DeregisterTargets(ctx, &elbv2.DeregisterTargetsInput{TargetGroupArn: tg.TargetGroupArn, Targets: targetDescriptions(chunk, port)}); err != nil {
			return fmt.Errorf("deregister %d targets from %s: %w", len(chunk), aws.ToString(tg.TargetGroupName), err)
		}
	}
	for start := 0; start < len(add); start += targetChunk {
		chunk := add[start:min(start+targetChunk, len(add))]
		err := registerRunning(chunk, func(ids []string) error {
			_, err := r.ELBv2.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: tg.TargetGroupArn, Targets: targetDescriptions(ids, port)})
			return err
		})
		if err != nil {
			return fmt.Errorf("register %d targets with %s: %w", len(chunk), aws.ToString(tg.TargetGroupName), err)
		}
	}
	if len(add)+len(remove) > 0 {
		klog.V(2).InfoS("Changed targets", "targetGroup", aws.ToString(tg.TargetGroupName), "registered", add, "deregistered", remove)
	}
	return nil
}

func targetDescriptions(ids []string, port int32) []elbv2types.TargetDescription {
	out := make([]elbv2types.TargetDescription, len(ids))
	for i, id := range ids {
		out[i] = elbv2types.TargetDescription{Id: aws.String(id), Port: aws.Int32(port)}
	}
	return out
}

// syncTargetGroupAttributes sets the attributes the Service names, and
// only when they differ; without the annotation nothing is read.
func (r *Reconciler) syncTargetGroupAttributes(ctx context.Context, cfg *lbconfig.Config, tg *elbv2types.TargetGroup) error {
	a := cfg.TargetGroupAttributes
	if (a.PreserveClientIP == nil && a.ProxyProtocolV2 == nil) || !cfg.Valid(lbconfig.KeyTargetGroupAttributes) {
		return nil
	}
	want := map[string]string{}
	if a.PreserveClientIP != nil {
		want[attrPreserveClient] = strconv.FormatBool(*a.PreserveClientIP)
	}
	if a.ProxyProtocolV2 != nil {
		want[attrProxyV2] = strconv.FormatBool(*a.ProxyProtocolV2)
	}
	// A fresh group has AWS's defaults, which depend on its protocol:
	// read them rather than guess.
	have := map[string]string{}
	out, err := r.ELBv2.DescribeTargetGroupAttributes(ctx, &elbv2.DescribeTargetGroupAttributesInput{TargetGroupArn: tg.TargetGroupArn})
	if err != nil {
		return fmt.Errorf("describe attributes of target group %s: %w", aws.ToString(tg.TargetGroupName), err)
	}
	for _, x := range out.Attributes {
		have[aws.ToString(x.Key)] = aws.ToString(x.Value)
	}
	var change []elbv2types.TargetGroupAttribute
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if have[k] != want[k] {
			change = append(change, elbv2types.TargetGroupAttribute{Key: aws.String(k), Value: aws.String(want[k])})
		}
	}
	if len(change) == 0 {
		return nil
	}
	if _, err := r.ELBv2.ModifyTargetGroupAttributes(ctx, &elbv2.ModifyTargetGroupAttributesInput{TargetGroupArn: tg.TargetGroupArn, Attributes: change}); err != nil {
		return fmt.Errorf("modify attributes of target group %s: %w", aws.ToString(tg.TargetGroupName), err)
	}
	return nil
}

// syncListener creates the listener, tagged as upstream tags it (as the
// load balancer), or changes what differs.
func (r *Reconciler) syncListener(ctx context.Context, svc *corev1.Service, cfg *lbconfig.Config, st *nlbState, cur *elbv2types.Listener, l lbconfig.Listener, tg *elbv2types.TargetGroup) error {
	action := []elbv2types.Action{{Type: elbv2types.ActionTypeEnumForward, TargetGroupArn: tg.TargetGroupArn}}
	var certs []elbv2types.Certificate
	var policy *string
	if l.Protocol == lbconfig.ProtocolTLS {
		certs = []elbv2types.Certificate{{CertificateArn: aws.String(l.CertificateARN)}}
		if cfg.SSLNegotiationPolicy != "" {
			policy = aws.String(cfg.SSLNegotiationPolicy)
		}
	}
	if cur == nil {
		_, err := r.ELBv2.CreateListener(ctx, &elbv2.CreateListenerInput{
			LoadBalancerArn: st.lb.LoadBalancerArn, Port: aws.Int32(l.Port), Protocol: elbv2types.ProtocolEnum(l.Protocol),
			DefaultActions: action, Certificates: certs, SslPolicy: policy, Tags: elbv2TagList(r.ownedTags(svc, cfg)),
		})
		if err != nil {
			return fmt.Errorf("create listener on port %d of %s: %w", l.Port, cfg.Name, err)
		}
		return nil
	}
	haveCert := ""
	if len(cur.Certificates) > 0 {
		haveCert = aws.ToString(cur.Certificates[0].CertificateArn)
	}
	same := string(cur.Protocol) == l.Protocol && forwardTarget(cur) == aws.ToString(tg.TargetGroupArn) && haveCert == l.CertificateARN &&
		(policy == nil || aws.ToString(cur.SslPolicy) == *policy)
	if same {
		return nil
	}
	in := &elbv2.ModifyListenerInput{ListenerArn: cur.ListenerArn, Port: aws.Int32(l.Port), Protocol: elbv2types.ProtocolEnum(l.Protocol), DefaultActions: action, Certificates: certs, SslPolicy: policy}
	if _, err := r.ELBv2.ModifyListener(ctx, in); err != nil {
		return fmt.Errorf("modify listener on port %d of %s: %w", l.Port, cfg.Name, err)
	}
	return nil
}

// deleteTargetGroup deletes one of lb's target groups; ResourceInUse
// right after its listener or load balancer went is returned for a later
// retry. Any failure makes lb owe a sweep: once its listener has moved on,
// the group is no longer reachable from the load balancer and is only
// found again by its tags.
func (r *Reconciler) deleteTargetGroup(ctx context.Context, lb, arn string) error {
	if _, err := r.ELBv2.DeleteTargetGroup(ctx, &elbv2.DeleteTargetGroupInput{TargetGroupArn: aws.String(arn)}); err != nil {
		if isCode(err, codeTargetGroupNotFound) {
			return nil
		}
		r.markTargetGroupSweep(lb)
		if isCode(err, codeResourceInUse) {
			return fmt.Errorf("target group %s is still in use; will retry: %w", arn, err)
		}
		return fmt.Errorf("delete target group %s: %w", arn, err)
	}
	klog.InfoS("Deleted target group", "loadBalancer", lb, "arn", arn)
	return nil
}
