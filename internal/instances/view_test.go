package instances

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeEC2 evaluates the filters the view sends. It is a unit-test fake; the
// wire-level behaviour is covered by the integration tests on the emulator.
type fakeEC2 struct {
	mu        sync.Mutex
	instances []ec2types.Instance
	calls     atomic.Int32
	err       error
}

func (f *fakeEC2) DescribeInstances(_ context.Context, in *ec2.DescribeInstancesInput, _ ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	var match []ec2types.Instance
	for _, inst := range f.instances {
		if matches(inst, in.Filters) {
			match = append(match, inst)
		}
	}
	start := 0
	if in.NextToken != nil {
		if _, err := fmt.Sscan(*in.NextToken, &start); err != nil {
			return nil, err
		}
	}
	end := min(start+int(aws.ToInt32(in.MaxResults)), len(match))
	out := &ec2.DescribeInstancesOutput{Reservations: []ec2types.Reservation{{Instances: match[start:end]}}}
	if end < len(match) {
		out.NextToken = aws.String(fmt.Sprint(end))
	}
	return out, nil
}

func (f *fakeEC2) client() EC2 { return EC2{DescribeInstances: f.DescribeInstances} }

func matches(inst ec2types.Instance, filters []ec2types.Filter) bool {
	for _, f := range filters {
		var got []string
		switch name := aws.ToString(f.Name); name {
		case "instance-id":
			got = []string{aws.ToString(inst.InstanceId)}
		case "private-dns-name":
			got = []string{aws.ToString(inst.PrivateDnsName)}
		case "instance-state-name":
			got = []string{string(inst.State.Name)}
		case "vpc-id":
			got = []string{aws.ToString(inst.VpcId)}
		case "tag-key":
			for _, t := range inst.Tags {
				got = append(got, aws.ToString(t.Key))
			}
		default:
			panic("unexpected filter " + name)
		}
		if !slices.ContainsFunc(got, func(g string) bool { return slices.Contains(f.Values, g) }) {
			return false
		}
	}
	return true
}

func (f *fakeEC2) add(id, name, state string, tagged bool) {
	inst := ec2types.Instance{
		InstanceId:     aws.String(id),
		PrivateDnsName: aws.String(name),
		State:          &ec2types.InstanceState{Name: ec2types.InstanceStateName(state)},
		VpcId:          aws.String("vpc-1"),
		Placement:      &ec2types.Placement{AvailabilityZone: aws.String("us-east-1a")},
	}
	if tagged {
		inst.Tags = []ec2types.Tag{{Key: aws.String("kubernetes.io/cluster/test"), Value: aws.String("owned")}}
	}
	f.mu.Lock()
	f.instances = append(f.instances, inst)
	f.mu.Unlock()
}

var clusterFilters = []ec2types.Filter{{Name: aws.String("tag-key"), Values: []string{"kubernetes.io/cluster/test"}}}

