//go:build linux

package bench

import (
	"context"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// lbServices is how many Classic and how many NLB Services the load
// balancer scenario creates (BENCH_LB_SERVICES of each).
var lbServices = envInt("BENCH_LB_SERVICES", 10)

const (
	lbNamespace = "default"
	lbAnnType   = "service.beta.kubernetes.io/aws-load-balancer-type"
	nlbPorts    = 2
	// lbQuiet is how long the load-balancer calls must stay unchanged
	// before a sync counts as over: the service controller gives no other
	// signal.
	lbQuiet   = 3 * time.Second
	lbTimeout = 10 * time.Minute
)

// lbServiceNames are the Classic and NLB Services the scenario creates.
func lbServiceNames() (clbs, nlbs []string) {
	for i := range lbServices {
		clbs = append(clbs, fmt.Sprintf("bench-clb-%d", i))
		nlbs = append(nlbs, fmt.Sprintf("bench-nlb-%d", i))
	}
	return clbs, nlbs
}

// lbAdded is the instance the load-balancer scenario's node step added.
var lbAdded string

// runLoadBalancers: S Classic and S NLB Services over the joined cluster,
// their creation, an unchanged re-sync after a CCM restart and one in the
// same process (annotation touched), a node added, and deletion.
func runLoadBalancers(b *testing.B, r *result) {
	S := lbServices
	c := startCCM(b, r, ccmArgs{})
	r.note(b, "production defaults for the service controller (one service worker); %d Classic Services (one TCP port) and %d NLB Services (%d TCP ports) created at once over %d nodes",
		S, S, nlbPorts, env.nodes.count())
	clbs, nlbs := lbServiceNames()
	all := append(slices.Clone(clbs), nlbs...)
	b.Cleanup(func() { deleteServices(context.Background(), all) }) // a failed run leaves none behind

	// Create.
	before := countCalls()
	start := time.Now()
	err := parallel(len(all), func(i int) error {
		return createLBService(context.Background(), all[i], i >= S)
	})
	if err != nil {
		b.Fatal(err)
	}
	waitUntil(b, lbTimeout, fmt.Sprintf("%d Services with a load-balancer hostname", len(all)), func() bool {
		return withHostname(all) == len(all)
	})
	elapsed := time.Since(start)
	created := settleLB(b, before)
	r.note(b, "create: %s", formatLB(created))
	cl, nl, ec2 := splitLB(created)
	r.record(b, "create_seconds", fmt.Sprintf("create: s until all %d Services have a hostname", len(all)), "%.1f", elapsed.Seconds())
	r.record(b, "create_elb_calls_per_classic", "create: ELB calls per Classic Service", "%.1f", float64(cl)/float64(S))
	r.record(b, "create_elbv2_calls_per_nlb", fmt.Sprintf("create: ELBv2 calls per NLB Service (%d ports)", nlbPorts), "%.1f", float64(nl)/float64(S))
	r.record(b, "create_ec2_calls_per_service", "create: EC2 calls per Service (shared; not DescribeInstances or DescribeInstanceTopology)", "%.2f", float64(ec2)/float64(len(all)))

	// Restart: the new CCM's service controller ensures every Service again
	// with nothing changed. At start its node sync also finds the node set
	// "changed" (from none) and updates the backends of the Services it
	// already knows, so a Service gets one EnsureLoadBalancer and zero or
	// more UpdateLoadBalancer calls; both are unchanged syncs, counted from
	// the CCM's log.
	c.stop()
	before = countCalls()
	c2 := startCCM(b, r, ccmArgs{suffix: "restart"})
	resync := settleLB(b, before)
	sy := c2.lbSyncs()
	r.note(b, "unchanged sync (restart): %s; syncs: Classic %d ensure + %d backend update, NLB %d ensure + %d backend update", formatLB(resync),
		sy["clb"].ensure, sy["clb"].update, sy["nlb"].ensure, sy["nlb"].update)
	cl, nl, ec2 = splitLB(resync)
	clSyncs, nlSyncs := sy["clb"].ensure+sy["clb"].update, sy["nlb"].ensure+sy["nlb"].update
	if clSyncs == 0 || nlSyncs == 0 {
		b.Fatalf("no syncs found in %s", c2.logPath)
	}
	share := float64(ec2) / float64(clSyncs+nlSyncs)
	r.record(b, "restart_mutating_calls", "unchanged sync (restart): mutating calls", "%.0f", float64(total(mutatingLB(resync))))
	r.record(b, "restart_calls_per_classic_sync", "unchanged sync (restart): calls per Classic sync (ELB + EC2 share)", "%.2f", float64(cl)/float64(clSyncs)+share)
	r.record(b, "restart_calls_per_nlb_sync", fmt.Sprintf("unchanged sync (restart): calls per NLB sync, %d ports (ELBv2 + EC2 share)", nlbPorts), "%.2f", float64(nl)/float64(nlSyncs)+share)
	r.record(b, "restart_calls_per_service", "restart: load-balancer calls per Service (all its syncs)", "%.2f", float64(total(resync))/float64(len(all)))

	// The same in a running process: an annotation no controller reads
	// changes on every Service, so each is ensured once more with nothing
	// to do and the stale-rule search (first sync of a load balancer in a
	// process) already done.
	before = countCalls()
	if err := parallel(len(all), func(i int) error { return touchService(context.Background(), all[i]) }); err != nil {
		b.Fatal(err)
	}
	touched := settleLB(b, before)
	sy1 := c2.lbSyncs()
	tcl, tnl := sy1["clb"].ensure+sy1["clb"].update-clSyncs, sy1["nlb"].ensure+sy1["nlb"].update-nlSyncs
	r.note(b, "unchanged sync (annotation touched, same process): %s; syncs: Classic %d, NLB %d", formatLB(touched), tcl, tnl)
	if tcl == 0 || tnl == 0 {
		b.Fatalf("no syncs after the touch in %s", c2.logPath)
	}
	cl, nl, ec2 = splitLB(touched)
	share = float64(ec2) / float64(tcl+tnl)
	r.record(b, "touch_mutating_calls", "unchanged sync (touch): mutating calls", "%.0f", float64(total(mutatingLB(touched))))
	r.record(b, "touch_calls_per_classic_sync", "unchanged sync (touch): calls per Classic sync", "%.2f", float64(cl)/float64(tcl)+share)
	r.record(b, "touch_calls_per_nlb_sync", fmt.Sprintf("unchanged sync (touch): calls per NLB sync, %d ports", nlbPorts), "%.2f", float64(nl)/float64(tnl)+share)
	sy = sy1

	// One instance and its Node (providerID set, as kubelets with
	// --provider-id register) join: the service controller updates every
	// load balancer's targets.
	insts, err := addInstances(1)
	if err != nil {
		b.Fatal(err)
	}
	in := insts[0]
	lbAdded = in.ID
	before = countCalls()
	if err := registerNodeWithProviderID(context.Background(), in.PrivateDNSName, fmt.Sprintf("aws:///%s/%s", in.AvailabilityZone, in.ID)); err != nil {
		b.Fatal(err)
	}
	waitUntil(b, time.Minute, "the added node initialized", func() bool { return env.nodes.initializedCount([]string{in.PrivateDNSName}) == 1 })
	added := settleLB(b, before)
	sy2 := c2.lbSyncs()
	r.note(b, "node added: %s; backend updates: Classic %d, NLB %d; ensures: %d", formatLB(added), sy2["clb"].update-sy["clb"].update, sy2["nlb"].update-sy["nlb"].update,
		sy2["clb"].ensure+sy2["nlb"].ensure-sy["clb"].ensure-sy["nlb"].ensure)
	cl, nl, ec2 = splitLB(added)
	mcl, mnl, mec2 := splitLB(mutatingLB(added))
	share, mshare := float64(ec2)/float64(len(all)), float64(mec2)/float64(len(all))
	r.record(b, "node_added_calls_per_classic", "node added: calls per Classic Service (ELB + EC2 share)", "%.2f", float64(cl)/float64(S)+share)
	r.record(b, "node_added_mutating_per_classic", "node added: mutating calls per Classic Service", "%.2f", float64(mcl)/float64(S)+mshare)
	r.record(b, "node_added_calls_per_nlb", "node added: calls per NLB Service (ELBv2 + EC2 share)", "%.2f", float64(nl)/float64(S)+share)
	r.record(b, "node_added_mutating_per_nlb", "node added: mutating calls per NLB Service", "%.2f", float64(mnl)/float64(S)+mshare)
	lbs := env.aws.ClassicLoadBalancers()
	for _, lb := range lbs {
		if !slices.Contains(lb.Instances, in.ID) {
			r.note(b, "node added: Classic load balancer %s does not have the new instance %s", lb.Name, in.ID)
		}
	}
	for _, tg := range env.aws.TargetGroups() {
		if !slices.ContainsFunc(tg.Targets, func(t awsemu.TargetState) bool { return t.ID == in.ID }) {
			r.note(b, "node added: target group %s does not have the new instance %s", tg.Name, in.ID)
		}
	}
	if len(lbs) > 0 {
		r.note(b, "targets: each Classic load balancer has %d instances registered", len(lbs[0].Instances))
	}

	// Delete every Service and wait until the service controller has
	// removed their finalizers.
	before = countCalls()
	start = time.Now()
	deleteServices(context.Background(), all)
	waitUntil(b, lbTimeout, fmt.Sprintf("%d Services gone", len(all)), func() bool { return remaining(all) == 0 })
	gone := time.Since(start)
	deleted := diffLB(before, countCalls())
	r.note(b, "delete: %s", formatLB(deleted))
	r.record(b, "delete_seconds", fmt.Sprintf("delete: s until all %d Services are gone", len(all)), "%.1f", gone.Seconds())
	r.record(b, "delete_calls_per_service", "delete: calls per Service (ELB, ELBv2, EC2)", "%.1f", float64(total(deleted))/float64(len(all)))
	left, what := leftInAWS()
	r.note(b, "left in AWS after delete: %s", what)
	r.record(b, "resources_left", "resources left in AWS after delete", "%.0f", float64(left))
	finish(b, r, c, c2)
}

// resetLoadBalancers removes the node step's Node and instance, so the
// next binary adds one to the same cluster; it says what the first binary
// left in AWS (its run's resources_left figure).
func resetLoadBalancers(b *testing.B) {
	b.Helper()
	if lbAdded == "" {
		return
	}
	in, ok := env.aws.Instance(lbAdded)
	if ok {
		if err := deleteNodes(context.Background(), []string{in.PrivateDNSName}); err != nil {
			b.Fatal(err)
		}
		if err := env.aws.RemoveInstance(lbAdded); err != nil {
			b.Fatal(err)
		}
	}
	lbAdded = ""
}

type syncCount struct{ ensure, update int }

var (
	ensureRE = regexp.MustCompile(`Ensuring load balancer for service ` + lbNamespace + `/bench-(clb|nlb)-`)
	updateRE = regexp.MustCompile(`Updating backends for load balancer ` + lbNamespace + `/bench-(clb|nlb)-`)
)

// lbSyncs counts the service controller's EnsureLoadBalancer and
// UpdateLoadBalancer calls by kind ("clb", "nlb") in the CCM's log so far
// (it logs both at -v=2).
func (c *ccm) lbSyncs() map[string]syncCount {
	out := map[string]syncCount{}
	data, err := os.ReadFile(c.logPath)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(data), "\n") {
		if m := ensureRE.FindStringSubmatch(line); m != nil {
			n := out[m[1]]
			n.ensure++
			out[m[1]] = n
		} else if m := updateRE.FindStringSubmatch(line); m != nil {
			n := out[m[1]]
			n.update++
			out[m[1]] = n
		}
	}
	return out
}

