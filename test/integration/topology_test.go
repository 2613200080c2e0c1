package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/awsccmctl/awsccmctl/pkg/awscloud"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// topologyCalls counts DescribeInstanceTopology requests.
func topologyCalls() int { return env.aws.Calls("ec2", "DescribeInstanceTopology") }

// emulatorTopology is what EC2 reports for ids, read with the SDK as the
// CCM reads it (credentials and endpoint from the environment setup set).
func emulatorTopology(t *testing.T, ids []string) map[string][]string {
	t.Helper()
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.HTTPClient = awsemu.HTTPClient() })
	out := map[string][]string{}
	for chunk := range slices.Chunk(ids, 100) {
		p := ec2.NewDescribeInstanceTopologyPaginator(c, &ec2.DescribeInstanceTopologyInput{InstanceIds: chunk})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range page.Instances {
				out[aws.ToString(it.InstanceId)] = it.NetworkNodes
			}
		}
	}
	return out
}

// TestTopologyLabelsOnJoiningNodes: p5.48xlarge Nodes (a topology type,
// required by the default SupportedTopologyInstanceTypePattern) joining
// with m6i.large ones get the network-node-layer labels EC2 reports, through
// the real cloud node controller; the m6i Nodes get none. The joins share
// calls, and initialized Nodes cost no more calls on later status passes.
func TestTopologyLabelsOnJoiningNodes(t *testing.T) {
	const n = 40
	var insts []awsemu.Instance
	for i := range n {
		typ := "p5.48xlarge"
		if i%4 == 3 {
			typ = "m6i.large"
		}
		insts = append(insts, addInstance(t, instanceOpts{typ: typ}))
	}
	before := topologyCalls()
	names := make([]string, n)
	for i, in := range insts {
		names[i] = fmt.Sprintf("topo-%s", in.ID)
		registerNode(t, nodeOpts{name: names[i], providerID: providerid.Format(in.AvailabilityZone, in.ID)})
	}
	waitFor(t, 60*time.Second, "all topology nodes initialized", func(ctx context.Context) (bool, error) {
		for _, name := range names {
			node, err := getNode(ctx, name)
			if err != nil || !initialized(node) {
				return false, nil //nolint:nilerr // poll predicate: not ready yet, keep waiting
			}
		}
		return true, nil
	})
	calls := topologyCalls() - before
	t.Logf("initialized %d nodes with %d DescribeInstanceTopology calls", n, calls)
	ids := make([]string, n)
	for i, in := range insts {
		ids[i] = in.ID
	}
	truth := emulatorTopology(t, ids)
	for i, in := range insts {
		node, err := getNode(context.Background(), names[i])
		if err != nil {
			t.Fatal(err)
		}
		want := truth[in.ID]
		if in.Type == "p5.48xlarge" && len(want) != 3 {
			t.Fatalf("the emulator reports %v for p5 %s, want 3 network nodes", want, in.ID)
		}
		for layer := 1; layer <= 4; layer++ {
			key := fmt.Sprintf("%s%d", awscloud.NetworkNodeLabelPrefix, layer)
			wantV := ""
			if layer <= len(want) {
				wantV = want[layer-1]
			}
			if got := node.Labels[key]; got != wantV {
				t.Errorf("node %s (%s) label %s = %q, want %q", node.Name, in.Type, key, got, wantV)
			}
		}
	}
	// Joins arrive over a second or so, in batches of the 20 ms window; a
	// per-Node implementation makes one call per Node.
	if calls >= n/2 {
		t.Errorf("DescribeInstanceTopology calls for %d joining Nodes = %d, want fewer than %d", n, calls, n/2)
	}
	// Status passes call InstanceMetadata for every initialized Node; none
	// of them asks for topology again.
	settled := topologyCalls()
	time.Sleep(statusUpdatePeriod + time.Second)
	if more := topologyCalls() - settled; more != 0 {
		t.Errorf("a status pass over initialized Nodes made %d DescribeInstanceTopology calls, want 0", more)
	}
}

// TestRequiredTopologyHoldsTheNode: a p4d.24xlarge whose instance is still
// pending has no topology yet; its type is required, so the Node stays
// uninitialized with an AWSInstanceTopologyMissing Warning, and is
// initialized with its labels once the instance runs.
func TestRequiredTopologyHoldsTheNode(t *testing.T) {
	in := addInstance(t, instanceOpts{typ: "p4d.24xlarge", state: "pending"})
	name := "topo-pending-" + in.ID
	registerNode(t, nodeOpts{name: name, providerID: providerid.Format(in.AvailabilityZone, in.ID)})
	var found corev1.Event
	waitFor(t, 30*time.Second, "AWSInstanceTopologyMissing event", func(ctx context.Context) (bool, error) {
		evs, err := nodeEvents(ctx, name)
		if err != nil {
			return false, err
		}
		for _, ev := range evs {
			if ev.Type == corev1.EventTypeWarning && ev.Reason == awscloud.ReasonTopologyMissing {
				found = ev
				return true, nil
			}
		}
		return false, nil
	})
	if !strings.Contains(found.Message, "SupportedTopologyInstanceTypePattern") {
		t.Errorf("event message %q does not name the cloud-config key", found.Message)
	}
	node, err := getNode(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if initialized(node) {
		t.Fatal("the Node was initialized without its required topology labels")
	}
	if err := env.aws.SetInstanceState(in.ID, "running"); err != nil {
		t.Fatal(err)
	}
	// Touch the Node so the controller retries now rather than after its
	// backoff.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := getNode(context.Background(), name)
		if err != nil {
			return err
		}
		n.Labels["touched"] = "1"
		_, err = env.kube.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the p4d Node initialized with its labels", func(ctx context.Context) (bool, error) {
		n, err := getNode(ctx, name)
		if err != nil {
			return false, err
		}
		return initialized(n) && n.Labels[awscloud.NetworkNodeLabelPrefix+"3"] != "", nil
	})
}
