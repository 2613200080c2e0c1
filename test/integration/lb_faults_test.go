package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// cleanupFinalizer is the service controller's finalizer: it stays until
// EnsureLoadBalancerDeleted returned nil.
const cleanupFinalizer = "service.kubernetes.io/load-balancer-cleanup"

// injectFault installs f and clears it when the test ends (a fault with
// Remaining may have removed itself already; clearing it again is a no-op).
func injectFault(t *testing.T, f awsemu.Fault) int {
	t.Helper()
	id := env.aws.InjectFault(f)
	t.Cleanup(func() { env.aws.ClearFault(id) })
	return id
}

// getService returns the Service, or nil once it is gone.
func getService(t *testing.T, name string) *corev1.Service {
	t.Helper()
	svc, err := env.kube.CoreV1().Services(lbNamespace).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get service %s: %v", name, err)
	}
	return svc
}

// requireHeld fails unless the Service still exists, is being deleted and
// carries the cleanup finalizer.
func requireHeld(t *testing.T, name, why string) {
	t.Helper()
	svc := getService(t, name)
	if svc == nil {
		t.Fatalf("%s: service %s is already gone (the finalizer was removed while AWS still held its parts)", why, name)
	}
	if svc.DeletionTimestamp == nil || !slices.Contains(svc.Finalizers, cleanupFinalizer) {
		t.Fatalf("%s: service %s: deletionTimestamp %v, finalizers %v; want it being deleted and held by %s", why, name, svc.DeletionTimestamp, svc.Finalizers, cleanupFinalizer)
	}
}

// deleteServiceHeld deletes the Service and waits until it is gone, failing
// if it disappears while left() still reports owned AWS resources: the
// finalizer must hold it until they are deleted. Owned parts are deleted
// before the finalizer is removed, so checking the Service first and then
// AWS cannot race.
func deleteServiceHeld(t *testing.T, name string, timeout time.Duration, left func() []string) {
	t.Helper()
	err := env.kube.CoreV1().Services(lbNamespace).Delete(context.Background(), name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("delete service %s: %v", name, err)
	}
	waitFor(t, timeout, "service "+name+" gone", func(ctx context.Context) (bool, error) {
		_, err := env.kube.CoreV1().Services(lbNamespace).Get(ctx, name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return false, nil
		}
		if l := left(); len(l) > 0 {
			return false, fmt.Errorf("service %s was removed while AWS still holds %v", name, l)
		}
		return true, nil
	})
}

func groupNames(gs []awsemu.SecurityGroup) []string {
	var out []string
	for _, g := range gs {
		out = append(out, g.ID+" ("+g.Name+")")
	}
	return out
}

// TestClassicDeleteAfterFailedCreate: CreateLoadBalancer fails after the
// managed security group was made. Deleting the Service must delete the
// group, and the finalizer must keep the Service until it is gone (Get
// reports the half-built load balancer as existing).
func TestClassicDeleteAfterFailedCreate(t *testing.T) {
	lbNodes(t, 1)
	creates := env.aws.Calls("elasticloadbalancing", "CreateLoadBalancer")
	fault := injectFault(t, awsemu.Fault{Service: "elasticloadbalancing", Action: "CreateLoadBalancer", Code: "TooManyLoadBalancers", HTTPStatus: 400})
	svc := lbService(t, "clb-createfail", nil, nil)
	name := lbName(svc)
	sgName := "k8s-elb-" + name

	waitFor(t, 30*time.Second, "security group "+sgName, func(context.Context) (bool, error) {
		return len(env.aws.SecurityGroupsNamed(sgName)) == 1, nil
	})
	waitWarning(t, svc.Name, "SyncLoadBalancerFailed", "TooManyLoadBalancers")
	if n := env.aws.Calls("elasticloadbalancing", "CreateLoadBalancer") - creates; n < 1 {
		t.Fatalf("CreateLoadBalancer was called %d times, want at least once", n)
	}
	if lbs := env.aws.ClassicLoadBalancers(); len(lbs) != 0 {
		t.Fatalf("Classic load balancers %v exist although CreateLoadBalancer always failed", lbs)
	}
	if s := getService(t, svc.Name); s == nil || !slices.Contains(s.Finalizers, cleanupFinalizer) {
		t.Fatalf("service lacks the cleanup finalizer before deletion: %+v", s)
	}

	start := time.Now()
	deleteServiceHeld(t, svc.Name, 60*time.Second, func() []string { return groupNames(env.aws.SecurityGroupsNamed(sgName)) })
	t.Logf("half-built Classic load balancer deleted in %s", time.Since(start).Round(time.Millisecond))
	env.aws.ClearFault(fault)
	assertNoLoadBalancerLeft(t)
}