// createLBService creates a LoadBalancer Service: Classic with one TCP
// port, or NLB with nlbPorts TCP ports.
func createLBService(ctx context.Context, name string, nlb bool) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: lbNamespace},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "p80", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}},
	}
	if nlb {
		svc.Annotations = map[string]string{lbAnnType: "nlb"}
		for p := 1; p < nlbPorts; p++ {
			port := int32(80 + 363*p) // 443, ...
			svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: fmt.Sprintf("p%d", port), Port: port, TargetPort: intstr.FromInt32(8000 + port), Protocol: corev1.ProtocolTCP})
		}
	}
	if _, err := env.kube.CoreV1().Services(lbNamespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create service %s: %w", name, err)
	}
	return nil
}

// withHostname counts the named Services whose status has a hostname.
func withHostname(names []string) int {
	list, err := env.kube.CoreV1().Services(lbNamespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return 0
	}
	n := 0
	for _, svc := range list.Items {
		if slices.Contains(names, svc.Name) && len(svc.Status.LoadBalancer.Ingress) > 0 && svc.Status.LoadBalancer.Ingress[0].Hostname != "" {
			n++
		}
	}
	return n
}

// remaining counts the named Services that still exist.
func remaining(names []string) int {
	list, err := env.kube.CoreV1().Services(lbNamespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return len(names)
	}
	n := 0
	for _, svc := range list.Items {
		if slices.Contains(names, svc.Name) {
			n++
		}
	}
	return n
}

