package upstream

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"github.com/awsccmctl/awsccmctl/pkg/providerid"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// node is a test Node: its instance, and the address its kubelet was
// given with --node-ip ("" for none).
type node struct {
	inst   awsemu.Instance
	nodeIP string
}

func (n node) name() string { return n.inst.PrivateDNSName }

// instances adds the test's instances to the emulator once.
func instances(t *testing.T) []node {
	t.Helper()
	add := func(in awsemu.Instance) awsemu.Instance {
		if got, ok := env.aws.Instance(in.ID); ok {
			return got
		}
		in.SubnetID, in.Type = subnetID, "m6i.large"
		in.SecurityGroupIDs = []string{"sg-0up0000000000001"}
		in.Tags = map[string]string{"kubernetes.io/cluster/" + clusterID: "owned"}
		if err := env.aws.AddInstance(in); err != nil {
			t.Fatal(err)
		}
		got, _ := env.aws.Instance(in.ID)
		return got
	}
	v6 := func(host string) string { return "2600:1f18:4000:100::" + host }
	return []node{
		// Four interfaces, listed out of device order as EC2 may list
		// them, with VPC CNI secondary addresses; the one detaching is no
		// Node address.
		{inst: add(awsemu.Instance{ID: "i-0a000000000000001", PublicIP: "54.10.0.1", ENIs: []awsemu.ENI{
			{ID: "eni-0a00000000000012", DeviceIndex: 2, PrivateIPs: []string{"10.0.1.12", "10.0.1.112"}, IPv6: []string{v6("12")}},
			{ID: "eni-0a00000000000010", DeviceIndex: 0, PrivateIPs: []string{"10.0.1.10", "10.0.1.110", "10.0.1.111"}, IPv6: []string{v6("10"), v6("110")}},
			{ID: "eni-0a00000000000013", DeviceIndex: 3, Status: "detaching", PrivateIPs: []string{"10.0.1.13"}, IPv6: []string{v6("13")}},
			{ID: "eni-0a00000000000011", DeviceIndex: 1, PrivateIPs: []string{"10.0.1.11"}, IPv6: []string{v6("11")}},
		}})},
		// One interface, a secondary address, no public IP and no IPv6.
		{inst: add(awsemu.Instance{ID: "i-0a000000000000002", ENIs: []awsemu.ENI{
			{ID: "eni-0a00000000000020", DeviceIndex: 0, PrivateIPs: []string{"10.0.1.20", "10.0.1.120"}},
		}})},
		// A kubelet started with --node-ip on a secondary address of its
		// second interface.
		{inst: add(awsemu.Instance{ID: "i-0a000000000000003", PublicIP: "54.10.0.3", ENIs: []awsemu.ENI{
			{ID: "eni-0a00000000000030", DeviceIndex: 0, PrivateIPs: []string{"10.0.1.30", "10.0.1.130"}, IPv6: []string{v6("30")}},
			{ID: "eni-0a00000000000031", DeviceIndex: 1, PrivateIPs: []string{"10.0.1.31", "10.0.1.131"}, IPv6: []string{v6("31")}},
		}}), nodeIP: "10.0.1.131"},
	}
}

// register creates the Nodes as kubelets with --cloud-provider=external
// and --provider-id do: the uninitialized taint, the provided-node-ip
// annotation when --node-ip is set, the kubelet's own addresses (its node
// IP and hostname) and a Ready condition. Nodes left by a previous run are
// deleted first.
func register(t *testing.T, nodes []node) []string {
	t.Helper()
	ctx := context.Background()
	var names []string
	for _, n := range nodes {
		names = append(names, n.name())
		err := env.kube.CoreV1().Nodes().Delete(ctx, n.name(), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := env.kube.CoreV1().Nodes().Get(ctx, n.name(), metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Fatalf("Node %s not deleted: %v", n.name(), err)
		}
		obj := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: n.name(), Labels: map[string]string{corev1.LabelHostname: n.name()}},
			Spec: corev1.NodeSpec{
				ProviderID: providerid.Format(n.inst.AvailabilityZone, n.inst.ID),
				Taints:     []corev1.Taint{{Key: cloudproviderapi.TaintExternalCloudProvider, Value: "true", Effect: corev1.TaintEffectNoSchedule}},
			},
		}
		nodeIP := n.inst.PrivateIP
		if n.nodeIP != "" {
			nodeIP = n.nodeIP
			obj.Annotations = map[string]string{cloudproviderapi.AnnotationAlphaProvidedIPAddr: n.nodeIP}
		}
		created, err := env.kube.CoreV1().Nodes().Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: nodeIP}, {Type: corev1.NodeHostName, Address: n.name()}}
		created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		if _, err := env.kube.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, n := range names {
			_ = env.kube.CoreV1().Nodes().Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})
	return names
}

