package tagging

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

const old = time.Hour // older than DefaultNewNodeGrace

// TestTagsNodesInBatches: 1,203 Nodes joining at once are tagged with two
// CreateTags calls (EC2 takes 1,000 resource IDs per call), and every Node
// gets upstream's checksum label. Upstream makes one call per Node.
func TestTagsNodesInBatches(t *testing.T) {
	const extra = 1200
	ids := []string{emuA, emuB, emuC}
	for i := range extra {
		ids = append(ids, fmt.Sprintf("i-0bb%014x", i))
	}
	fixture := func(f *awsemu.Fixture) {
		for _, id := range ids[3:] {
			f.Instances = append(f.Instances, awsemu.Instance{ID: id, SubnetID: emuSubnet, Tags: map[string]string{clusterTag: "owned"}})
		}
	}
	var nodes []*corev1.Node
	for i, id := range ids {
		nodes = append(nodes, node(fmt.Sprintf("node-%04d", i), id, old))
	}
	e := newEmu(t, emuOptions{fixture: fixture, nodes: nodes})
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	e.eventuallyEvery("every Node labelled", 250*time.Millisecond, func() (bool, error) { return e.labelled(names...) })
	if got := e.srv.Calls("ec2", "CreateTags"); got != 2 {
		t.Errorf("CreateTags calls = %d for %d Nodes, want 2 (1,000 instances per call)", got, len(nodes))
	}
	if got := e.count("tag", outcomeTagged); got != len(nodes) {
		t.Errorf("aws_ccm_tagging_nodes_total{action=tag,outcome=tagged} = %d, want %d", got, len(nodes))
	}
	for _, n := range nodes {
		id := n.Spec.ProviderID[strings.LastIndex(n.Spec.ProviderID, "/")+1:]
		if !e.hasTestTags(id) {
			t.Fatalf("instance %s of %s has tags %v, want %v added", id, n.Name, e.tags(id), testTags)
		}
	}
	if got := e.tags(emuA); got["Name"] != "demo-node-a" || got[clusterTag] != "owned" {
		t.Errorf("the instance's own tags changed: %v", got)
	}
}

// TestNoCallWhenTagsAlreadyMatch: instances launched with the tags (a
// launch template's) need no CreateTags; their Nodes are labelled all the
// same, and a Node labelled for these tags is not looked at again.
func TestNoCallWhenTagsAlreadyMatch(t *testing.T) {
	fixture := func(f *awsemu.Fixture) {
		for i := range f.Instances {
			maps.Copy(f.Instances[i].Tags, testTags)
		}
	}
	labelled := node("labelled", emuC, old)
	labelled.Labels = map[string]string{LabelKey: Checksum(testTags)}
	e := newEmu(t, emuOptions{fixture: fixture, nodes: []*corev1.Node{node("a", emuA, old), node("b", emuB, old), labelled}})
	e.eventually("Nodes labelled", func() (bool, error) { return e.labelled("a", "b") })
	e.waitSynced(1, item{node: "a"}, item{node: "b"})
	if got := e.srv.Calls("ec2", "CreateTags"); got != 0 {
		t.Errorf("CreateTags calls = %d, want 0: the instances carry the tags already", got)
	}
	if got := e.count("tag", outcomeAlreadyTagged); got != 2 {
		t.Errorf("aws_ccm_tagging_nodes_total{action=tag,outcome=already_tagged} = %d, want 2", got)
	}
	if got := e.results.of(item{node: "labelled"}); len(got) != 0 {
		t.Errorf("the Node labelled for these tags was synced: %v", got)
	}
}

