package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/retry"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"github.com/awsccmctl/awsccmctl/pkg/providerid"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

const shutdownTaint = "node.cloudprovider.kubernetes.io/shutdown"

// TestNodesJoinAtOnce registers 150 Nodes at once, a third by private DNS
// name, a third by instance ID name, a third with --provider-id, and checks
// every one is initialized with the right providerID, labels and addresses,
// for a handful of EC2 calls in total.
func TestNodesJoinAtOnce(t *testing.T) {
	const n = 150
	var insts []awsemu.Instance
	for i := range n {
		insts = append(insts, addInstance(t, instanceOpts{public: i%2 == 0}))
	}
	// A snapshot listed before these instances existed (earlier tests'
	// lookups refresh it) would miss them all; let it expire so the join
	// meets the steady state this test is about: the next snapshot serves
	// every joining node.
	time.Sleep(cacheMaxAge)
	before := describeInstancesCalls()
	start := time.Now()
	names := make([]string, n)
	for i, in := range insts {
		switch i % 3 {
		case 0:
			names[i] = in.PrivateDNSName
			registerNode(t, nodeOpts{name: names[i]})
		case 1:
			names[i] = in.ID
			registerNode(t, nodeOpts{name: names[i]})
		default:
			names[i] = fmt.Sprintf("custom-name-%s", in.ID)
			registerNode(t, nodeOpts{name: names[i], providerID: providerid.Format(in.AvailabilityZone, in.ID)})
		}
	}
	waitFor(t, 60*time.Second, "all nodes initialized", func(ctx context.Context) (bool, error) {
		for _, name := range names {
			node, err := getNode(ctx, name)
			if err != nil || !initialized(node) {
				return false, nil //nolint:nilerr // poll predicate: not ready yet, keep waiting
			}
		}
		return true, nil
	})
	elapsed := time.Since(start)
	calls := describeInstancesCalls() - before
	t.Logf("initialized %d nodes in %s with %d DescribeInstances calls (%.3f per node)", n, elapsed.Round(time.Millisecond), calls, float64(calls)/n)

	for i, in := range insts {
		node, err := getNode(context.Background(), names[i])
		if err != nil {
			t.Fatal(err)
		}
		assertInitializedFrom(t, node, in)
	}
	// One snapshot serves every node that joins within the cache age, so
	// the calls are bounded by the join's length over the cache age, not
	// by the number of nodes (a naive CCM makes one or two calls per node,
	// 300 here). The join takes ~4 s alone and past 12 s under -race on a
	// loaded machine, where a fixed bound of 5 failed with 7 calls.
	if limit := int(elapsed/cacheMaxAge) + 2; calls > limit {
		t.Errorf("DescribeInstances calls for %d joining nodes in %s = %d, want <= %d (one snapshot per %s of cache age, plus one)", n, elapsed.Round(time.Millisecond), calls, limit, cacheMaxAge)
	}
}

func assertInitializedFrom(t *testing.T, node *corev1.Node, in awsemu.Instance) {
	t.Helper()
	if want := providerid.Format(in.AvailabilityZone, in.ID); node.Spec.ProviderID != want {
		t.Errorf("node %s providerID = %q, want %q", node.Name, node.Spec.ProviderID, want)
	}
	wantLabels := map[string]string{
		corev1.LabelInstanceTypeStable: in.Type,
		corev1.LabelTopologyZone:       in.AvailabilityZone,
		corev1.LabelTopologyRegion:     region,
		"topology.k8s.aws/zone-id":     map[string]string{"us-east-1a": "use1-az1", "us-east-1b": "use1-az2", "us-east-1c": "use1-az4"}[in.AvailabilityZone],
	}
	for k, want := range wantLabels {
		if got := node.Labels[k]; got != want {
			t.Errorf("node %s label %s = %q, want %q", node.Name, k, got, want)
		}
	}
	// Upstream's list: every private IPv4 of the interface, the VPC CNI's
	// secondary (pod) address included.
	var want []corev1.NodeAddress
	for _, ip := range in.ENIs[0].PrivateIPs {
		want = append(want, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
	}
	if in.PublicIP != "" {
		want = append(want, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: in.PublicIP})
	}
	want = append(want,
		corev1.NodeAddress{Type: corev1.NodeInternalDNS, Address: in.PrivateDNSName},
		corev1.NodeAddress{Type: corev1.NodeHostName, Address: in.PrivateDNSName})
	if in.PublicDNSName != "" {
		want = append(want, corev1.NodeAddress{Type: corev1.NodeExternalDNS, Address: in.PublicDNSName})
	}
	if !slices.Equal(node.Status.Addresses, want) {
		t.Errorf("node %s addresses = %v, want %v (upstream's list)", node.Name, node.Status.Addresses, want)
	}
}