// TestClassicDeleteRetriesDependencyViolation: DeleteSecurityGroup fails
// with DependencyViolation twice (as while AWS releases the load
// balancer's interfaces). Delete must return an error so the controller
// retries, and the finalizer must hold the Service until the group is gone.
func TestClassicDeleteRetriesDependencyViolation(t *testing.T) {
	lbNodes(t, 1)
	svc := lbService(t, "clb-depviol", nil, nil)
	_, svc = waitHostname(t, svc.Name)
	name := lbName(svc)
	sgName := "k8s-elb-" + name
	if len(env.aws.SecurityGroupsNamed(sgName)) != 1 {
		t.Fatalf("managed group %s missing", sgName)
	}

	base := env.aws.Calls("ec2", "DeleteSecurityGroup")
	injectFault(t, awsemu.Fault{Service: "ec2", Action: "DeleteSecurityGroup", Code: "DependencyViolation", HTTPStatus: 400, Remaining: 2})
	start := time.Now()
	if err := env.kube.CoreV1().Services(lbNamespace).Delete(context.Background(), svc.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete service: %v", err)
	}
	for i := 1; i <= 2; i++ {
		waitFor(t, 40*time.Second, fmt.Sprintf("DeleteSecurityGroup call %d", i), func(context.Context) (bool, error) {
			return env.aws.Calls("ec2", "DeleteSecurityGroup")-base >= i, nil
		})
		// The failed call's sync returns an error: the Service stays until
		// a later call deletes the group. The controller may retry at once
		// rather than after its backoff (another event re-queues the
		// Service: seen 0.3 s after the second failure), so a Service gone
		// here is right if, and only if, the group went first and by a
		// later call. The Service is read first: the group is deleted
		// before the finalizer goes, so this order cannot race.
		time.Sleep(500 * time.Millisecond)
		gone := getService(t, svc.Name) == nil
		groups, calls := len(env.aws.SecurityGroupsNamed(sgName)), env.aws.Calls("ec2", "DeleteSecurityGroup")-base
		switch {
		case gone && (groups != 0 || calls <= i):
			t.Fatalf("after failed DeleteSecurityGroup %d: service %s is gone with %d groups %s left after %d DeleteSecurityGroup calls (the finalizer was removed while AWS still held its parts)", i, svc.Name, groups, sgName, calls)
		case gone:
			t.Logf("after failed DeleteSecurityGroup %d the controller retried at once: call %d deleted the group, then the Service went", i, calls)
		case groups != 1 && calls <= i:
			t.Fatalf("after failed DeleteSecurityGroup %d: group %s is gone", i, sgName)
		case groups == 1:
			// Still the group's: the Service must be held.
			requireHeld(t, svc.Name, fmt.Sprintf("after failed DeleteSecurityGroup %d", i))
		}
		if gone {
			break
		}
	}
	if lbs := env.aws.ClassicLoadBalancers(); len(lbs) != 0 {
		t.Errorf("Classic load balancer still there after the first delete attempt: %v", lbs)
	}
	waitWarning(t, svc.Name, "SyncLoadBalancerFailed", "DependencyViolation")

	deleteServiceHeld(t, svc.Name, 60*time.Second, func() []string { return groupNames(env.aws.SecurityGroupsNamed(sgName)) })
	t.Logf("deleted after two DependencyViolations in %s", time.Since(start).Round(time.Millisecond))
	if n := env.aws.Calls("ec2", "DeleteSecurityGroup") - base; n < 3 {
		t.Errorf("DeleteSecurityGroup called %d times, want 2 failed + 1 successful", n)
	}
	assertNoLoadBalancerLeft(t)
}

