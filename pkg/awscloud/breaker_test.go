package awscloud

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/metrics"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/awsccmctl/awsccmctl/internal/instances"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// eventLog records the provider's events by object name.
type eventLog struct {
	mu     sync.Mutex
	byName map[string][]string // "reason: message"
}

func (l *eventLog) Event(obj runtime.Object, _, reason, message string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	name := obj.(metav1.Object).GetName()
	l.byName[name] = append(l.byName[name], reason+": "+message)
}

func (l *eventLog) Eventf(obj runtime.Object, eventtype, reason, format string, args ...any) {
	l.Event(obj, eventtype, reason, fmt.Sprintf(format, args...))
}

func (l *eventLog) AnnotatedEventf(obj runtime.Object, _ map[string]string, eventtype, reason, format string, args ...any) {
	l.Eventf(obj, eventtype, reason, format, args...)
}

// reasons returns how many events of reason each Node got.
func (l *eventLog) reasons(reason string) map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for name, evs := range l.byName {
		for _, e := range evs {
			if strings.HasPrefix(e, reason+": ") {
				out[name]++
			}
		}
	}
	return out
}

// fleet is a Cloud over the emulator with n running instances and their
// Nodes, on a fake clock, as the lifecycle controller sees it.
type fleet struct {
	srv    *awsemu.Server
	cloud  *Cloud
	clk    *clocktesting.FakePassiveClock
	events *eventLog
	reg    metrics.KubeRegistry
	nodes  []*corev1.Node
	ids    []string // ids[i] is the instance of nodes[i]
}

const testCacheMaxAge = 30 * time.Second

func newFleet(t *testing.T, n int, args ...string) *fleet {
	t.Helper()
	f := &fleet{srv: startEmulator(t), clk: clocktesting.NewFakePassiveClock(time.Unix(100000, 0)),
		events: &eventLog{byName: map[string][]string{}}, reg: metrics.NewKubeRegistry()}
	var objs []runtime.Object
	for k := range n {
		id := fmt.Sprintf("i-0b0000000000%05d", k)
		err := f.srv.AddInstance(awsemu.Instance{ID: id, SubnetID: "subnet-0demo00000000000a", PrivateIP: fmt.Sprintf("10.0.1.%d", 100+k),
			Tags: map[string]string{"kubernetes.io/cluster/demo": "owned"}})
		if err != nil {
			t.Fatal(err)
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", k)},
			Spec: corev1.NodeSpec{ProviderID: providerid.Format("us-east-1a", id)}}
		f.nodes, f.ids = append(f.nodes, node), append(f.ids, id)
		objs = append(objs, node)
	}
	path := writeConfig(t, "[Global]\nRegion = us-east-1\nVPC = vpc-0demo000000000001\nKubernetesClusterID = demo\n")
	flags := NewFlags()
	fs := pflag.NewFlagSet("aws", pflag.ContinueOnError)
	flags.AddFlags(fs)
	if err := fs.Parse(append([]string{"--aws-instance-cache-max-age=" + testCacheMaxAge.String()}, args...)); err != nil {
		t.Fatal(err)
	}
	c, err := New(context.Background(), Config{CloudConfigPath: path, Flags: flags, Clock: f.clk, ViewMetrics: instances.NewMetrics(f.reg)})
	if err != nil {
		t.Fatal(err)
	}
	c.events = f.events
	factory := informers.NewSharedInformerFactory(fake.NewClientset(objs...), 0)
	c.SetInformers(factory)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	factory.Start(stop)
	factory.WaitForCacheSync(stop)
	f.cloud = c
	return f
}

// pass steps the clock past the cache age and asks InstanceExists about
// every Node, as one pass of the lifecycle controller over NotReady Nodes
// does; it returns the Nodes reported gone.
func (f *fleet) pass(t *testing.T) []string {
	t.Helper()
	f.clk.SetTime(f.clk.Now().Add(testCacheMaxAge + time.Second))
	inst, _ := f.cloud.InstancesV2()
	var gone []string
	for _, n := range f.nodes {
		exists, err := inst.InstanceExists(context.Background(), n)
		if err != nil {
			t.Fatalf("InstanceExists(%s): %v", n.Name, err)
		}
		if !exists {
			gone = append(gone, n.Name)
		}
	}
	return gone
}

// passesOver runs passes for d; it returns the Nodes reported gone, by the
// first pass that did.
func (f *fleet) passesOver(t *testing.T, d time.Duration) map[string]int {
	t.Helper()
	gone := map[string]int{}
	for p := 0; time.Duration(p)*(testCacheMaxAge+time.Second) <= d; p++ {
		for _, n := range f.pass(t) {
			if _, seen := gone[n]; !seen {
				gone[n] = p
			}
		}
	}
	return gone
}