// TestIdleStatusPeriodCostsOneCall lets initialized nodes sit idle for three
// status periods and counts EC2 calls: the status loop asks about every node
// each period, but the shared view answers all of them from one listing.
func TestIdleStatusPeriodCostsOneCall(t *testing.T) {
	const n = 120
	var names []string
	for range n {
		in := addInstance(t, instanceOpts{})
		names = append(names, in.ID)
		registerNode(t, nodeOpts{name: in.ID})
	}
	waitFor(t, 60*time.Second, "nodes initialized", func(ctx context.Context) (bool, error) {
		for _, name := range names {
			node, err := getNode(ctx, name)
			if err != nil || !initialized(node) {
				return false, nil //nolint:nilerr // poll predicate: not ready yet, keep waiting
			}
		}
		return true, nil
	})
	before := describeInstancesCalls()
	const periods = 3
	time.Sleep(periods * statusUpdatePeriod)
	calls := describeInstancesCalls() - before
	t.Logf("%d idle status periods of %d+ nodes: %d DescribeInstances calls (%.2f per period; a per-node CCM makes %d per period)",
		periods, n, calls, float64(calls)/periods, n)
	// ceil(N/1000) = 1 per period, +1 for a period boundary in the window.
	if calls > periods+1 {
		t.Errorf("DescribeInstances calls over %d idle periods = %d, want <= %d", periods, calls, periods+1)
	}
}

// TestTerminatedInstanceDeletesItsNotReadyNode: terminated is positive
// evidence, no grace needed.
func TestTerminatedInstanceDeletesItsNotReadyNode(t *testing.T) {
	in := addInstance(t, instanceOpts{})
	registerNode(t, nodeOpts{name: in.ID})
	waitFor(t, 30*time.Second, "node initialized", func(ctx context.Context) (bool, error) {
		node, err := getNode(ctx, in.ID)
		return err == nil && initialized(node), nil
	})
	markNotReady(t, in.ID)
	if err := env.aws.SetInstanceState(in.ID, "terminated"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "node of terminated instance deleted", func(ctx context.Context) (bool, error) {
		return nodeGone(ctx, in.ID)
	})
}

// TestStoppedInstanceGetsShutdownTaint covers stopped and stopping, and the
// taint's removal once the instance runs and the Node is Ready again.
func TestStoppedInstanceGetsShutdownTaint(t *testing.T) {
	for _, state := range []string{"stopped", "stopping"} {
		t.Run(state, func(t *testing.T) {
			in := addInstance(t, instanceOpts{})
			registerNode(t, nodeOpts{name: in.ID})
			waitFor(t, 30*time.Second, "node initialized", func(ctx context.Context) (bool, error) {
				node, err := getNode(ctx, in.ID)
				return err == nil && initialized(node), nil
			})
			markNotReady(t, in.ID)
			if err := env.aws.SetInstanceState(in.ID, state); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 30*time.Second, "shutdown taint", func(ctx context.Context) (bool, error) {
				node, err := getNode(ctx, in.ID)
				return err == nil && hasTaint(node, shutdownTaint), nil
			})
			if gone, _ := nodeGone(context.Background(), in.ID); gone {
				t.Fatal("a stopped instance's node was deleted")
			}
			// Started again and Ready: the lifecycle pass removes the taint
			// (the controller's Node lister keeps a Ready Node while it has
			// the taint, internal/ccmapp/lifecycle.go).
			if err := env.aws.SetInstanceState(in.ID, "running"); err != nil {
				t.Fatal(err)
			}
			setReady(t, in.ID, corev1.ConditionTrue)
			waitFor(t, 30*time.Second, "shutdown taint removed", func(ctx context.Context) (bool, error) {
				node, err := getNode(ctx, in.ID)
				return err == nil && !hasTaint(node, shutdownTaint), nil
			})
		})
	}
}