func id(n int) string   { return fmt.Sprintf("i-%017x", n) }
func name(n int) string { return fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", n/250, n%250) }

func TestSequentialLookupsOfTaggedInstancesShareOneSnapshot(t *testing.T) {
	api := &fakeEC2{}
	for n := range 2500 {
		api.add(id(n), name(n), "running", true)
	}
	reg := metrics.NewKubeRegistry()
	v := New(api.client(), Options{ClusterFilters: clusterFilters, Metrics: NewMetrics(reg)})
	ctx := context.Background()
	for n := range 2500 {
		obs, err := v.ByID(ctx, id(n))
		if err != nil || obs.Instance == nil || obs.Instance.ID != id(n) {
			t.Fatalf("ByID(%s) = %+v, %v", id(n), obs, err)
		}
		inst, err := v.ByName(ctx, name(n))
		if err != nil || inst.ID != id(n) {
			t.Fatalf("ByName(%s) = %+v, %v", name(n), inst, err)
		}
	}
	// 2,500 instances are three pages of one snapshot.
	if got := api.calls.Load(); got != 3 {
		t.Fatalf("DescribeInstances calls = %d, want 3", got)
	}
	want := `
# HELP aws_ccm_instance_lookups_total [ALPHA] Instance lookups by key kind (id, name) and whether the shared view answered from memory (hit) or had to ask EC2 (miss).
# TYPE aws_ccm_instance_lookups_total counter
aws_ccm_instance_lookups_total{kind="id",result="hit"} 2499
aws_ccm_instance_lookups_total{kind="id",result="miss"} 1
aws_ccm_instance_lookups_total{kind="name",result="hit"} 2500
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "aws_ccm_instance_lookups_total"); err != nil {
		t.Fatal(err)
	}
}

func TestUntaggedInstancesAreLookedUpByIDInBatches(t *testing.T) {
	api := &fakeEC2{}
	for n := range 300 {
		api.add(id(n), name(n), "running", false)
	}
	// The window is wide: under -race on a busy machine, starting 300
	// goroutines can take longer than the 20 ms default.
	v := New(api.client(), Options{ClusterFilters: clusterFilters, BatchWindow: 500 * time.Millisecond})
	var wg sync.WaitGroup
	for n := range 300 {
		wg.Go(func() {
			if obs, err := v.ByID(context.Background(), id(n)); err != nil || obs.Instance == nil {
				t.Errorf("ByID(%s) = %+v, %v", id(n), obs, err)
			}
		})
	}
	wg.Wait()
	// One (empty) snapshot plus 300 IDs in chunks of 150.
	if got := api.calls.Load(); got != 3 {
		t.Fatalf("DescribeInstances calls = %d, want 3", got)
	}
}

func TestCandidatesMakeASequentialPassCostOneCall(t *testing.T) {
	api := &fakeEC2{}
	var ids []string
	for n := range 100 {
		api.add(id(n), name(n), "running", false)
		ids = append(ids, id(n))
	}
	v := New(api.client(), Options{BatchWindow: time.Millisecond, Candidates: func() Candidates { return Candidates{IDs: ids} }})
	for _, i := range ids {
		if _, err := v.ByID(context.Background(), i); err != nil {
			t.Fatal(err)
		}
	}
	if got := api.calls.Load(); got != 1 {
		t.Fatalf("DescribeInstances calls = %d, want 1", got)
	}
}

func TestAbsenceIsRecordedOnlyFromSuccessfulLookups(t *testing.T) {
	api := &fakeEC2{}
	api.add(id(1), name(1), "running", true)
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	v := New(api.client(), Options{ClusterFilters: clusterFilters, MaxAge: 10 * time.Second, BatchWindow: time.Millisecond, Clock: clk})
	ctx := context.Background()

	api.err = errors.New("RequestLimitExceeded")
	if _, err := v.ByID(ctx, id(2)); err == nil {
		t.Fatal("ByID succeeded while EC2 failed")
	}
	api.err = nil
	obs, err := v.ByID(ctx, id(2))
	if err != nil || obs.Instance != nil || obs.AbsentChecks != 1 || !obs.AbsentSince.Equal(clk.Now()) {
		t.Fatalf("first successful miss: %+v, %v", obs, err)
	}
	first := clk.Now()
	clk.SetTime(first.Add(5 * time.Second)) // still fresh: no new call, same answer
	calls := api.calls.Load()
	if obs, _ = v.ByID(ctx, id(2)); obs.AbsentChecks != 1 || api.calls.Load() != calls {
		t.Fatalf("fresh miss re-asked EC2: %+v", obs)
	}
	clk.SetTime(first.Add(11 * time.Second))
	if obs, _ = v.ByID(ctx, id(2)); obs.AbsentChecks != 2 || !obs.AbsentSince.Equal(first) {
		t.Fatalf("second miss: %+v", obs)
	}
	// The instance appears (eventual consistency): absence is forgotten.
	api.add(id(2), name(2), "pending", false)
	clk.SetTime(first.Add(22 * time.Second))
	if obs, _ = v.ByID(ctx, id(2)); obs.Instance == nil || !obs.AbsentSince.IsZero() || obs.AbsentChecks != 0 {
		t.Fatalf("after appearing: %+v", obs)
	}
}

func TestByNameSkipsTerminatedAndRemembersMisses(t *testing.T) {
	api := &fakeEC2{}
	api.add(id(1), name(1), "terminated", false)
	api.add(id(2), name(1), "running", false) // the name was reused
	v := New(api.client(), Options{VPCID: "vpc-1", BatchWindow: time.Millisecond})
	ctx := context.Background()
	inst, err := v.ByName(ctx, name(1))
	if err != nil || inst.ID != id(2) {
		t.Fatalf("ByName = %+v, %v; want %s", inst, err, id(2))
	}
	if _, err := v.ByName(ctx, name(9)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ByName(unknown) error = %v, want ErrNotFound", err)
	}
	calls := api.calls.Load()
	if _, err := v.ByName(ctx, name(9)); !errors.Is(err, ErrNotFound) || api.calls.Load() != calls {
		t.Fatalf("a fresh miss asked EC2 again (calls %d -> %d)", calls, api.calls.Load())
	}
}

// TestConcurrentAccessIsRaceFree: lookups by ID and by name from many
// goroutines, across snapshot refreshes, answer what EC2 holds (present or
// absent) without a data race (run with -race, as make test-unit does).
func TestConcurrentAccessIsRaceFree(t *testing.T) {
	api := &fakeEC2{}
	for n := range 50 {
		api.add(id(n), name(n), "running", n%2 == 0)
	}
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	v := New(api.client(), Options{ClusterFilters: clusterFilters, MaxAge: time.Second, BatchWindow: time.Millisecond, Clock: clk})
	// check answers one lookup of instance k: 0..49 exist, 50..59 do not.
	check := func(k int) error {
		obs, err := v.ByID(context.Background(), id(k))
		switch {
		case err != nil:
			return fmt.Errorf("ByID(%d): %w", k, err)
		case k < 50 && (obs.Instance == nil || obs.Instance.ID != id(k)):
			return fmt.Errorf("ByID(%d) = %+v, want instance %s", k, obs.Instance, id(k))
		case k >= 50 && obs.Instance != nil:
			return fmt.Errorf("ByID(%d) = %+v, want absent", k, obs.Instance)
		}
		inst, err := v.ByName(context.Background(), name(k))
		switch {
		case k < 50 && (err != nil || inst == nil || inst.ID != id(k) || inst.PrivateDNSName != name(k)):
			return fmt.Errorf("ByName(%d) = %+v, %w; want instance %s", k, inst, err, id(k))
		case k >= 50 && !errors.Is(err, ErrNotFound):
			return fmt.Errorf("ByName(%d) = %+v, %w; want ErrNotFound", k, inst, err)
		}
		return nil
	}
	// Each round, 8 workers look up concurrently; between rounds the clock
	// passes MaxAge, so the next round's lookups refresh the snapshot and
	// look up names and IDs concurrently. The clock does not move during a
	// round: an answer older than MaxAge by the time it is read is refused
	// ("lookup finished without an answer"), which is not what this test is
	// about.
	for round := range 10 {
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for n := range 20 {
					if err := check((w*20 + n) % 60); err != nil {
						t.Errorf("round %d, worker %d, lookup %d: %v", round, w, n, err)
						return
					}
				}
			})
		}
		wg.Wait()
		clk.SetTime(clk.Now().Add(time.Second))
	}
}

func TestByIDsAnswersFreshFromMemoryAndLooksUpTheRestTogether(t *testing.T) {
	api := &fakeEC2{}
	for n := range 400 {
		api.add(id(n), name(n), "running", n < 100) // 100 tagged, 300 not
	}
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	reg := metrics.NewKubeRegistry()
	v := New(api.client(), Options{ClusterFilters: clusterFilters, MaxAge: 10 * time.Second, BatchWindow: time.Millisecond, Clock: clk, Metrics: NewMetrics(reg)})
	ctx := context.Background()

	// Tagged instances come from the snapshot; the 300 others and two
	// unknown IDs go in one batch of three 150-value chunks; a duplicate
	// is asked once.
	var ids []string
	for n := range 400 {
		ids = append(ids, id(n))
	}
	ids = append(ids, id(1000), id(1001), id(5))
	got, err := v.ByIDs(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 400 || got[id(1000)] != nil || got[id(399)].ID != id(399) {
		t.Fatalf("ByIDs returned %d instances (unknown one: %v)", len(got), got[id(1000)])
	}
	if _, ok := got[id(1001)]; ok {
		t.Fatal("an absent ID is in the map")
	}
	if calls := api.calls.Load(); calls != 4 {
		t.Fatalf("DescribeInstances calls = %d, want 4 (snapshot + 3 chunks)", calls)
	}
	if obs, _ := v.ByID(ctx, id(1000)); obs.Instance != nil || obs.AbsentChecks != 1 {
		t.Fatalf("absence was not recorded: %+v", obs)
	}

	// Everything is fresh now: no call.
	if got, err = v.ByIDs(ctx, ids[:10]); err != nil || len(got) != 10 || api.calls.Load() != 4 {
		t.Fatalf("fresh ByIDs = %d instances, %v, calls %d", len(got), err, api.calls.Load())
	}
	want := `
# HELP aws_ccm_instance_lookups_total [ALPHA] Instance lookups by key kind (id, name) and whether the shared view answered from memory (hit) or had to ask EC2 (miss).
# TYPE aws_ccm_instance_lookups_total counter
aws_ccm_instance_lookups_total{kind="id",result="hit"} 11
aws_ccm_instance_lookups_total{kind="id",result="miss"} 402
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "aws_ccm_instance_lookups_total"); err != nil {
		t.Fatal(err)
	}

	// Only the stale entry is asked again, alone with its chunk.
	clk.SetTime(clk.Now().Add(5 * time.Second))
	if _, err := v.ByID(ctx, id(1000)); err != nil { // still fresh
		t.Fatal(err)
	}
	clk.SetTime(clk.Now().Add(6 * time.Second))
	before := api.calls.Load()
	if got, err = v.ByIDs(ctx, []string{id(150), id(1000)}); err != nil || got[id(150)] == nil {
		t.Fatalf("ByIDs after MaxAge = %v, %v", got, err)
	}
	// The snapshot is stale too: one snapshot call, then one chunk for
	// the two untagged IDs.
	if d := api.calls.Load() - before; d != 2 {
		t.Fatalf("DescribeInstances calls after MaxAge = %d, want 2", d)
	}
}