// wantMetrics checks the breaker's metric values; their names and help
// are checked once, in internal/instances.
func (f *fleet) wantMetrics(t *testing.T, tripped, withheld int) {
	t.Helper()
	mfs, err := f.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if m := mf.GetMetric(); len(m) == 1 {
			got[mf.GetName()] = m[0].GetGauge().GetValue() + m[0].GetCounter().GetValue()
		}
	}
	want := map[string]float64{"aws_ccm_node_deletion_breaker_tripped": float64(tripped), "aws_ccm_node_deletions_withheld_total": float64(withheld)}
	for name, v := range want {
		if g, ok := got[name]; !ok || g != v {
			t.Fatalf("%s = %v (registered: %t), want %v", name, g, ok, v)
		}
	}
}

// TestAllInstancesVanishingDeletesNoNode: every lookup succeeds and finds
// nothing, as with a cloud config naming the wrong region. No Node is
// reported gone, each gets a Warning event naming what to check, and the
// metrics show the trip; a terminated instance's Node still goes at once,
// and the breaker resets when the instances are back.
func TestAllInstancesVanishingDeletesNoNode(t *testing.T) {
	f := newFleet(t, 40)
	if gone := f.pass(t); len(gone) != 0 {
		t.Fatalf("running instances reported gone: %v", gone)
	}
	if err := f.srv.HideInstances(); err != nil {
		t.Fatal(err)
	}
	// Twice the grace period: every absence is long past it.
	if gone := f.passesOver(t, 2*DefaultAbsenceGracePeriod); len(gone) != 0 {
		t.Fatalf("%d Nodes reported gone while every instance was missing: %v", len(gone), gone)
	}
	withheld := f.events.reasons(ReasonNodeDeletionWithheld)
	if len(withheld) != 40 {
		t.Fatalf("%d Nodes got %s, want all 40", len(withheld), ReasonNodeDeletionWithheld)
	}
	if absent := f.events.reasons(ReasonInstanceAbsent); len(absent) != 0 {
		t.Fatalf("%s events while the breaker withheld the deletions: %v", ReasonInstanceAbsent, absent)
	}
	msg := f.events.byName["node-0"][0]
	for _, want := range []string{f.ids[0], "40 of 40 Nodes", "more than the 4", "--aws-max-absent-node-deletions", "us-east-1", "vpc-0demo000000000001", "sts get-caller-identity"} {
		if !strings.Contains(msg, want) {
			t.Errorf("event %q does not mention %q", msg, want)
		}
	}
	f.wantMetrics(t, 1, 40)

	// Termination is evidence: that Node goes at once, the others stay.
	if err := f.srv.SetInstanceState(f.ids[5], "terminated"); err != nil {
		t.Fatal(err)
	}
	if err := f.srv.ShowInstances(f.ids[5]); err != nil {
		t.Fatal(err)
	}
	if gone := f.pass(t); len(gone) != 1 || gone[0] != "node-5" {
		t.Fatalf("after terminating %s: gone %v, want [node-5]", f.ids[5], gone)
	}
	f.wantMetrics(t, 1, 40)

	// The instances are back (the cloud config was fixed): the breaker
	// resets on the next answers, without any Node up for deletion.
	if err := f.srv.ShowInstances(); err != nil {
		t.Fatal(err)
	}
	if gone := f.pass(t); len(gone) != 1 || gone[0] != "node-5" {
		t.Fatalf("after the instances came back: gone %v, want only the terminated node-5", gone)
	}
	if f.cloud.breaker.Tripped() {
		t.Fatal("the breaker is still tripped with every instance back")
	}
	f.wantMetrics(t, 0, 40)
}

// TestOneMissingInstanceOfFortyIsDeletedAfterTheGrace: a real loss is not
// held back.
func TestOneMissingInstanceOfFortyIsDeletedAfterTheGrace(t *testing.T) {
	f := newFleet(t, 40)
	f.pass(t)
	if err := f.srv.HideInstances(f.ids[17]); err != nil {
		t.Fatal(err)
	}
	gone := f.passesOver(t, DefaultAbsenceGracePeriod+2*testCacheMaxAge)
	if len(gone) != 1 {
		t.Fatalf("gone = %v, want node-17 alone", gone)
	}
	p, ok := gone["node-17"]
	if !ok {
		t.Fatalf("gone = %v, want node-17", gone)
	}
	// The first pass records the absence; the grace runs from there.
	if at := time.Duration(p+1) * (testCacheMaxAge + time.Second); at < DefaultAbsenceGracePeriod {
		t.Fatalf("node-17 reported gone %s after its instance vanished, inside the %s grace", at, DefaultAbsenceGracePeriod)
	}
	if n := f.events.reasons(ReasonInstanceAbsent)["node-17"]; n == 0 {
		t.Fatalf("node-17 got no %s event", ReasonInstanceAbsent)
	}
	if w := f.events.reasons(ReasonNodeDeletionWithheld); len(w) != 0 {
		t.Fatalf("deletions withheld for one missing instance: %v", w)
	}
	f.wantMetrics(t, 0, 0)
}

