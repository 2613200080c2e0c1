package tagging

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// TestRemovesTagsWhenNodeIsDeleted: deleting Nodes removes the configured
// tags from their instances in one DeleteTags call; the instances' other
// tags (Name, the cluster tag) stay.
func TestRemovesTagsWhenNodeIsDeleted(t *testing.T) {
	e := newEmu(t, emuOptions{nodes: []*corev1.Node{node("a", emuA, old), node("b", emuB, old)}})
	e.eventually("Nodes labelled", func() (bool, error) { return e.labelled("a", "b") })
	e.srv.ResetCalls()
	for _, n := range []string{"a", "b"} {
		if err := e.client.CoreV1().Nodes().Delete(context.Background(), n, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.eventually("tags removed", func() (bool, error) { return !e.hasTestTags(emuA) && !e.hasTestTags(emuB), nil })
	if got := e.srv.Calls("ec2", "DeleteTags"); got != 1 {
		t.Errorf("DeleteTags calls = %d for two Nodes, want 1", got)
	}
	for id, name := range map[string]string{emuA: "demo-node-a", emuB: "demo-node-b"} {
		if got, want := e.tags(id), map[string]string{"Name": name, clusterTag: "owned"}; !maps.Equal(got, want) {
			t.Errorf("%s tags = %v, want %v (only the configured tags removed)", id, got, want)
		}
	}
}

// TestRemovalLeavesChangedTags: a tag whose value someone changed after the
// controller set it is no longer the controller's: DeleteTags names the
// value, so EC2 keeps it.
func TestRemovalLeavesChangedTags(t *testing.T) {
	e := newEmu(t, emuOptions{nodes: []*corev1.Node{node("a", emuA, old)}})
	e.eventually("Node labelled", func() (bool, error) { return e.labelled("a") })
	admin := adminEC2(t, e)
	if _, err := admin.CreateTags(context.Background(), createTags(emuA, "team", "red")); err != nil {
		t.Fatal(err)
	}
	if err := e.client.CoreV1().Nodes().Delete(context.Background(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("env removed", func() (bool, error) { _, ok := e.tags(emuA)["env"]; return !ok, nil })
	if got := e.tags(emuA)["team"]; got != "red" {
		t.Errorf("team = %q after the Node went, want red (changed by someone else, kept)", got)
	}
}

// TestRemovalOfGoneInstances: a deleted Node whose instance is terminated
// or gone from EC2 needs no DeleteTags call and is done at once, never
// retried; when the view has not noticed the instance is gone, EC2's
// InvalidInstanceID.NotFound ends the work as well (default policy: under
// the least-privilege one IAM denies first, see TestSplitsOnUnknownInstance).
func TestRemovalOfGoneInstances(t *testing.T) {
	const removed, vanished = "i-0ee00000000000001", "i-0ee00000000000002"
	fixture := func(f *awsemu.Fixture) {
		for _, id := range []string{removed, vanished} {
			f.Instances = append(f.Instances, awsemu.Instance{ID: id, SubnetID: emuSubnet, Tags: map[string]string{clusterTag: "owned"}})
		}
	}
	e := newEmu(t, emuOptions{policy: "ccm-policy.json", fixture: fixture, nodes: []*corev1.Node{
		node("terminated", emuTerminated, old), node("removed", removed, old), node("vanished", vanished, old),
	}})
	e.eventually("live Nodes labelled", func() (bool, error) { return e.labelled("removed", "vanished") })
	if err := e.srv.RemoveInstance(removed); err != nil {
		t.Fatal(err)
	}
	// The view looks again and sees removed missing; vanished is removed
	// after its look, so only DeleteTags learns it is gone.
	e.viewClock.Step(time.Hour)
	if _, err := e.view.ObserveIDs(context.Background(), []string{removed, vanished, emuTerminated}); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.RemoveInstance(vanished); err != nil {
		t.Fatal(err)
	}
	e.srv.ResetCalls()
	for _, n := range []string{"terminated", "removed", "vanished"} {
		if err := e.client.CoreV1().Nodes().Delete(context.Background(), n, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	items := []item{{"terminated", emuTerminated, true}, {"removed", removed, true}, {"vanished", vanished, true}}
	e.eventually("removals done", func() (bool, error) {
		for _, it := range items {
			if len(e.results.of(it)) == 0 {
				return false, nil
			}
		}
		return true, nil
	})
	time.Sleep(2 * retryBase) // a retry would have come by now
	for _, it := range items {
		if got := e.results.of(it); len(got) != 1 || got[0] != nil {
			t.Errorf("%s: outcomes %v, want one success", it.node, got)
		}
	}
	if got := e.srv.Calls("ec2", "DeleteTags"); got != 1 {
		t.Errorf("DeleteTags calls = %d, want 1 (for the instance the view still thought present)", got)
	}
	for outcome, want := range map[string]int{outcomeTerminated: 1, outcomeGone: 2, outcomeUntagged: 0} {
		if got := e.count("untag", outcome); got != want {
			t.Errorf("aws_ccm_tagging_nodes_total{action=untag,outcome=%s} = %d, want %d", outcome, got, want)
		}
	}
}

// TestRetriesAfterFault: CreateTags throttled past the SDK's own retries
// (RequestLimitExceeded on all three attempts, a fault injected at the
// emulator) fails the call as a whole: the batch is not split, its Nodes
// go back to the queue with backoff and the next try tags them, and no
// Warning event blames a Node for it (outcome failed).
func TestRetriesAfterFault(t *testing.T) {
	e := newEmu(t, emuOptions{
		nodes:  []*corev1.Node{node("a", emuA, old), node("b", emuB, old)},
		faults: []awsemu.Fault{{Service: "ec2", Action: "CreateTags", Code: "RequestLimitExceeded", HTTPStatus: 503, Remaining: 3}},
	})
	e.eventually("Nodes labelled", func() (bool, error) { return e.labelled("a", "b") })
	e.waitSucceeded(item{node: "a"})
	e.waitSucceeded(item{node: "b"})
	if got := e.srv.Calls("ec2", "CreateTags"); got != 4 {
		t.Errorf("CreateTags calls = %d, want 4 (three throttled attempts of one call, then the retry; no split)", got)
	}
	for _, n := range []string{"a", "b"} {
		if got := e.results.of(item{node: n}); len(got) != 2 || errorCode(got[0]) != "RequestLimitExceeded" || got[1] != nil {
			t.Errorf("outcomes of %s = %v, want RequestLimitExceeded, then success", n, got)
		}
	}
	if got := e.count("tag", outcomeFailed); got != 2 {
		t.Errorf("aws_ccm_tagging_nodes_total{action=tag,outcome=failed} = %d, want 2", got)
	}
	if got := e.recorded.all(); len(got) != 0 {
		t.Errorf("events for a throttled call: %v, want none", got)
	}
}

// TestForeignInstanceDoesNotBlockTheClusters: under the least-privilege
// policy a Node on an instance without the cluster tag cannot be tagged
// (IAM denies it, as it should: the CCM must not tag what is not the
// cluster's), and its Node gets a Warning event naming the fix; the view
// shows the instance without the cluster tag, so it is a suspect, called
// apart from the cluster's instances, and the denial does not fail them.
func TestForeignInstanceDoesNotBlockTheClusters(t *testing.T) {
	const foreign = "i-0ff00000000000001"
	fixture := func(f *awsemu.Fixture) {
		f.Instances = append(f.Instances, awsemu.Instance{ID: foreign, SubnetID: emuSubnet, Tags: map[string]string{"kubernetes.io/cluster/other": "owned"}})
	}
	e := newEmu(t, emuOptions{fixture: fixture, nodes: []*corev1.Node{node("a", emuA, old), node("b", emuB, old), node("foreign", foreign, old)}})
	e.eventually("cluster Nodes labelled", func() (bool, error) { return e.labelled("a", "b") })
	assertEvent(t, e, "InstanceTaggingFailed", "UnauthorizedOperation")
	for _, ev := range e.recorded.all() {
		if ev.node != "foreign" || !strings.Contains(ev.message, "grant ec2:CreateTags") {
			t.Errorf("event %+v, want it on Node foreign, naming the fix", ev)
		}
	}
	if got := e.tags(foreign); got["team"] != "" {
		t.Errorf("foreign instance tagged: %v", got)
	}
	if l, _ := e.labelled("foreign"); l {
		t.Error("the foreign instance's Node is labelled")
	}
	// Untagging the cluster's instance is allowed by the same policy.
	if err := e.client.CoreV1().Nodes().Delete(context.Background(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("tags removed from the cluster's instance", func() (bool, error) { return !e.hasTestTags(emuA), nil })
}

func assertEvent(t *testing.T, e *emu, reason, text string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case ev := <-e.events.Events:
			if strings.Contains(ev, reason) && strings.Contains(ev, text) && strings.Contains(ev, "Fix:") {
				return
			}
		case <-deadline:
			t.Fatalf("no Warning event %s mentioning %q", reason, text)
		}
	}
}

// TestLeastPrivilegeDeleteTagsOnTheWire sends DeleteTags requests with the
// controller's credentials to the emulator enforcing
// iam/ccm-policy-least-privilege.json: the controller's own request (named
// keys on a cluster instance) passes; removing the cluster tag, removing
// every tag (no keys), and untagging a foreign instance are denied, and
// change nothing.
func TestLeastPrivilegeDeleteTagsOnTheWire(t *testing.T) {
	const foreign = "i-0ff00000000000002"
	e := newEmu(t, emuOptions{fixture: func(f *awsemu.Fixture) {
		f.Instances = append(f.Instances, awsemu.Instance{ID: foreign, SubnetID: emuSubnet, Tags: map[string]string{"team": "blue"}})
		for i := range f.Instances {
			if f.Instances[i].ID == emuA {
				f.Instances[i].Tags["team"] = "blue"
			}
		}
	}})
	ctx := context.Background()
	del := func(id string, tags ...ec2types.Tag) error {
		_, err := e.ec2.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: []string{id}, Tags: tags})
		return err
	}
	key := func(k string) ec2types.Tag { return ec2types.Tag{Key: aws.String(k)} }
	for name, err := range map[string]error{
		"the cluster tag":          del(emuA, key("team"), key(clusterTag)),
		"every tag":                del(emuA),
		"a foreign instance's tag": del(foreign, key("team")),
	} {
		if code := errorCode(err); code != "UnauthorizedOperation" {
			t.Errorf("removing %s: error code %q (%v), want UnauthorizedOperation", name, code, err)
		}
	}
	if got := e.tags(emuA); got[clusterTag] != "owned" || got["team"] != "blue" {
		t.Errorf("a denied DeleteTags changed %s: %v", emuA, got)
	}
	if err := del(emuA, key("team")); err != nil {
		t.Errorf("removing a configured key from the cluster's instance: %v", err)
	}
	if _, ok := e.tags(emuA)["team"]; ok {
		t.Error("team not removed")
	}
}
