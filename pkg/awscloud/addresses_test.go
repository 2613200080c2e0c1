package awscloud

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudnodeutil "k8s.io/cloud-provider/node/helpers"

	"github.com/awsccmctl/awsccmctl/internal/instances"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// The instances of the address tests, served by the emulator and read
// through the SDK and the instance view, as in production.
const (
	singleENI = "i-0ad0000000000a001" // one interface, public IP
	multiENI  = "i-0ad0000000000a002" // four interfaces listed out of device order, secondaries, IPv6
	private   = "i-0ad0000000000a003" // no public IP
)

func addressFleet(t *testing.T, families string) *instancesV2 {
	t.Helper()
	srv := startEmulator(t)
	add := func(in awsemu.Instance) {
		in.SubnetID = "subnet-0demo00000000000a"
		in.Tags = map[string]string{"kubernetes.io/cluster/demo": "owned"}
		if err := srv.AddInstance(in); err != nil {
			t.Fatal(err)
		}
	}
	add(awsemu.Instance{ID: singleENI, PrivateIP: "10.0.1.10", PublicIP: "54.1.2.10"})
	// EC2 lists interfaces in no set order (cloud-provider-aws#911); the
	// emulator in the fixture's.
	add(awsemu.Instance{ID: multiENI, PublicIP: "54.1.2.20", ENIs: []awsemu.ENI{
		{ID: "eni-0ad0000000000022", DeviceIndex: 2, PrivateIPs: []string{"10.0.1.40", "10.0.1.41"}, IPv6: []string{"2600:1f18::40"}},
		{ID: "eni-0ad0000000000020", DeviceIndex: 0, PrivateIPs: []string{"10.0.1.20", "10.0.1.21", "10.0.1.22"}, IPv6: []string{"2600:1f18:0:0::20", "2600:1f18::21"}},
		{ID: "eni-0ad0000000000023", DeviceIndex: 3, Status: "detaching", PrivateIPs: []string{"10.0.1.50"}, IPv6: []string{"2600:1f18::50"}},
		{ID: "eni-0ad0000000000021", DeviceIndex: 1, PrivateIPs: []string{"10.0.1.30"}, IPv6: []string{"2600:1f18::30"}},
	}})
	add(awsemu.Instance{ID: private, PrivateIP: "10.0.1.60"})
	conf := "[Global]\nRegion = us-east-1\nVPC = vpc-0demo000000000001\nKubernetesClusterID = demo\n"
	for f := range strings.SplitSeq(families, ",") {
		if f != "" {
			conf += "NodeIPFamilies = " + f + "\n"
		}
	}
	c, err := New(context.Background(), Config{CloudConfigPath: writeConfig(t, conf), Flags: NewFlags()})
	if err != nil {
		t.Fatal(err)
	}
	c.events = &eventLog{byName: map[string][]string{}}
	return &instancesV2{c: c}
}

func addressesOf(t *testing.T, i *instancesV2, id string) []corev1.NodeAddress {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: id}, Spec: corev1.NodeSpec{ProviderID: providerid.Format("us-east-1a", id)}}
	md, err := i.InstanceMetadata(context.Background(), node)
	if err != nil {
		t.Fatalf("InstanceMetadata(%s): %v", id, err)
	}
	return md.NodeAddresses
}

func internalIP(a string) corev1.NodeAddress {
	return corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: a}
}

// dnsOf is the tail of upstream's ipv4 block for an instance of the demo
// subnet (us-east-1, ip-name hostnames).
func dnsOf(privateIP, publicIP string) []corev1.NodeAddress {
	name := "ip-" + strings.ReplaceAll(privateIP, ".", "-") + ".ec2.internal"
	out := []corev1.NodeAddress{}
	if publicIP != "" {
		out = append(out, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: publicIP})
	}
	out = append(out, corev1.NodeAddress{Type: corev1.NodeInternalDNS, Address: name}, corev1.NodeAddress{Type: corev1.NodeHostName, Address: name})
	if publicIP != "" {
		out = append(out, corev1.NodeAddress{Type: corev1.NodeExternalDNS, Address: "ec2-" + strings.ReplaceAll(publicIP, ".", "-") + ".compute-1.amazonaws.com"})
	}
	return out
}

