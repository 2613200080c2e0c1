package integration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"

	"github.com/awsccmctl/awsccmctl/internal/lbnames"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// lbNamespace holds the load-balancer tests' Services.
const lbNamespace = "default"

// lbNodes starts n instances and registers their Nodes with providerIDs,
// as kubelets with --provider-id do, and waits until the CCM initialised
// them. The Nodes are deleted when the test ends.
func lbNodes(t *testing.T, n int) []awsemu.Instance {
	t.Helper()
	var out []awsemu.Instance
	for i := 0; i < n; i++ {
		in := addInstance(t, instanceOpts{})
		name := "lb-" + in.ID
		registerNode(t, nodeOpts{name: name, providerID: fmt.Sprintf("aws:///%s/%s", in.AvailabilityZone, in.ID)})
		out = append(out, in)
	}
	for _, in := range out {
		waitFor(t, 30*time.Second, "node "+in.ID+" initialised", func(ctx context.Context) (bool, error) {
			n, err := getNode(ctx, "lb-"+in.ID)
			return err == nil && initialized(n), nil
		})
	}
	return out
}

// lbService creates a Service of type LoadBalancer; it is deleted (and its
// load balancer with it) when the test ends.
func lbService(t *testing.T, name string, ann map[string]string, mod func(*corev1.Service), ports ...corev1.ServicePort) *corev1.Service {
	t.Helper()
	if len(ports) == 0 {
		ports = []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: lbNamespace, Annotations: ann},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: ports, Selector: map[string]string{"app": name}},
	}
	if mod != nil {
		mod(svc)
	}
	created, err := env.kube.CoreV1().Services(lbNamespace).Create(context.Background(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create service %s: %v", name, err)
	}
	t.Cleanup(func() { deleteService(t, name) })
	return created
}

// deleteService deletes the Service and waits until the service controller
// removed its cleanup finalizer (so the Service is gone).
func deleteService(t *testing.T, name string) {
	t.Helper()
	err := env.kube.CoreV1().Services(lbNamespace).Delete(context.Background(), name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("delete service %s: %v", name, err)
	}
	waitFor(t, 60*time.Second, "service "+name+" gone", func(ctx context.Context) (bool, error) {
		_, err := env.kube.CoreV1().Services(lbNamespace).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// updateService applies mod to the latest Service.
func updateService(t *testing.T, name string, mod func(*corev1.Service)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		svc, err := env.kube.CoreV1().Services(lbNamespace).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mod(svc)
		_, err = env.kube.CoreV1().Services(lbNamespace).Update(context.Background(), svc, updateOpts)
		return err
	})
	if err != nil {
		t.Fatalf("update service %s: %v", name, err)
	}
}

// waitHostname waits for the Service's load-balancer hostname.
func waitHostname(t *testing.T, name string) (string, *corev1.Service) {
	t.Helper()
	var svc *corev1.Service
	waitFor(t, 60*time.Second, "load balancer of "+name, func(ctx context.Context) (bool, error) {
		s, err := env.kube.CoreV1().Services(lbNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // poll predicate: not ready yet, keep waiting
		}
		svc = s
		return len(s.Status.LoadBalancer.Ingress) > 0 && s.Status.LoadBalancer.Ingress[0].Hostname != "", nil
	})
	return svc.Status.LoadBalancer.Ingress[0].Hostname, svc
}

// lbCalls are the emulator's counters of the calls load balancers make:
// every ELB and ELBv2 call and every EC2 call but DescribeInstances (the
// instance view's, which node controllers share).
func lbCalls() map[string]int {
	out := map[string]int{}
	for k, v := range env.aws.CallCounts() {
		if strings.HasPrefix(k, "elasticloadbalancing") || (strings.HasPrefix(k, "ec2:") && k != "ec2:DescribeInstances") {
			out[k] = v
		}
	}
	return out
}

// settle waits until the load-balancer calls have changed from before and
// then stayed the same for a quiet period, and returns the difference. The
// service controller gives no other signal that a sync is over.
func settle(t *testing.T, before map[string]int) map[string]int {
	t.Helper()
	const quiet = 1500 * time.Millisecond
	deadline := time.Now().Add(60 * time.Second)
	last := lbCalls()
	changedAt := time.Now()
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		cur := lbCalls()
		if !maps.Equal(cur, last) {
			last, changedAt = cur, time.Now()
			continue
		}
		if !maps.Equal(cur, before) && time.Since(changedAt) >= quiet {
			return diffCalls(before, cur)
		}
	}
	t.Fatalf("load-balancer calls did not settle within 60s (before %v, now %v)", before, last)
	return nil
}