func TestByIDsErrorIsNeverAbsence(t *testing.T) {
	api := &fakeEC2{}
	api.add(id(1), name(1), "running", false)
	v := New(api.client(), Options{BatchWindow: time.Millisecond})
	ctx := context.Background()
	api.err = errors.New("RequestLimitExceeded")
	got, err := v.ByIDs(ctx, []string{id(1), id(2)})
	if err == nil || got != nil {
		t.Fatalf("ByIDs while EC2 fails = %v, %v; want nil and an error", got, err)
	}
	if !strings.Contains(err.Error(), "RequestLimitExceeded") {
		t.Fatalf("error %q does not carry EC2's", err)
	}
	api.err = nil
	obs, err := v.ByID(ctx, id(2))
	if err != nil || obs.AbsentChecks != 1 {
		t.Fatalf("the failed lookup counted as absence: %+v, %v", obs, err)
	}
	if got, err := v.ByIDs(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("ByIDs(nil) = %v, %v", got, err)
	}
}

func TestByIDsJoinsTheBatchOfConcurrentByIDCalls(t *testing.T) {
	api := &fakeEC2{}
	for n := range 20 {
		api.add(id(n), name(n), "running", false)
	}
	v := New(api.client(), Options{BatchWindow: 500 * time.Millisecond})
	var wg sync.WaitGroup
	for n := range 10 {
		wg.Go(func() {
			if obs, err := v.ByID(context.Background(), id(n)); err != nil || obs.Instance == nil {
				t.Errorf("ByID(%s) = %+v, %v", id(n), obs, err)
			}
		})
	}
	wg.Go(func() {
		var ids []string
		for n := 10; n < 20; n++ {
			ids = append(ids, id(n))
		}
		if got, err := v.ByIDs(context.Background(), ids); err != nil || len(got) != 10 {
			t.Errorf("ByIDs = %d instances, %v", len(got), err)
		}
	})
	wg.Wait()
	if got := api.calls.Load(); got != 1 {
		t.Fatalf("DescribeInstances calls = %d, want 1", got)
	}
}

func TestObserveIDsReturnsAbsenceAndPresence(t *testing.T) {
	api := &fakeEC2{}
	api.add(id(1), name(1), "running", false)
	api.add(id(2), name(2), "terminated", false)
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	v := New(api.client(), Options{BatchWindow: time.Millisecond, Clock: clk})
	got, err := v.ObserveIDs(context.Background(), []string{id(1), id(2), id(3), id(3)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[id(1)].Instance == nil || !got[id(2)].Instance.Terminated() {
		t.Fatalf("ObserveIDs = %+v", got)
	}
	if o := got[id(3)]; o.Instance != nil || o.AbsentChecks != 1 || !o.AbsentSince.Equal(clk.Now()) {
		t.Fatalf("unknown instance observed as %+v, want absent once since now", o)
	}
	if api.calls.Load() != 1 {
		t.Fatalf("DescribeInstances calls = %d, want 1", api.calls.Load())
	}
}
