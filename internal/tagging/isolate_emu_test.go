package tagging

import (
	"context"
	"fmt"
	"math/bits"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// Tests of one bad instance in a batch: EC2 fails a whole CreateTags or
// DeleteTags call for it, and the controller must fail only its Node.

// firstPass captures, at the end of the first sync holding item bad, how
// many calls of action the emulator counted, the events sent so far and
// how many syncs had items of the wanted kind (remove or not) by then.
type firstPass struct {
	mu      sync.Mutex
	done    bool
	calls   int
	events  []nodeEvent
	batches int
}

func (p *firstPass) hook(e *emu, action string, bad item) {
	prev := e.c.afterSync
	e.c.afterSync = func(batch []item, errs map[item]error) {
		prev(batch, errs)
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.done {
			return
		}
		for _, it := range batch {
			if it.remove == bad.remove {
				p.batches++
				break
			}
		}
		for _, it := range batch {
			if it == bad {
				p.done, p.calls, p.events = true, e.srv.Calls("ec2", action), e.recorded.all()
			}
		}
	}
}

func (p *firstPass) get() (calls int, events []nodeEvent, batches int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls, p.events, p.batches
}

// fleet returns n cluster instances' IDs, their Nodes (old enough to get
// events) and a fixture change adding the instances; change, when set,
// changes the tags of instance i.
func fleet(n int, change func(i int, tags map[string]string)) ([]string, []*corev1.Node, func(*awsemu.Fixture)) {
	var ids []string
	var nodes []*corev1.Node
	for i := range n {
		ids = append(ids, fmt.Sprintf("i-0cc%014x", i))
		nodes = append(nodes, node(fmt.Sprintf("node-%04d", i), ids[i], old))
	}
	return ids, nodes, func(f *awsemu.Fixture) {
		for i, id := range ids {
			tags := map[string]string{clusterTag: "owned"}
			if change != nil {
				change(i, tags)
			}
			f.Instances = append(f.Instances, awsemu.Instance{ID: id, SubnetID: emuSubnet, Tags: tags})
		}
	}
}

// TestOneInstanceAtTagLimitFailsAlone: 1,000 Nodes join; one instance
// already carries 50 user tags, so EC2 refuses every CreateTags call that
// holds it (TagLimitExceeded, the whole call, not naming the instance).
// The other 999 are tagged and labelled in the first pass, in at most one
// call per batch plus 2*ceil(log2 1000) for the split; only the full
// instance's Node gets a Warning event, naming TagLimitExceeded and the
// limit, and counts as tag_limit_exceeded; its retries cost one call each,
// as it is called apart from then on.
func TestOneInstanceAtTagLimitFailsAlone(t *testing.T) {
	const n, badIndex = 1000, 637
	ids, nodes, fixture := fleet(n, func(i int, tags map[string]string) {
		if i == badIndex {
			for k := 1; k < maxTagsPerInstance; k++ { // and the cluster tag: 50
				tags[fmt.Sprintf("cost-allocation-%02d", k)] = "x"
			}
		}
	})
	var pass firstPass
	bad := item{node: nodes[badIndex].Name}
	e := newEmu(t, emuOptions{fixture: fixture, nodes: nodes, beforeStart: func(e *emu) { pass.hook(e, "CreateTags", bad) }})
	good := make([]string, 0, n-1)
	for i, nd := range nodes {
		if i != badIndex {
			good = append(good, nd.Name)
		}
	}
	e.eventuallyEvery("the 999 Nodes labelled", 250*time.Millisecond, func() (bool, error) { return e.labelled(good...) })
	e.waitSynced(2, bad)

	calls, events, batches := pass.get()
	if limit := batches + 2*bits.Len(uint(n-1)); calls > limit {
		t.Errorf("CreateTags calls = %d by the end of the first pass over %d batch(es), want at most %d (one per batch + 2*ceil(log2 %d))", calls, batches, limit, n)
	}
	t.Logf("first pass: %d CreateTags calls in %d batch(es)", calls, batches)
	if len(events) != 1 {
		t.Fatalf("%d events in the first pass, want 1 (on %s): %v", len(events), bad.node, events)
	}
	ev := events[0]
	if ev.node != bad.node || ev.eventType != corev1.EventTypeWarning || ev.reason != eventsReason ||
		!strings.Contains(ev.message, "TagLimitExceeded") || !strings.Contains(ev.message, "50 user tags") || !strings.Contains(ev.message, ids[badIndex]) {
		t.Errorf("event = %+v, want a Warning %s on %s naming TagLimitExceeded, the 50-tag limit and %s", ev, eventsReason, bad.node, ids[badIndex])
	}
	// Retries repeat the same event on the same Node (one Event, counted,
	// in the API), nothing on any other Node.
	for _, ev := range e.recorded.all() {
		if ev.node != bad.node || ev.message != events[0].message {
			t.Errorf("event on a retry differs: %+v", ev)
		}
	}
	if got := e.srv.Calls("ec2", "CreateTags"); got != calls+1 {
		t.Errorf("CreateTags calls = %d after the first retry, want %d: the full instance is retried alone", got, calls+1)
	}
	if l, _ := e.labelled(bad.node); l {
		t.Errorf("%s is labelled", bad.node)
	}
	if tags := e.tags(ids[badIndex]); tags["team"] != "" || len(tags) != maxTagsPerInstance {
		t.Errorf("the full instance's tags changed: %d tags, team=%q", len(tags), tags["team"])
	}
	for i, id := range ids {
		if i != badIndex && !e.hasTestTags(id) {
			t.Fatalf("instance %s has tags %v, want %v added", id, e.tags(id), testTags)
		}
	}
	if got := e.count("tag", outcomeTagged); got != n-1 {
		t.Errorf("aws_ccm_tagging_nodes_total{action=tag,outcome=tagged} = %d, want %d", got, n-1)
	}
	if got := e.count("tag", outcomeTagLimit); got < 2 {
		t.Errorf("aws_ccm_tagging_nodes_total{action=tag,outcome=tag_limit_exceeded} = %d, want one per pass (2 so far)", got)
	}
	if got := e.count("tag", outcomeFailed); got != 0 {
		t.Errorf("aws_ccm_tagging_nodes_total{action=tag,outcome=failed} = %d, want 0: no Node failed for another's sake", got)
	}
}

// TestDeniedInstanceFailsAloneOnUntag: 64 Nodes are deleted (the fake
// clientset's watch holds 100 events at a time); someone took the cluster
// tag off one instance after the view looked, so under the least-privilege
// policy IAM denies every DeleteTags call that holds it. The 63 others are
// untagged, in at most one call per batch plus 2*ceil(log2 64); the
// denied one keeps its tags and its (deleted) Node gets one Warning event
// naming DeleteTags and the denial, and counts as unauthorized.
func TestDeniedInstanceFailsAloneOnUntag(t *testing.T) {
	const n, badIndex = 64, 40
	ids, nodes, fixture := fleet(n, nil)
	var pass firstPass
	bad := item{node: nodes[badIndex].Name, instanceID: ids[badIndex], remove: true}
	e := newEmu(t, emuOptions{fixture: fixture, nodes: nodes, beforeStart: func(e *emu) { pass.hook(e, "DeleteTags", bad) }})
	ctx := context.Background()
	names := make([]string, n)
	for i, nd := range nodes {
		names[i] = nd.Name
	}
	e.eventually("Nodes labelled", func() (bool, error) { return e.labelled(names...) })
	if _, err := adminEC2(t, e).DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: []string{ids[badIndex]}, Tags: []ec2types.Tag{{Key: aws.String(clusterTag)}}}); err != nil {
		t.Fatal(err)
	}
	e.srv.ResetCalls()
	before := len(e.recorded.all())
	for _, name := range names {
		if err := e.client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.waitSynced(1, bad)
	e.eventually("the 63 others untagged", func() (bool, error) {
		for i, id := range ids {
			if i != badIndex && e.hasTestTags(id) {
				return false, nil
			}
		}
		return true, nil
	})

	calls, events, batches := pass.get()
	if limit := batches + 2*bits.Len(uint(n-1)); calls > limit {
		t.Errorf("DeleteTags calls = %d by the end of the first pass over %d batch(es), want at most %d", calls, batches, limit)
	}
	t.Logf("first pass: %d DeleteTags calls in %d batch(es)", calls, batches)
	events = events[before:]
	if len(events) != 1 {
		t.Fatalf("%d events in the first pass, want 1 (on %s): %v", len(events), bad.node, events)
	}
	if ev := events[0]; ev.node != bad.node || ev.eventType != corev1.EventTypeWarning ||
		!strings.Contains(ev.message, "DeleteTags") || !strings.Contains(ev.message, "UnauthorizedOperation") || !strings.Contains(ev.message, "SCP") {
		t.Errorf("event = %+v, want a Warning on %s naming DeleteTags, UnauthorizedOperation and the policy/SCP", ev, bad.node)
	}
	if !e.hasTestTags(ids[badIndex]) {
		t.Errorf("the denied instance lost its tags: %v", e.tags(ids[badIndex]))
	}
	if got := e.count("untag", outcomeUntagged); got != n-1 {
		t.Errorf("aws_ccm_tagging_nodes_total{action=untag,outcome=untagged} = %d, want %d", got, n-1)
	}
	if got := e.count("untag", outcomeDenied); got < 1 {
		t.Errorf("aws_ccm_tagging_nodes_total{action=untag,outcome=unauthorized} = %d, want at least 1", got)
	}
	if got := e.count("untag", outcomeFailed); got != 0 {
		t.Errorf("aws_ccm_tagging_nodes_total{action=untag,outcome=failed} = %d, want 0", got)
	}
}