func diffCalls(before, after map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// mutating returns the calls that change AWS state.
func mutating(calls map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range calls {
		action := k[strings.Index(k, ":")+1:]
		if !strings.HasPrefix(action, "Describe") {
			out[k] = v
		}
	}
	return out
}

func total(calls map[string]int) int {
	n := 0
	for _, v := range calls {
		n += v
	}
	return n
}

// formatCalls prints calls sorted, for logs and failure messages.
func formatCalls(calls map[string]int) string {
	keys := slices.Collect(maps.Keys(calls))
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, calls[k])
	}
	return strings.TrimSpace(b.String())
}

// touch changes an annotation no controller reads, which makes the service
// controller run EnsureLoadBalancer again with the same desired state.
func touch(t *testing.T, name string) {
	t.Helper()
	updateService(t, name, func(s *corev1.Service) {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations["example.com/touched"] = time.Now().Format(time.RFC3339Nano)
	})
}

// serviceEvents lists the events about a Service.
func serviceEvents(ctx context.Context, name string) ([]corev1.Event, error) {
	list, err := env.kube.CoreV1().Events(lbNamespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Service,involvedObject.name=" + name})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// waitWarning waits for an event about the Service with reason whose message
// contains every part.
func waitWarning(t *testing.T, name, reason string, parts ...string) {
	t.Helper()
	waitFor(t, 30*time.Second, fmt.Sprintf("Warning event %s on service %s", reason, name), func(ctx context.Context) (bool, error) {
		evs, err := serviceEvents(ctx, name)
		if err != nil {
			return false, nil //nolint:nilerr // poll predicate: not ready yet, keep waiting
		}
		for _, e := range evs {
			if e.Type != corev1.EventTypeWarning || e.Reason != reason {
				continue
			}
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(e.Message, p)
			}
			if ok {
				return true, nil
			}
		}
		return false, nil
	})
}

// classicLB returns the emulator's Classic load balancer called name.
func classicLB(t *testing.T, name string) awsemu.ClassicLBState {
	t.Helper()
	for _, lb := range env.aws.ClassicLoadBalancers() {
		if lb.Name == name {
			return lb
		}
	}
	t.Fatalf("no Classic load balancer %s in AWS", name)
	return awsemu.ClassicLBState{}
}

// securityGroup returns the emulator's security group id.
func securityGroup(t *testing.T, id string) awsemu.SecurityGroup {
	t.Helper()
	for _, g := range env.aws.SecurityGroups() {
		if g.ID == id {
			return g
		}
	}
	t.Fatalf("no security group %s in AWS", id)
	return awsemu.SecurityGroup{}
}

// lbName is the load balancer name of a Service (its UID-derived name).
func lbName(svc *corev1.Service) string { return lbnames.LoadBalancerName(svc) }

// assertNoLoadBalancerLeft fails unless AWS holds no load balancer,
// listener, target group or k8s-elb- security group, and no node-group
// rule points at a deleted group or describes an NLB.
func assertNoLoadBalancerLeft(t *testing.T) {
	t.Helper()
	inv := env.aws.Inventory()
	if inv.ClassicLBs+inv.NetworkLBs+inv.Listeners+inv.TargetGroups != 0 {
		t.Errorf("AWS still holds load-balancer resources: %+v", inv)
	}
	if left := env.aws.SecurityGroupsNamed("k8s-elb-"); len(left) != 0 {
		t.Errorf("managed security groups left: %v", left)
	}
	node := securityGroup(t, nodeGroupID)
	if len(node.Ingress) != 0 {
		t.Errorf("node security group %s still has rules: %+v", nodeGroupID, node.Ingress)
	}
}

type contextT = context.Context
