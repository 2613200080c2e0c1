package ipv6

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/pkg/awscloud"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

var subnets = []struct{ id, zone, zoneID, prefix string }{
	{"subnet-0six0000000000001", "us-west-2a", "usw2-az1", "2600:1f14:abc:100::"},
	{"subnet-0six0000000000002", "us-west-2b", "usw2-az2", "2600:1f14:abc:200::"},
}

// TestIPv6OnlyNodesInitialize: Nodes of instances in IPv6-only subnets,
// named as kubelets name them there (the resource name, or the bare
// instance ID) with or without --provider-id, or with a custom name and a
// providerID, are initialized with their providerID, their IPv6 address as
// the only InternalIP, and the zone, region, type and zone-ID labels. The
// names carry the instance IDs, so none of them costs a lookup by private
// DNS name.
func TestIPv6OnlyNodesInitialize(t *testing.T) {
	testbed.Get(t)
	var insts []awsemu.Instance
	for i := range 8 {
		sn := subnets[i%2]
		in := awsemu.Instance{
			ID:       fmt.Sprintf("i-06000000000%06d", i),
			Type:     "m6g.large",
			SubnetID: sn.id,
			ENIs: []awsemu.ENI{
				{DeviceIndex: 0, IPv6: []string{fmt.Sprintf("%s%x", sn.prefix, 0x10+i), fmt.Sprintf("%s%x", sn.prefix, 0x80+i)}},
				{DeviceIndex: 1, IPv6: []string{fmt.Sprintf("%s1:%x", sn.prefix, 0x10+i)}},
			},
			Tags: map[string]string{"kubernetes.io/cluster/" + clusterID: "owned"},
		}
		if err := env.aws.AddInstance(in); err != nil {
			t.Fatal(err)
		}
		got, _ := env.aws.Instance(in.ID)
		if got.PrivateIP != "" || got.PrivateDNSName != in.ID+".us-west-2.compute.internal" {
			t.Fatalf("emulator instance %s: private IP %q, DNS name %q; want none and the resource name", in.ID, got.PrivateIP, got.PrivateDNSName)
		}
		insts = append(insts, got)
	}
	names := make([]string, len(insts))
	for i, in := range insts {
		var providerID string
		switch i % 4 {
		case 0: // the kubelet's default hostname in a resource-name subnet
			names[i] = in.PrivateDNSName
		case 1:
			names[i] = in.ID
		case 2:
			names[i] = in.PrivateDNSName
			providerID = providerid.Format(in.AvailabilityZone, in.ID)
		default:
			names[i] = "gpu-worker-" + in.ID[len(in.ID)-4:]
			providerID = providerid.Format(in.AvailabilityZone, in.ID)
		}
		registerNode(t, names[i], providerID)
	}
	ctx := context.Background()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			n, err := env.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil || n.Spec.ProviderID == "" || hasTaint(n, cloudproviderapi.TaintExternalCloudProvider) || len(n.Status.Addresses) == 0 {
				return false, nil //nolint:nilerr // poll predicate: not ready yet, keep waiting
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("Nodes not initialized with addresses within 30s: %v", err)
	}
	for i, in := range insts {
		n, err := env.kube.CoreV1().Nodes().Get(ctx, names[i], metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sn := subnets[i%2]
		if want := providerid.Format(sn.zone, in.ID); n.Spec.ProviderID != want {
			t.Errorf("%s: providerID %q, want %q", n.Name, n.Spec.ProviderID, want)
		}
		// Upstream's ipv6 block: the first address of each interface, no
		// DNS names (the Hostname is the kubelet's).
		want := []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: in.ENIs[0].IPv6[0]},
			{Type: corev1.NodeInternalIP, Address: in.ENIs[1].IPv6[0]},
			{Type: corev1.NodeHostName, Address: n.Name},
		}
		if !slices.Equal(n.Status.Addresses, want) {
			t.Errorf("%s: addresses %v, want %v", n.Name, n.Status.Addresses, want)
		}
		labels := map[string]string{
			corev1.LabelTopologyZone:       sn.zone,
			corev1.LabelTopologyRegion:     region,
			corev1.LabelInstanceTypeStable: "m6g.large",
			awscloud.ZoneIDLabel:           sn.zoneID,
		}
		for k, v := range labels {
			if n.Labels[k] != v {
				t.Errorf("%s: label %s = %q, want %q", n.Name, k, n.Labels[k], v)
			}
		}
	}
	if viewLookups(t, "id") == 0 {
		t.Fatal("no lookups by instance ID counted: the view's metrics are not where this test reads them")
	}
	if byName := viewLookups(t, "name"); byName != 0 {
		t.Errorf("the view made %v lookups by private DNS name; every Node name or providerID carries its instance ID", byName)
	}
}

// registerNode creates a Node as a kubelet with --cloud-provider=external
// does: the uninitialized taint, its Hostname address, and a providerID
// only with --provider-id.
func registerNode(t *testing.T, name, providerID string) {
	t.Helper()
	ctx := context.Background()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Spec: corev1.NodeSpec{ProviderID: providerID,
			Taints: []corev1.Taint{{Key: cloudproviderapi.TaintExternalCloudProvider, Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
	}
	created, err := env.kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	created.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}}
	created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	if _, err := env.kube.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func hasTaint(n *corev1.Node, key string) bool {
	return slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key })
}

// viewLookups sums aws_ccm_instance_lookups_total of kind (id, name).
func viewLookups(t *testing.T, kind string) float64 {
	t.Helper()
	mfs, err := env.gather.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != "aws_ccm_instance_lookups_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" && l.GetValue() == kind {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}