// TestMissingInstanceIsDeletedOnlyAfterTheGracePeriod: a NotReady Node
// whose instance EC2 does not know survives the grace period, then goes.
func TestMissingInstanceIsDeletedOnlyAfterTheGracePeriod(t *testing.T) {
	id := fmt.Sprintf("i-%017x", 0xdead000000+instanceSeq.Add(1))
	name := "missing-" + id
	created := time.Now()
	registerNode(t, nodeOpts{name: name, providerID: providerid.Format("us-east-1a", id), notReady: true})
	time.Sleep(absenceGrace / 2)
	if gone, err := nodeGone(context.Background(), name); err != nil || gone {
		t.Fatalf("node deleted %s after creation, inside the %s grace period", time.Since(created), absenceGrace)
	}
	waitFor(t, absenceGrace+30*time.Second, "node of missing instance deleted", func(ctx context.Context) (bool, error) {
		return nodeGone(ctx, name)
	})
	if age := time.Since(created); age < absenceGrace {
		t.Fatalf("deleted after %s, before the %s grace period", age, absenceGrace)
	}
}

// TestNewInstanceNotYetVisibleIsNotDeleted models EC2 eventual consistency:
// the instance is invisible to DescribeInstances for a while after launch.
// Its NotReady Node must survive and be initialized once EC2 shows it.
func TestNewInstanceNotYetVisibleIsNotDeleted(t *testing.T) {
	env.aws.SetVisibilityDelay(absenceGrace / 2)
	in := addInstance(t, instanceOpts{})
	env.aws.SetVisibilityDelay(0)
	registerNode(t, nodeOpts{name: in.ID, notReady: true})
	waitFor(t, 30*time.Second, "node initialized once visible", func(ctx context.Context) (bool, error) {
		node, err := getNode(ctx, in.ID)
		if err != nil {
			return false, fmt.Errorf("node lost: %w", err)
		}
		return initialized(node), nil
	})
	// Hold a little longer than the grace period: still there.
	time.Sleep(absenceGrace)
	if gone, _ := nodeGone(context.Background(), in.ID); gone {
		t.Fatal("node of an instance that became visible was deleted")
	}
}

