package integration

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/instances"
	"github.com/awsccmctl/awsccmctl/internal/tagging"
)

// taggingTestLabel marks the Nodes of TestTaggingController: its
// controller watches only those, so it leaves the suite's other Nodes
// (and their AWS call counts) alone.
const taggingTestLabel = "awsccmctl.test/tagging"

// TestTaggingController runs the tagging controller in-process against the
// suite's kube-apiserver, with a real Node informer, the real AWS clients
// (registry guard, the CCM's least-privilege policy enforced by the
// emulator) and its own instance view keeping the tags. Nodes register as
// a kubelet with --cloud-provider=external does, without providerID; the
// suite's CCM initializes them, which is what brings them to the tagging
// controller. Their instances get the tags and the Nodes upstream's
// checksum label; a deleted Node's instance loses the tags, and only those.
func TestTaggingController(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tags := map[string]string{"team": "blue", "cost-center": "42"}
	clients, err := awsapi.NewClients(ctx, awsapi.Options{Region: region})
	if err != nil {
		t.Fatal(err)
	}
	view := instances.New(instances.NewEC2(clients.EC2), instances.Options{
		MaxAge: cacheMaxAge, TagKeys: tagging.ViewTagKeys(tags, clusterID),
	})
	factory := informers.NewSharedInformerFactoryWithOptions(env.kube, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = taggingTestLabel }))
	c, err := tagging.New(ctx, tagging.Config{
		Tags: tags, Nodes: factory.Core().V1().Nodes(), Client: env.kube,
		EC2: tagging.NewEC2(clients.EC2), Instances: view, ClusterID: clusterID,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	factory.Start(ctx.Done())
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		factory.Shutdown()
	})

	var ids, names []string
	for range 3 {
		in := addInstance(t, instanceOpts{})
		registerNode(t, nodeOpts{name: in.PrivateDNSName})
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{taggingTestLabel: "true"}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.kube.CoreV1().Nodes().Patch(ctx, in.PrivateDNSName, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		ids, names = append(ids, in.ID), append(names, in.PrivateDNSName)
	}
	waitFor(t, 30*time.Second, "Nodes initialized, tagged and labelled", func(ctx context.Context) (bool, error) {
		for i, name := range names {
			n, err := getNode(ctx, name)
			if err != nil || n.Labels[tagging.LabelKey] != tagging.Checksum(tags) {
				return false, err
			}
			in, _ := env.aws.Instance(ids[i])
			if in.Tags["team"] != "blue" || in.Tags["cost-center"] != "42" {
				return false, nil
			}
		}
		return true, nil
	})

	if err := env.kube.CoreV1().Nodes().Delete(ctx, names[0], metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "tags removed from the deleted Node's instance", func(context.Context) (bool, error) {
		in, _ := env.aws.Instance(ids[0])
		_, team := in.Tags["team"]
		_, cost := in.Tags["cost-center"]
		return !team && !cost, nil
	})
	in, _ := env.aws.Instance(ids[0])
	if in.Tags["kubernetes.io/cluster/"+clusterID] != "owned" || in.Tags["Name"] == "" {
		t.Errorf("the deleted Node's instance lost its own tags: %v", in.Tags)
	}
	for _, id := range ids[1:] {
		if in, _ := env.aws.Instance(id); in.Tags["team"] != "blue" {
			t.Errorf("instance %s of a remaining Node lost its tags: %v", id, in.Tags)
		}
	}
}