// TestNodeAddressesAreUpstreams compares, field by field and in order, the
// addresses InstanceMetadata gives with the list upstream v1.37.0's
// getInstanceNodeAddress (extractIPv4NodeAddresses, extractIPv6NodeAddresses)
// makes of the same DescribeInstances answer:
//   - ipv4: every private IPv4 of every in-use interface (secondaries
//     included), interfaces in device order whatever EC2's listing order,
//     each interface's addresses in EC2's order; then ExternalIP,
//     InternalDNS, Hostname, ExternalDNS; a detaching interface is left out;
//   - ipv6: the first IPv6 address of each in-use interface; in device order
//     after an ipv4 block (upstream sorted the list in place there), in
//     EC2's listing order when first; in canonical form;
//   - no public IP: no ExternalIP and no ExternalDNS.
func TestNodeAddressesAreUpstreams(t *testing.T) {
	multiV4 := slices.Concat(
		[]corev1.NodeAddress{internalIP("10.0.1.20"), internalIP("10.0.1.21"), internalIP("10.0.1.22"), internalIP("10.0.1.30"), internalIP("10.0.1.40"), internalIP("10.0.1.41")},
		dnsOf("10.0.1.20", "54.1.2.20"))
	v6Sorted := []corev1.NodeAddress{internalIP("2600:1f18::20"), internalIP("2600:1f18::30"), internalIP("2600:1f18::40")}
	v6Listed := []corev1.NodeAddress{internalIP("2600:1f18::40"), internalIP("2600:1f18::20"), internalIP("2600:1f18::30")}
	cases := []struct {
		families string
		id       string
		want     []corev1.NodeAddress
	}{
		{"", singleENI, slices.Concat([]corev1.NodeAddress{internalIP("10.0.1.10")}, dnsOf("10.0.1.10", "54.1.2.10"))},
		{"", multiENI, multiV4},
		{"", private, slices.Concat([]corev1.NodeAddress{internalIP("10.0.1.60")}, dnsOf("10.0.1.60", ""))},
		{"ipv4", multiENI, multiV4},
		{"ipv4,ipv6", multiENI, slices.Concat(multiV4, v6Sorted)},
		{"ipv6,ipv4", multiENI, slices.Concat(v6Listed, multiV4)},
		{"ipv6", multiENI, v6Listed},
		{"ipv4,ipv6", private, slices.Concat([]corev1.NodeAddress{internalIP("10.0.1.60")}, dnsOf("10.0.1.60", ""))},
	}
	fleets := map[string]*instancesV2{}
	for _, tc := range cases {
		t.Run(tc.families+"/"+tc.id, func(t *testing.T) {
			i := fleets[tc.families]
			if i == nil {
				i = addressFleet(t, tc.families)
				fleets[tc.families] = i
			}
			got := addressesOf(t, i, tc.id)
			if len(got) != len(tc.want) {
				t.Errorf("%d addresses, want %d:\n got %v\nwant %v", len(got), len(tc.want), got, tc.want)
			}
			for k := range max(len(got), len(tc.want)) {
				var g, w corev1.NodeAddress
				if k < len(got) {
					g = got[k]
				}
				if k < len(tc.want) {
					w = tc.want[k]
				}
				if g != w {
					t.Errorf("address %d = %s %q, want %s %q", k, g.Type, g.Address, w.Type, w.Address)
				}
			}
		})
	}
}

// TestProvidedNodeIPOnSecondaryAddress: a kubelet started with --node-ip on
// a secondary address (the annotation alpha.kubernetes.io/provided-node-ip)
// passes the cloud node controller's check, GetNodeAddressesFromNodeIP,
// which refused it when only primaries were listed ("failed to get node
// address from cloud provider that matches ip"), and that address leads.
func TestProvidedNodeIPOnSecondaryAddress(t *testing.T) {
	i := addressFleet(t, "")
	for _, ip := range []string{"10.0.1.21", "10.0.1.30", "10.0.1.41"} {
		got, err := cloudnodeutil.GetNodeAddressesFromNodeIP(ip, addressesOf(t, i, multiENI))
		if err != nil {
			t.Fatalf("--node-ip=%s: %v", ip, err)
		}
		if got[0] != internalIP(ip) {
			t.Errorf("--node-ip=%s: addresses %v, want it first", ip, got)
		}
	}
	if _, err := cloudnodeutil.GetNodeAddressesFromNodeIP("10.0.1.50", addressesOf(t, i, multiENI)); err == nil {
		t.Error("--node-ip on the detaching interface's address accepted; upstream refuses it")
	}
}

// TestNodeAddressesRejectsInvalidAddress: an address that does not parse is
// an error naming the instance and interface, as upstream, not a Node
// address.
func TestNodeAddressesRejectsInvalidAddress(t *testing.T) {
	inst := &instances.Instance{ID: "i-1", ENIs: []instances.ENI{{ID: "eni-1", Status: "in-use", PrivateIPs: []string{"10.0.1.300"}}}}
	if _, err := nodeAddresses(inst, nil); err == nil || !strings.Contains(err.Error(), `i-1 has an invalid private address "10.0.1.300" on eni-1`) {
		t.Errorf("err = %v", err)
	}
	inst = &instances.Instance{ID: "i-2", ENIs: []instances.ENI{{ID: "eni-2", Status: "in-use", IPv6: []string{"2600:zz::1"}}}}
	if _, err := nodeAddresses(inst, []string{"ipv6"}); err == nil || !strings.Contains(err.Error(), "invalid IPv6 address") {
		t.Errorf("err = %v", err)
	}
}

// TestInNodeOrder: the same addresses keep the Node's order; any other
// list (one more, one less, one changed) is the CCM's.
func TestInNodeOrder(t *testing.T) {
	ip := func(a string) corev1.NodeAddress { return corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: a} }
	dns := corev1.NodeAddress{Type: corev1.NodeInternalDNS, Address: "ip-10-0-1-10.ec2.internal"}
	host := corev1.NodeAddress{Type: corev1.NodeHostName, Address: "ip-10-0-1-10.ec2.internal"}
	ours := []corev1.NodeAddress{ip("10.0.1.10"), ip("10.0.1.11"), dns, host}
	inTree := []corev1.NodeAddress{ip("10.0.1.10"), ip("10.0.1.11"), host, dns}
	for _, tc := range []struct {
		name   string
		onNode []corev1.NodeAddress
		want   []corev1.NodeAddress
	}{
		{"the in-tree kubelet's order kept", inTree, inTree},
		{"a new Node (the kubelet's two addresses)", []corev1.NodeAddress{ip("10.0.1.10"), host}, ours},
		{"an address gone from the instance", []corev1.NodeAddress{ip("10.0.1.10"), ip("10.0.1.12"), host, dns}, ours},
		{"a duplicate does not stand for another address", []corev1.NodeAddress{ip("10.0.1.10"), ip("10.0.1.10"), host, dns}, ours},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := inNodeOrder(ours, tc.onNode); !slices.Equal(got, tc.want) {
				t.Errorf("inNodeOrder = %v, want %v", got, tc.want)
			}
		})
	}
}