// TestFaultsNeverDeleteNodes runs the lifecycle loop against throttling,
// 5xx and slow answers while NotReady Nodes exist, some of them for
// instances that are really gone: nothing may be deleted while EC2 cannot
// answer, and everything converges once it can.
func TestFaultsNeverDeleteNodes(t *testing.T) {
	faults := []struct {
		name  string
		fault awsemu.Fault
	}{
		{"throttled", awsemu.Throttle("ec2", 1)},
		{"server error", awsemu.Fault{Service: "ec2", HTTPStatus: 503, Rate: 1}},
		{"timeout", awsemu.Fault{Service: "ec2", Latency: 3 * requestTimeout, Rate: 1}},
	}
	for _, tc := range faults {
		t.Run(tc.name, func(t *testing.T) {
			// A live instance whose node is NotReady, a gone instance whose
			// node is NotReady, and a new node waiting for initialization.
			live := addInstance(t, instanceOpts{})
			registerNode(t, nodeOpts{name: live.ID, providerID: providerid.Format(live.AvailabilityZone, live.ID), notReady: true})
			goneID := fmt.Sprintf("i-%017x", 0xfade000000+instanceSeq.Add(1))
			registerNode(t, nodeOpts{name: "gone-" + goneID, providerID: providerid.Format("us-east-1b", goneID), notReady: true})
			joining := addInstance(t, instanceOpts{})

			id := env.aws.InjectFault(tc.fault)
			t.Cleanup(func() { env.aws.ClearFault(id) })
			registerNode(t, nodeOpts{name: joining.ID})
			faultStart := time.Now()
			// Let the cache expire and the grace period pass twice over.
			for time.Since(faultStart) < 2*absenceGrace+cacheMaxAge {
				for _, name := range []string{live.ID, "gone-" + goneID, joining.ID} {
					if gone, err := nodeGone(context.Background(), name); err == nil && gone {
						t.Fatalf("node %s deleted while EC2 was failing (%s)", name, tc.name)
					}
				}
				time.Sleep(250 * time.Millisecond)
			}
			node, err := getNode(context.Background(), joining.ID)
			if err != nil {
				t.Fatal(err)
			}
			if node.Spec.ProviderID != "" {
				t.Fatalf("node %s initialized while every EC2 call failed", joining.ID)
			}
			env.aws.ClearFault(id)
			waitFor(t, 60*time.Second, "convergence after the fault", func(ctx context.Context) (bool, error) {
				n, err := getNode(ctx, joining.ID)
				if err != nil || !initialized(n) {
					return false, nil //nolint:nilerr // poll predicate: not ready yet, keep waiting
				}
				gone, err := nodeGone(ctx, "gone-"+goneID)
				return gone, err
			})
			if gone, _ := nodeGone(context.Background(), live.ID); gone {
				t.Fatal("the node of a live instance was deleted")
			}
		})
	}
}

// TestUnresolvableNodeGetsWarningEvent: a Node with no providerID whose
// name matches no instance (custom hostname, DHCP option set) is told why.
func TestUnresolvableNodeGetsWarningEvent(t *testing.T) {
	name := fmt.Sprintf("worker-%d.corp.example.com", instanceSeq.Add(1))
	registerNode(t, nodeOpts{name: name})
	var found corev1.Event
	waitFor(t, 30*time.Second, "warning event on the node", func(ctx context.Context) (bool, error) {
		evs, err := nodeEvents(ctx, name)
		if err != nil {
			return false, err
		}
		for _, ev := range evs {
			if ev.Type == corev1.EventTypeWarning && ev.Reason == "AWSInstanceNotResolvable" {
				found = ev
				return true, nil
			}
		}
		return false, nil
	})
	for _, want := range []string{"--provider-id", "--hostname-override", name} {
		if !strings.Contains(found.Message, want) {
			t.Errorf("event message %q does not mention %q", found.Message, want)
		}
	}
	node, err := getNode(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if !hasTaint(node, cloudproviderapi.TaintExternalCloudProvider) {
		t.Error("an unresolved node lost its uninitialized taint")
	}
}

// markNotReady sets the node's Ready condition to False, as the node
// lifecycle does when a kubelet stops posting.
func markNotReady(t *testing.T, name string) {
	t.Helper()
	setReady(t, name, corev1.ConditionFalse)
}

// setReady sets the node's Ready condition to status.
func setReady(t *testing.T, name string, status corev1.ConditionStatus) {
	t.Helper()
	// The CCM updates the Node too (addresses, labels), so a stale read
	// conflicts: re-read and retry, as the kubelet does.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := getNode(context.Background(), name)
		if err != nil {
			return err
		}
		for i := range node.Status.Conditions {
			if node.Status.Conditions[i].Type == corev1.NodeReady {
				node.Status.Conditions[i].Status = status
			}
		}
		_, err = env.kube.CoreV1().Nodes().UpdateStatus(context.Background(), node, updateOpts)
		return err
	})
	if err != nil {
		t.Fatalf("set node %s Ready=%s: %v", name, status, err)
	}
}