// TestNLBDeleteAfterFailedListener: the NLB and a target group exist but
// CreateListener always fails, so the target group is attached to nothing.
// Deleting the Service must delete the NLB and the unattached group.
func TestNLBDeleteAfterFailedListener(t *testing.T) {
	lbNodes(t, 1)
	svc := lbService(t, "nlb-listenerfail", map[string]string{annPrefix + "type": "nlb"}, nil)
	fault := injectFault(t, awsemu.Fault{Service: "elasticloadbalancingv2", Action: "CreateListener", Code: "TooManyListeners", HTTPStatus: 400})
	name := lbName(svc)

	waitFor(t, 30*time.Second, "a target group", func(context.Context) (bool, error) {
		return len(env.aws.TargetGroups()) > 0, nil
	})
	waitWarning(t, svc.Name, "SyncLoadBalancerFailed", "TooManyListeners")
	lb := networkLB(t, name)
	if len(lb.Listeners) != 0 {
		t.Fatalf("listeners %+v exist although CreateListener always failed", lb.Listeners)
	}
	tgs := env.aws.TargetGroups()
	for _, tg := range tgs {
		if len(tg.LoadBalancerARNs) != 0 {
			t.Errorf("target group %s is attached to %v without a listener", tg.Name, tg.LoadBalancerARNs)
		}
	}

	start := time.Now()
	deleteServiceHeld(t, svc.Name, 60*time.Second, func() []string {
		var left []string
		for _, l := range env.aws.NetworkLoadBalancers() {
			left = append(left, "NLB "+l.Name)
		}
		for _, tg := range env.aws.TargetGroups() {
			left = append(left, "target group "+tg.Name)
		}
		return left
	})
	t.Logf("NLB without listeners deleted in %s", time.Since(start).Round(time.Millisecond))
	env.aws.ClearFault(fault)
	assertNoLoadBalancerLeft(t)
}

// TestDeleteUnderThrottling deletes a Classic ELB and an NLB while every
// load-balancing and EC2 API throttles 30% of the calls.
func TestDeleteUnderThrottling(t *testing.T) {
	lbNodes(t, 2)
	clb := lbService(t, "clb-throttle", nil, nil)
	nlb := lbService(t, "nlb-throttle", map[string]string{annPrefix + "type": "nlb"},
		func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"10.1.0.0/16"} },
		corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP},
		corev1.ServicePort{Name: "https", Port: 443, TargetPort: intstr.FromInt32(8443), Protocol: corev1.ProtocolTCP})
	waitHostname(t, clb.Name)
	waitHostname(t, nlb.Name)
	if got := describedRules(securityGroup(t, nodeGroupID).Ingress); len(got) == 0 {
		t.Fatalf("node group has no rules before deletion")
	}

	before := env.aws.CallCounts()
	for _, svc := range []string{"elasticloadbalancing", "elasticloadbalancingv2", "ec2"} {
		injectFault(t, awsemu.Throttle(svc, 0.3))
	}
	start := time.Now()
	for _, name := range []string{clb.Name, nlb.Name} {
		if err := env.kube.CoreV1().Services(lbNamespace).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete service %s: %v", name, err)
		}
	}
	deleteService(t, clb.Name)
	deleteService(t, nlb.Name)
	t.Logf("both deleted under throttling in %s; calls: %s", time.Since(start).Round(time.Millisecond), formatCalls(diffCalls(before, env.aws.CallCounts())))
	env.aws.ClearFaults()
	assertNoLoadBalancerLeft(t)
}

