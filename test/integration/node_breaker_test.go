package integration

import (
	"context"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/pkg/awscloud"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
)

// TestNodeDeletionBreakerKeepsNodesWhenEveryInstanceVanishes runs the
// wrong-region failure under the real lifecycle controller: every EC2 call
// succeeds and lists nothing. Past the grace period no NotReady Node is
// deleted and each gets the Warning event; a terminated instance's Node is
// still deleted, and only that one.
func TestNodeDeletionBreakerKeepsNodesWhenEveryInstanceVanishes(t *testing.T) {
	const n = 8 // more than the default bound of 3
	var names, ids []string
	for range n {
		in := addInstance(t, instanceOpts{})
		registerNode(t, nodeOpts{name: in.ID, providerID: providerid.Format(in.AvailabilityZone, in.ID)})
		names, ids = append(names, in.ID), append(ids, in.ID)
	}
	waitFor(t, 60*time.Second, "nodes initialized", func(ctx context.Context) (bool, error) {
		for _, name := range names {
			node, err := getNode(ctx, name)
			if err != nil || !initialized(node) {
				return false, nil //nolint:nilerr // poll predicate: not ready yet, keep waiting
			}
		}
		return true, nil
	})
	for _, name := range names {
		markNotReady(t, name)
	}
	withheldBefore := breakerMetric(t, "aws_ccm_node_deletions_withheld_total")

	if err := env.aws.HideInstances(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.aws.ShowInstances() })
	hidden := time.Now()

	waitFor(t, absenceGrace+30*time.Second, "AWSNodeDeletionWithheld on every Node", func(ctx context.Context) (bool, error) {
		for _, name := range names {
			if !hasEvent(ctx, t, name, awscloud.ReasonNodeDeletionWithheld) {
				return false, nil
			}
		}
		return true, nil
	})
	// Let the lifecycle controller run for another grace period and more:
	// every absence is long past the grace, and still no Node goes.
	time.Sleep(time.Until(hidden.Add(2*absenceGrace + cacheMaxAge)))
	for _, name := range names {
		if gone, err := nodeGone(context.Background(), name); err != nil || gone {
			t.Fatalf("node %s deleted (%v) %s after every instance vanished", name, err, time.Since(hidden).Round(time.Second))
		}
		if hasEvent(context.Background(), t, name, awscloud.ReasonInstanceAbsent) {
			t.Errorf("node %s got %s while its deletion was withheld", name, awscloud.ReasonInstanceAbsent)
		}
	}
	if got := breakerMetric(t, "aws_ccm_node_deletion_breaker_tripped"); got != 1 {
		t.Errorf("aws_ccm_node_deletion_breaker_tripped = %v, want 1", got)
	}
	if got := breakerMetric(t, "aws_ccm_node_deletions_withheld_total") - withheldBefore; got < n {
		t.Errorf("aws_ccm_node_deletions_withheld_total grew by %v, want at least %d", got, n)
	}

	// Termination is evidence: exactly that Node goes.
	if err := env.aws.SetInstanceState(ids[0], "terminated"); err != nil {
		t.Fatal(err)
	}
	if err := env.aws.ShowInstances(ids[0]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "node of the terminated instance deleted", func(ctx context.Context) (bool, error) {
		return nodeGone(ctx, names[0])
	})
	time.Sleep(3 * nodeMonitorPeriod)
	for _, name := range names[1:] {
		if gone, err := nodeGone(context.Background(), name); err != nil || gone {
			t.Fatalf("node %s deleted (%v) with only %s terminated", name, err, ids[0])
		}
	}
}

// hasEvent reports whether node has an event with reason.
func hasEvent(ctx context.Context, t *testing.T, node, reason string) bool {
	t.Helper()
	evs, err := nodeEvents(ctx, node)
	if err != nil {
		t.Logf("list events of %s: %v", node, err)
		return false
	}
	for _, e := range evs {
		if e.Reason == reason {
			return true
		}
	}
	return false
}

// breakerMetric reads a metric without labels from the CCM's registry.
func breakerMetric(t *testing.T, name string) float64 {
	t.Helper()
	mfs, err := env.gather.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name || len(mf.GetMetric()) != 1 {
			continue
		}
		m := mf.GetMetric()[0]
		if g := m.GetGauge(); g != nil {
			return g.GetValue()
		}
		return m.GetCounter().GetValue()
	}
	t.Fatalf("metric %s not registered", name)
	return 0
}
