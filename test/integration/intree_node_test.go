package integration

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/awsccmctl/awsccmctl/pkg/providerid"
)

// TestInTreeNodeIsNotRewritten: a Node as a kubelet on the in-tree
// provider left it (its providerID and labels, no taint, and the addresses
// from IMDS in the kubelet's order: every private address by device, the
// public one, then Hostname before InternalDNS) is not written by the
// CCM's status pass. k8s.io/cloud-provider judges a Node with two
// InternalIPs changed at every pass, so the CCM answers with the Node's own
// order when the addresses are the same; the Node's resourceVersion stays
// (a patch that changes nothing writes nothing). Without that, the pass
// rewrote the order at once and the in-tree kubelet wrote it back.
func TestInTreeNodeIsNotRewritten(t *testing.T) {
	ctx := context.Background()
	in := addInstance(t, instanceOpts{public: true})
	addrs := []corev1.NodeAddress{}
	for _, ip := range in.ENIs[0].PrivateIPs {
		addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
	}
	if len(addrs) < 2 {
		t.Fatalf("instance %s has %d private addresses; the case needs two (a VPC CNI pod address)", in.ID, len(addrs))
	}
	addrs = append(addrs,
		corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: in.PublicIP},
		corev1.NodeAddress{Type: corev1.NodeHostName, Address: in.PrivateDNSName},
		corev1.NodeAddress{Type: corev1.NodeInternalDNS, Address: in.PrivateDNSName},
		corev1.NodeAddress{Type: corev1.NodeExternalDNS, Address: in.PublicDNSName})
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: in.PrivateDNSName, Labels: map[string]string{
			corev1.LabelHostname: in.PrivateDNSName, corev1.LabelInstanceTypeStable: in.Type, corev1.LabelInstanceType: in.Type,
			corev1.LabelTopologyZone: in.AvailabilityZone, corev1.LabelFailureDomainBetaZone: in.AvailabilityZone,
			corev1.LabelTopologyRegion: region, corev1.LabelFailureDomainBetaRegion: region,
		}},
		Spec: corev1.NodeSpec{ProviderID: providerid.Format(in.AvailabilityZone, in.ID)},
	}
	if _, err := env.kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.kube.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{}) })
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := getNode(ctx, n.Name)
		if err != nil {
			return err
		}
		cur.Status.Addresses = addrs
		cur.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		_, err = env.kube.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	before, err := getNode(ctx, n.Name)
	if err != nil {
		t.Fatal(err)
	}
	// Three status passes.
	time.Sleep(3*statusUpdatePeriod + time.Second)
	after, err := getNode(ctx, n.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(after.Status.Addresses, addrs) {
		t.Errorf("addresses rewritten:\n got %v\nwant %v (the in-tree kubelet's)", after.Status.Addresses, addrs)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("the Node was written during three status passes (resourceVersion %s -> %s): labels %v, addresses %v",
			before.ResourceVersion, after.ResourceVersion, after.Labels, after.Status.Addresses)
	}
}
