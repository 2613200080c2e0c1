package awscloud

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"github.com/awsccmctl/awsccmctl/pkg/providerid"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

func topologyNode(name, id string, tainted bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerid.Format("us-east-1a", id)}}
	if tainted {
		n.Spec.Taints = []corev1.Taint{{Key: cloudproviderapi.TaintExternalCloudProvider, Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	}
	return n
}

// TestInstanceMetadataTopologyLabels: a joining (tainted) Node of a p5
// gets the network-node-layer labels EC2 reports; an initialized Node
// costs no DescribeInstanceTopology call (the node controller ignores
// labels then but asks every status pass); a Node of a type the pattern
// requires without an answer fails with a Warning event saying the fix.
func TestInstanceMetadataTopologyLabels(t *testing.T) {
	f := newFleet(t, 0)
	add := func(id, typ string) {
		if err := f.srv.AddInstance(awsemu.Instance{ID: id, Type: typ, SubnetID: "subnet-0demo00000000000a",
			NetworkNodes: map[bool][]string{true: {"nn-spine", "nn-block", "nn-host"}}[typ == "p5.48xlarge"],
			Tags:         map[string]string{"kubernetes.io/cluster/demo": "owned"}}); err != nil {
			t.Fatal(err)
		}
	}
	const p5, m5, p4 = "i-0c000000000000501", "i-0c000000000000502", "i-0c000000000000401"
	add(p5, "p5.48xlarge")
	add(m5, "m5.large")
	add(p4, "p4d.24xlarge")
	if err := f.srv.SetInstanceState(p4, "pending"); err != nil {
		t.Fatal(err)
	}
	inst, _ := f.cloud.InstancesV2()
	ctx := context.Background()
	calls := func() int { return f.srv.Calls("ec2", "DescribeInstanceTopology") }

	md, err := inst.InstanceMetadata(ctx, topologyNode("p5", p5, false))
	if err != nil {
		t.Fatal(err)
	}
	if calls() != 0 || md.AdditionalLabels[NetworkNodeLabelPrefix+"1"] != "" {
		t.Fatalf("initialized Node: %d topology calls, labels %v; want none", calls(), md.AdditionalLabels)
	}

	md, err = inst.InstanceMetadata(ctx, topologyNode("p5", p5, true))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ZoneIDLabel: "use1-az1", NetworkNodeLabelPrefix + "1": "nn-spine",
		NetworkNodeLabelPrefix + "2": "nn-block", NetworkNodeLabelPrefix + "3": "nn-host"}
	for k, v := range want {
		if md.AdditionalLabels[k] != v {
			t.Errorf("label %s = %q, want %q (all: %v)", k, md.AdditionalLabels[k], v, md.AdditionalLabels)
		}
	}

	md, err = inst.InstanceMetadata(ctx, topologyNode("m5", m5, true))
	if err != nil || len(md.AdditionalLabels) != 1 {
		t.Fatalf("m5: %v, %v; want only the zone-ID label", md, err)
	}

	// A pending p4d: required by the default pattern, listed without
	// network nodes until it runs.
	_, err = inst.InstanceMetadata(ctx, topologyNode("p4", p4, true))
	if err == nil {
		t.Fatal("pending p4d.24xlarge: no error; the Node would be initialized without its required labels")
	}
	evs := f.events.byName["p4"]
	if len(evs) != 1 || !strings.HasPrefix(evs[0], ReasonTopologyMissing+": ") || !strings.Contains(evs[0], "SupportedTopologyInstanceTypePattern") {
		t.Errorf("events of p4 = %v, want one %s naming the pattern", evs, ReasonTopologyMissing)
	}
	if err := f.srv.SetInstanceState(p4, "running"); err != nil {
		t.Fatal(err)
	}
	if md, err = inst.InstanceMetadata(ctx, topologyNode("p4", p4, true)); err != nil || md.AdditionalLabels[NetworkNodeLabelPrefix+"3"] == "" {
		t.Fatalf("running p4d: %v, %v; want its labels", md, err)
	}
}

// TestTopologyDeniedInitializesWithoutLabels: under iam/ccm-policy.json
// without ec2:DescribeInstanceTopology, a joining p5 Node (a type the
// default pattern requires) is initialized with its other labels but no
// network-node labels, and gets a Warning event naming the permission;
// upstream initializes it too. A Node of another type gets no event.
func TestTopologyDeniedInitializesWithoutLabels(t *testing.T) {
	f := newFleet(t, 0)
	raw, err := os.ReadFile(filepath.Join("..", "..", "iam", "ccm-policy.json"))
	if err != nil {
		t.Fatal(err)
	}
	policy := strings.Replace(string(raw), `"ec2:DescribeInstanceTopology",`, "", 1)
	if policy == string(raw) {
		t.Fatal("iam/ccm-policy.json does not grant ec2:DescribeInstanceTopology")
	}
	if err := f.srv.AddPrincipal(awsemu.Principal{AccessKeyID: awsemu.DefaultAccessKeyID, Policies: []string{policy}}); err != nil {
		t.Fatal(err)
	}
	const p5, m5 = "i-0c000000000000511", "i-0c000000000000512"
	for id, typ := range map[string]string{p5: "p5.48xlarge", m5: "m5.large"} {
		if err := f.srv.AddInstance(awsemu.Instance{ID: id, Type: typ, SubnetID: "subnet-0demo00000000000a",
			Tags: map[string]string{"kubernetes.io/cluster/demo": "owned"}}); err != nil {
			t.Fatal(err)
		}
	}
	inst, _ := f.cloud.InstancesV2()
	md, err := inst.InstanceMetadata(context.Background(), topologyNode("p5", p5, true))
	if err != nil {
		t.Fatalf("p5 under a policy without ec2:DescribeInstanceTopology: %v; want it initialized without network-node labels", err)
	}
	if md.AdditionalLabels[ZoneIDLabel] != "use1-az1" || md.AdditionalLabels[NetworkNodeLabelPrefix+"1"] != "" {
		t.Errorf("p5 labels = %v, want the zone ID and no network-node labels", md.AdditionalLabels)
	}
	evs := f.events.byName["p5"]
	if len(evs) != 1 || !strings.HasPrefix(evs[0], ReasonTopologyDenied+": ") || !strings.Contains(evs[0], "Grant ec2:DescribeInstanceTopology") ||
		!strings.Contains(evs[0], "UnauthorizedOperation") {
		t.Errorf("events of p5 = %v, want one %s naming the permission", evs, ReasonTopologyDenied)
	}
	if _, err := inst.InstanceMetadata(context.Background(), topologyNode("m5", m5, true)); err != nil {
		t.Fatal(err)
	}
	if evs := f.events.byName["m5"]; len(evs) != 0 {
		t.Errorf("events of m5 = %v, want none (its type is not required)", evs)
	}
}