// TestTerminatedInstanceGoesAtOnceWhileTripped: the breaker holds back
// absence only; termination is reported in the same pass.
func TestTerminatedInstanceGoesAtOnceWhileTripped(t *testing.T) {
	f := newFleet(t, 10)
	f.pass(t)
	if err := f.srv.HideInstances(f.ids[1:]...); err != nil {
		t.Fatal(err)
	}
	if gone := f.passesOver(t, DefaultAbsenceGracePeriod+testCacheMaxAge); len(gone) != 0 {
		t.Fatalf("gone while 9 of 10 are missing: %v", gone)
	}
	if !f.cloud.breaker.Tripped() {
		t.Fatal("breaker not tripped with 9 of 10 Nodes missing past the grace")
	}
	if err := f.srv.SetInstanceState(f.ids[0], "terminated"); err != nil {
		t.Fatal(err)
	}
	if gone := f.pass(t); len(gone) != 1 || gone[0] != "node-0" {
		t.Fatalf("gone = %v, want node-0 (terminated) in the next pass", gone)
	}
}

// TestMaxAbsentNodeDeletionsFlag: the bound is the flag's when set; a
// negative one is refused with the flag's name.
func TestMaxAbsentNodeDeletionsFlag(t *testing.T) {
	f := newFleet(t, 10, "--aws-max-absent-node-deletions=9")
	f.pass(t)
	if err := f.srv.HideInstances(f.ids[1:]...); err != nil {
		t.Fatal(err)
	}
	if gone := f.passesOver(t, DefaultAbsenceGracePeriod+2*testCacheMaxAge); len(gone) != 9 {
		t.Fatalf("with a bound of 9, %d of the 9 missing Nodes were reported gone: %v", len(gone), gone)
	}
	f.wantMetrics(t, 0, 0)

	flags := NewFlags()
	flags.MaxAbsentNodeDeletions = -1
	if err := flags.Validate(); err == nil || !strings.Contains(err.Error(), "--aws-max-absent-node-deletions") {
		t.Fatalf("Validate with -1 = %v, want an error naming the flag", err)
	}
}

// TestBreakerCensusAddsNoEC2Calls: the census is answered by the view (the
// cluster snapshot finds the present instances, the NotReady Nodes' own
// lookups the missing one), so lifecycle passes over 10 NotReady Nodes of
// 40 cost the same DescribeInstances calls once a missing instance is past
// the grace and every pass consults the breaker as before.
func TestBreakerCensusAddsNoEC2Calls(t *testing.T) {
	f := newFleet(t, 40)
	f.pass(t)
	if err := f.srv.HideInstances(f.ids[17]); err != nil {
		t.Fatal(err)
	}
	inst, _ := f.cloud.InstancesV2()
	notReady := f.nodes[10:20]
	// passes runs the lifecycle controller's 5 s passes over notReady for
	// one grace period; it returns the DescribeInstances calls they made.
	passes := func() int {
		before := f.srv.Calls("ec2", "DescribeInstances")
		for range DefaultAbsenceGracePeriod / (5 * time.Second) {
			f.clk.SetTime(f.clk.Now().Add(5 * time.Second))
			for _, n := range notReady {
				if _, err := inst.InstanceExists(context.Background(), n); err != nil {
					t.Fatalf("InstanceExists(%s): %v", n.Name, err)
				}
			}
		}
		return f.srv.Calls("ec2", "DescribeInstances") - before
	}
	within := passes()
	if n := f.events.reasons(ReasonInstanceAbsent)["node-17"]; n != 0 {
		t.Fatalf("node-17 released within the grace")
	}
	past := passes()
	if f.events.reasons(ReasonInstanceAbsent)["node-17"] == 0 {
		t.Fatal("node-17 was not released past the grace: the breaker was not consulted")
	}
	if within == 0 || past != within {
		t.Fatalf("DescribeInstances per grace period: %d within it, %d past it with the breaker consulted; want the same", within, past)
	}
}
