package routes

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

var seq atomic.Int64

// addNode adds a running instance and its Node (providerID set, as the
// cloud-node controller leaves it) with the pod CIDRs; the Node is deleted
// when the test ends.
func addNode(t *testing.T, podCIDRs ...string) (node, instance string) {
	t.Helper()
	n := seq.Add(1)
	ip := fmt.Sprintf("10.0.1.%d", n)
	instance = fmt.Sprintf("i-0a0b0c0d0e0f%05x", n)
	if err := env.aws.AddInstance(awsemu.Instance{ID: instance, Type: "m6i.large", SubnetID: subnetID, PrivateIP: ip,
		Tags: map[string]string{"kubernetes.io/cluster/" + clusterID: "owned"}}); err != nil {
		t.Fatal(err)
	}
	node = fmt.Sprintf("node-%d", n)
	_, err := env.kube.CoreV1().Nodes().Create(t.Context(), &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: node},
		Spec:       corev1.NodeSpec{ProviderID: "aws:///us-east-1a/" + instance, PodCIDR: podCIDRs[0], PodCIDRs: podCIDRs},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteNode(node) })
	return node, instance
}

func deleteNode(node string) {
	_ = env.kube.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{})
}

// tableRoutes returns the table's routes as "dest->target state", sorted.
func tableRoutes(t *testing.T) []string {
	t.Helper()
	rt, ok := env.aws.RouteTable(tableID)
	if !ok {
		t.Fatalf("no route table %s", tableID)
	}
	var out []string
	for _, r := range rt.Routes {
		tgt := r.GatewayID + r.InstanceID
		if tgt == "" {
			tgt = r.NetworkInterfaceID
		}
		out = append(out, fmt.Sprintf("%s->%s %s", r.DestinationCIDR+r.DestinationIPv6CIDR, tgt, r.State))
	}
	slices.Sort(out)
	return out
}

func hasRoute(t *testing.T, route string) bool { return slices.Contains(tableRoutes(t), route) }

// waitFor polls cond every 100 ms until ctx ends.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v; routes now %q", what, err, tableRoutes(t))
	}
}

// networkAvailable reports the route controller's verdict on the Node.
func networkAvailable(ctx context.Context, node string) (bool, error) {
	n, err := env.kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeNetworkUnavailable {
			return c.Status == corev1.ConditionFalse && c.Reason == "RouteCreated", nil
		}
	}
	return false, nil
}

// nodeEvents lists the events about a Node with the reason.
func nodeEvents(ctx context.Context, node, reason string) ([]corev1.Event, error) {
	list, err := env.kube.CoreV1().Events("").List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + node + ",reason=" + reason})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

func calls(action string) int { return env.aws.Calls("ec2", action) }
