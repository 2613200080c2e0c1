package instances

import (
	"context"
	"runtime/debug"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

// These tests change the process's GC target; none runs in parallel, and
// each restores it.

func withGCPercent(t *testing.T, p int) {
	t.Helper()
	prev := debug.SetGCPercent(p)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
}

func TestHoldLowGCLowersAndRestores(t *testing.T) {
	withGCPercent(t, 100)
	outer := holdLowGC()
	if got := gcPercent(); got != refreshGCPercent {
		t.Fatalf("GC percent during a hold = %d, want %d", got, refreshGCPercent)
	}
	inner := holdLowGC()
	outer()
	outer() // a second release of the same hold changes nothing
	if got := gcPercent(); got != refreshGCPercent {
		t.Fatalf("GC percent while an overlapping hold remains = %d, want %d", got, refreshGCPercent)
	}
	inner()
	if got := gcPercent(); got != 100 {
		t.Fatalf("GC percent after every hold = %d, want 100 back", got)
	}
}

func TestHoldLowGCLeavesTheOperatorsChoice(t *testing.T) {
	for _, p := range []int{-1, 10, refreshGCPercent} { // GOGC=off, lower, equal
		withGCPercent(t, p)
		release := holdLowGC()
		if got := gcPercent(); got != p {
			t.Errorf("GOGC %d: GC percent during a hold = %d, want it unchanged", p, got)
		}
		release()
		if got := gcPercent(); got != p {
			t.Errorf("GOGC %d: GC percent after the hold = %d", p, got)
		}
	}
}

// TestSnapshotListRunsUnderTheHold: the view's list of cluster instances
// is what the hold is for.
func TestSnapshotListRunsUnderTheHold(t *testing.T) {
	withGCPercent(t, 100)
	api := &fakeEC2{}
	for n := range 3 {
		api.add(id(n), name(n), "running", true)
	}
	var during []int
	v := New(EC2{DescribeInstances: func(ctx context.Context, in *ec2.DescribeInstancesInput, o ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error) {
		during = append(during, gcPercent())
		return api.DescribeInstances(ctx, in, o...)
	}}, Options{ClusterFilters: clusterFilters})
	if _, err := v.ByID(t.Context(), id(1)); err != nil {
		t.Fatal(err)
	}
	if len(during) != 1 || during[0] != refreshGCPercent {
		t.Errorf("GC percent during the list's calls = %v, want [%d]", during, refreshGCPercent)
	}
	if got := gcPercent(); got != 100 {
		t.Errorf("GC percent after the list = %d, want 100", got)
	}
}