// addresses reads the Nodes' status.addresses.
func addresses(t *testing.T, names []string) map[string][]corev1.NodeAddress {
	t.Helper()
	out := map[string][]corev1.NodeAddress{}
	for _, n := range names {
		node, err := env.kube.CoreV1().Nodes().Get(context.Background(), n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out[n] = node.Status.Addresses
	}
	return out
}

func format(a []corev1.NodeAddress) string {
	var b strings.Builder
	for i, x := range a {
		fmt.Fprintf(&b, "\n  %d %s %s", i, x.Type, x.Address)
	}
	return b.String()
}

// TestNodeAddressesMatchUpstream runs upstream's CCM, then this one, on
// the same Nodes, emulator and API server, for each NodeIPFamilies
// setting, and compares Node.status.addresses exactly (order included):
//   - upstream initializes fresh Nodes, and its status loop runs twice;
//   - this CCM takes over those Nodes: two status passes leave every
//     address as upstream wrote it (before, they rewrote every Node);
//   - the Nodes registered again, this CCM initializes them: the same list.
//
// The Nodes: four interfaces listed out of device order with secondary
// addresses, IPv6 and a detaching one; one interface with a secondary
// address and no public IP; and a kubelet whose --node-ip is a secondary
// address of its second interface, which must initialize (before, it
// stayed tainted: "provided node ip ... is not valid") with that address
// first.
func TestNodeAddressesMatchUpstream(t *testing.T) {
	if env.upstream == "" {
		t.Skip("upstream's aws-cloud-controller-manager is not built: run hack/build-upstream.sh (or set AWS_CCM_UPSTREAM_BINARY)")
	}
	all := instances(t)
	for _, families := range []string{"", "ipv4,ipv6", "ipv6,ipv4", "ipv6"} {
		t.Run("NodeIPFamilies="+families, func(t *testing.T) {
			nodes := all
			if families == "ipv6" {
				// An IPv4 --node-ip is no address of an IPv6-only Node:
				// both CCMs leave it uninitialized.
				nodes = all[:2]
			}
			names := register(t, nodes)
			up := startCCM(t, "upstream", env.upstream, families)
			up.settle(t, names)
			want := addresses(t, names)
			up.stop()

			this := startCCM(t, "this-takeover", env.this, families)
			this.settle(t, names)
			took := addresses(t, names)
			this.stop()
			for _, n := range names {
				if !slices.Equal(took[n], want[n]) {
					t.Errorf("%s after this CCM took over from upstream's:%s\nupstream's CCM wrote:%s", n, format(took[n]), format(want[n]))
				}
			}

			names = register(t, nodes)
			this = startCCM(t, "this", env.this, families)
			this.settle(t, names)
			fresh := addresses(t, names)
			this.stop()
			for _, n := range names {
				if !slices.Equal(fresh[n], want[n]) {
					t.Errorf("%s as this CCM initializes it:%s\nas upstream's CCM does:%s", n, format(fresh[n]), format(want[n]))
				}
			}
			// Not vacuous: upstream's list holds the secondary addresses
			// (ipv4) and the --node-ip leads.
			if strings.Contains(families, "ipv4") || families == "" {
				if !slices.Contains(want[nodes[0].name()], corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.0.1.112"}) {
					t.Errorf("upstream's addresses of %s lack the secondary 10.0.1.112:%s", nodes[0].name(), format(want[nodes[0].name()]))
				}
				if got := fresh[nodes[2].name()]; len(got) == 0 || got[0].Address != nodes[2].nodeIP {
					t.Errorf("%s (--node-ip=%s):%s; want the node IP first", nodes[2].name(), nodes[2].nodeIP, format(got))
				}
			}
		})
	}
}