func deleteServices(ctx context.Context, names []string) {
	for _, name := range names {
		err := env.kube.CoreV1().Services(lbNamespace).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			fmt.Printf("delete service %s: %v\n", name, err)
		}
	}
}

// touchService changes an annotation no controller reads, which makes the
// service controller ensure the load balancer again with the same desired
// state.
func touchService(ctx context.Context, name string) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"example.com/touched":%q}}}`, time.Now().Format(time.RFC3339Nano))
	_, err := env.kube.CoreV1().Services(lbNamespace).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// registerNodeWithProviderID creates a Ready Node the way a kubelet with
// --cloud-provider=external --provider-id registers.
func registerNodeWithProviderID(ctx context.Context, name, providerID string) error {
	now := metav1.Now()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name, corev1.LabelOSStable: "linux"}},
		Spec: corev1.NodeSpec{ProviderID: providerID,
			Taints: []corev1.Taint{{Key: cloudproviderapi.TaintExternalCloudProvider, Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: now, LastTransitionTime: now,
		}}},
	}
	if _, err := env.kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create node %s: %w", name, err)
	}
	return nil
}

// isLBCall says whether a counter belongs to load balancers: every ELB and
// ELBv2 call and every EC2 call but DescribeInstances and
// DescribeInstanceTopology (the node controllers', which upstream also
// makes for every Node its service controller lists).
func isLBCall(k string) bool {
	return strings.HasPrefix(k, "elasticloadbalancing") ||
		(strings.HasPrefix(k, "ec2:") && k != "ec2:DescribeInstances" && k != "ec2:DescribeInstanceTopology")
}

// diffLB returns the load-balancer calls made between two snapshots.
func diffLB(before, after calls) calls {
	out := calls{}
	for k, v := range after {
		if d := v - before[k]; d != 0 && isLBCall(k) {
			out[k] = d
		}
	}
	return out
}

// settleLB waits until the load-balancer calls have changed since before
// and then stayed the same for lbQuiet, and returns the difference.
func settleLB(b *testing.B, before calls) calls {
	b.Helper()
	deadline := time.Now().Add(lbTimeout)
	last, changedAt := diffLB(before, countCalls()), time.Now()
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		cur := diffLB(before, countCalls())
		if !maps.Equal(cur, last) {
			last, changedAt = cur, time.Now()
			continue
		}
		if len(cur) > 0 && time.Since(changedAt) >= lbQuiet {
			return cur
		}
	}
	b.Fatalf("load-balancer calls did not settle within %s (so far: %s)", lbTimeout, formatLB(last))
	return nil
}

// splitLB sums calls by API: Classic ELB, ELBv2, EC2.
func splitLB(c calls) (elb, elbv2, ec2 int) {
	for k, v := range c {
		switch {
		case strings.HasPrefix(k, "elasticloadbalancing:"):
			elb += v
		case strings.HasPrefix(k, "elasticloadbalancingv2:"):
			elbv2 += v
		case strings.HasPrefix(k, "ec2:"):
			ec2 += v
		}
	}
	return elb, elbv2, ec2
}

// mutatingLB keeps the calls whose action does not start with Describe.
func mutatingLB(c calls) calls {
	out := calls{}
	for k, v := range c {
		if !strings.HasPrefix(k[strings.Index(k, ":")+1:], "Describe") {
			out[k] = v
		}
	}
	return out
}

func total(c calls) int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

func formatLB(c calls) string {
	if len(c) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(c)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, c[k]))
	}
	return fmt.Sprintf("%d calls: %s", total(c), strings.Join(parts, " "))
}

// leftInAWS counts what load balancers leave behind: load balancers,
// listeners, target groups, k8s-elb- security groups and rules in the
// node group (each source of each permission).
func leftInAWS() (int, string) {
	inv := env.aws.Inventory()
	sgs := len(env.aws.SecurityGroupsNamed("k8s-elb-"))
	rules := 0
	for _, g := range env.aws.SecurityGroups() {
		if g.ID == nodeGroupID {
			for _, p := range g.Ingress {
				rules += len(p.CIDRs) + len(p.IPv6CIDRs) + len(p.GroupIDs)
			}
		}
	}
	n := inv.ClassicLBs + inv.NetworkLBs + inv.Listeners + inv.TargetGroups + sgs + rules
	return n, fmt.Sprintf("%d Classic LBs, %d ELBv2 LBs, %d listeners, %d target groups, %d k8s-elb- security groups, %d rules in the node group",
		inv.ClassicLBs, inv.NetworkLBs, inv.Listeners, inv.TargetGroups, sgs, rules)
}