// TestSplitsOnUnknownInstance: EC2 fails a whole CreateTags call for one
// unknown instance ID. Here the view saw all four instances a moment ago,
// then one was removed: the call for all four fails and is retried without
// the unknown one (two calls), the three are tagged, and the Node of the
// unknown instance (older than the grace for new instances) is dropped,
// not retried. Under the default policy (under the least-privilege one
// IAM denies the call for want of the gone instance's cluster tag, until
// the view notices it is gone).
func TestSplitsOnUnknownInstance(t *testing.T) {
	const unknown = "i-0dead0000000000aa"
	e := newEmu(t, emuOptions{
		policy: "ccm-policy.json",
		fixture: func(f *awsemu.Fixture) {
			f.Instances = append(f.Instances, awsemu.Instance{ID: unknown, SubnetID: emuSubnet, Tags: map[string]string{clusterTag: "owned"}})
		},
		nodes: []*corev1.Node{node("a", emuA, old), node("b", emuB, old), node("c", emuC, old), node("gone", unknown, old)},
		beforeStart: func(e *emu) {
			if _, err := e.view.ObserveIDs(context.Background(), []string{emuA, emuB, emuC, unknown}); err != nil {
				t.Fatal(err)
			}
			if err := e.srv.RemoveInstance(unknown); err != nil {
				t.Fatal(err)
			}
		},
	})
	e.eventually("Nodes labelled", func() (bool, error) { return e.labelled("a", "b", "c") })
	e.waitSynced(1, item{node: "gone"})
	time.Sleep(2 * retryBase) // a retry would have come by now
	if got := e.srv.Calls("ec2", "CreateTags"); got != 2 {
		t.Errorf("CreateTags calls = %d, want 2: all four, then the three without the unknown one", got)
	}
	if got := e.results.of(item{node: "gone"}); len(got) != 1 || got[0] != nil {
		t.Errorf("outcomes for the Node of the unknown instance = %v, want one, without error (not retried)", got)
	}
	if l, _ := e.labelled("gone"); l {
		t.Error("the Node of the unknown instance is labelled")
	}
}

// TestUnknownInstanceOfNewNodeIsRetried: CreateTags is eventually
// consistent for new instances; a new Node's instance EC2 does not know
// yet is retried until it does.
func TestUnknownInstanceOfNewNodeIsRetried(t *testing.T) {
	e := newEmu(t, emuOptions{})
	e.srv.SetVisibilityDelay(1500 * time.Millisecond)
	if err := e.srv.AddInstance(awsemu.Instance{ID: "i-0cc00000000000001", SubnetID: emuSubnet, Tags: map[string]string{clusterTag: "owned"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.CoreV1().Nodes().Create(context.Background(), node("new", "i-0cc00000000000001", 0), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("new Node labelled", func() (bool, error) { return e.labelled("new") })
	e.waitSucceeded(item{node: "new"})
	got := e.results.of(item{node: "new"})
	// Under the least-privilege policy IAM denies tagging an instance it
	// cannot see the cluster tag of yet; under a broad one EC2 answers
	// InvalidInstanceID.NotFound. Either way the Node is retried.
	if len(got) < 2 || got[0] == nil || got[len(got)-1] != nil {
		t.Errorf("outcomes = %v, want an error, then success", got)
	}
	if n := len(e.events.Events); n != 0 {
		t.Errorf("%d Warning events for a new Node's instance EC2 did not know yet, want none: %v", n, <-e.events.Events)
	}
	if !e.hasTestTags("i-0cc00000000000001") {
		t.Errorf("tags = %v", e.tags("i-0cc00000000000001"))
	}
}

// TestRateLimitPacesNodes: with --tagging-controller-rate-limit=4 and
// -burst-limit=1 three Nodes enter the queue a quarter second apart, so
// they are tagged over half a second or more, in more than one call;
// retries are not paced by it (TestRetriesAfterFault).
func TestRateLimitPacesNodes(t *testing.T) {
	start := time.Now()
	e := newEmu(t, emuOptions{rate: 4, burst: 1, nodes: []*corev1.Node{node("a", emuA, old), node("b", emuB, old), node("c", emuC, old)}})
	e.eventually("Nodes labelled", func() (bool, error) { return e.labelled("a", "b", "c") })
	if took := time.Since(start); took < 500*time.Millisecond {
		t.Errorf("three Nodes tagged in %s, want at least 500ms at 4 per second with a burst of 1", took)
	}
	if got := e.srv.Calls("ec2", "CreateTags"); got < 2 {
		t.Errorf("CreateTags calls = %d, want at least 2: the Nodes came paced", got)
	}
}