// TestEC2ErrorNeverDeregisters: while DescribeInstances fails, a node
// joins. The sync must fail without deregistering the instances it could
// not look up; once EC2 answers, the new instance is registered.
func TestEC2ErrorNeverDeregisters(t *testing.T) {
	insts := lbNodes(t, 2)
	svc := lbService(t, "clb-ec2err", nil, nil)
	_, svc = waitHostname(t, svc.Name)
	name := lbName(svc)
	orig := sorted([]string{insts[0].ID, insts[1].ID})
	waitFor(t, 30*time.Second, "both instances registered", func(context.Context) (bool, error) {
		return slices.Equal(sorted(classicLB(t, name).Instances), orig), nil
	})

	deregs := env.aws.Calls("elasticloadbalancing", "DeregisterInstancesFromLoadBalancer")
	fault := injectFault(t, awsemu.Fault{Service: "ec2", Action: "DescribeInstances", Code: "InternalError", HTTPStatus: 500})
	// The instance is added after the fault so no snapshot of the instance
	// view can know it; the Node is not waited for (initialising it needs
	// DescribeInstances), but with a providerID it is a load-balancer node.
	added := addInstance(t, instanceOpts{})
	registerNode(t, nodeOpts{name: "lb-" + added.ID, providerID: fmt.Sprintf("aws:///%s/%s", added.AvailabilityZone, added.ID)})
	start := time.Now()

	// The node sync runs Update at once; its failure is retried through
	// the service queue, which runs the full Ensure 5 s later. Watch the
	// registered instances through both.
	for time.Since(start) < 8*time.Second {
		if got := sorted(classicLB(t, name).Instances); !slices.Equal(got, orig) {
			t.Fatalf("%s after the node joined while EC2 failed, instances = %v, want the original %v (deregistered: %d calls)", time.Since(start).Round(time.Millisecond),
				got, orig, env.aws.Calls("elasticloadbalancing", "DeregisterInstancesFromLoadBalancer")-deregs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := env.aws.Calls("elasticloadbalancing", "DeregisterInstancesFromLoadBalancer") - deregs; n != 0 {
		t.Errorf("DeregisterInstancesFromLoadBalancer called %d times while EC2 failed", n)
	}
	// Both paths failed (rather than not running at all).
	waitWarning(t, svc.Name, "UpdateLoadBalancerFailed", "look up the instances")
	waitWarning(t, svc.Name, "SyncLoadBalancerFailed", "look up the instances")

	env.aws.ClearFault(fault)
	cleared := time.Now()
	want := sorted(append(slices.Clone(orig), added.ID))
	waitFor(t, 60*time.Second, "new instance registered", func(context.Context) (bool, error) {
		return slices.Equal(sorted(classicLB(t, name).Instances), want), nil
	})
	t.Logf("new instance registered %s after EC2 recovered", time.Since(cleared).Round(time.Millisecond))
	if n := env.aws.Calls("elasticloadbalancing", "DeregisterInstancesFromLoadBalancer") - deregs; n != 0 {
		t.Errorf("DeregisterInstancesFromLoadBalancer called %d times", n)
	}

	deleteService(t, svc.Name)
	assertNoLoadBalancerLeft(t)
}

// TestTypeChangeRejected: changing the type annotation of a Service with a
// Classic ELB is refused with a Warning naming the annotation; the Classic
// ELB stays and no NLB is made.
func TestTypeChangeRejected(t *testing.T) {
	lbNodes(t, 1)
	svc := lbService(t, "clb-typechange", nil, nil)
	host, svc := waitHostname(t, svc.Name)
	name := lbName(svc)
	classicLB(t, name)
	settle(t, map[string]int{}) // let the create's calls finish

	before := lbCalls()
	updateService(t, svc.Name, func(s *corev1.Service) {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations[annPrefix+"type"] = "nlb"
	})
	waitWarning(t, svc.Name, "InvalidLoadBalancerConfiguration", annPrefix+"type", "Classic ELB")
	// Refusing reads nothing from AWS, so settle would not see a change:
	// wait past the controller's first retry (5 s) instead.
	time.Sleep(6 * time.Second)
	calls := diffCalls(before, lbCalls())
	t.Logf("type change: %d calls: %s", total(calls), formatCalls(calls))
	if m := mutating(calls); len(m) != 0 {
		t.Errorf("type change made mutating calls: %s", formatCalls(m))
	}
	if lb := classicLB(t, name); lb.DNSName != host {
		t.Errorf("Classic load balancer DNS name %q, want %q", lb.DNSName, host)
	}
	if nlbs := env.aws.NetworkLoadBalancers(); len(nlbs) != 0 {
		t.Errorf("an NLB was created: %+v", nlbs)
	}
	if s := getService(t, svc.Name); s == nil {
		t.Fatalf("service %s is gone", svc.Name)
	} else if ing := s.Status.LoadBalancer.Ingress; len(ing) != 1 || ing[0].Hostname != host {
		t.Errorf("service status changed to %+v, want the Classic hostname %s", ing, host)
	}
	// The sync failed (and so is retried), naming the annotation.
	waitWarning(t, svc.Name, "SyncLoadBalancerFailed", annPrefix+"type")

	deleteService(t, svc.Name)
	assertNoLoadBalancerLeft(t)
}
