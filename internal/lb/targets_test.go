package lb

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/aws/smithy-go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/instances"
	"github.com/awsccmctl/awsccmctl/internal/lbconfig"
)

func testNode(name, providerID string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{ProviderID: providerID}}
}

func TestTargets(t *testing.T) {
	running := func(id string, groups ...string) *instances.Instance {
		return &instances.Instance{ID: id, State: "running", SecurityGroups: groups}
	}
	allInstances := map[string]*instances.Instance{
		"i-00000001": running("i-00000001", "sg-1"),
		"i-00000002": running("i-00000002", "sg-2", "sg-3"),
		"i-00000003": running("i-00000003"),
		"i-00000004": running("i-00000004"),
		"i-00000009": {ID: "i-00000009", State: "terminated"},
		"i-0000000a": {ID: "i-0000000a", State: "stopped"}, // stopped instances stay targets, not registered anew
	}
	tests := []struct {
		name       string
		nodes      []*corev1.Node
		sel        map[string]string
		instances  map[string]*instances.Instance
		wantLookup []string
		want       []target
		wantEvent  []string
	}{
		{
			name: "nodes without an AWS providerID skipped",
			nodes: []*corev1.Node{
				testNode("n2", "aws:///us-east-1b/i-00000002", nil),
				testNode("joining", "", nil),
				testNode("gce", "gce://project/zone/vm", nil),
				testNode("n1", "i-00000001", nil),
			},
			instances:  allInstances,
			wantLookup: []string{"i-00000002", "i-00000001"},
			want: []target{
				{InstanceID: "i-00000001", Node: "n1", Groups: []string{"sg-1"}, Running: true},
				{InstanceID: "i-00000002", Node: "n2", Groups: []string{"sg-2", "sg-3"}, Running: true},
			},
		},
		{
			name: "target-node-labels: empty value means the key must exist",
			nodes: []*corev1.Node{
				testNode("both", "aws:///us-east-1a/i-00000001", map[string]string{"role": "lb", "edge": "x"}),
				testNode("no-edge", "aws:///us-east-1a/i-00000002", map[string]string{"role": "lb"}),
				testNode("wrong-role", "aws:///us-east-1a/i-00000003", map[string]string{"role": "web", "edge": ""}),
				testNode("edge-empty", "aws:///us-east-1a/i-00000004", map[string]string{"role": "lb", "edge": ""}),
			},
			sel:        map[string]string{"role": "lb", "edge": ""},
			instances:  allInstances,
			wantLookup: []string{"i-00000001", "i-00000004"},
			want: []target{
				{InstanceID: "i-00000001", Node: "both", Groups: []string{"sg-1"}, Running: true},
				{InstanceID: "i-00000004", Node: "edge-empty", Running: true},
			},
		},
		{
			name: "absent and terminated instances skipped with a Warning",
			nodes: []*corev1.Node{
				testNode("n1", "aws:///us-east-1a/i-00000001", nil),
				testNode("gone", "aws:///us-east-1a/i-00000008", nil),
				testNode("dead", "aws:///us-east-1a/i-00000009", nil),
				testNode("stopped", "aws:///us-east-1a/i-0000000a", nil),
			},
			instances:  allInstances,
			wantLookup: []string{"i-00000001", "i-00000008", "i-00000009", "i-0000000a"},
			want: []target{
				{InstanceID: "i-00000001", Node: "n1", Groups: []string{"sg-1"}, Running: true},
				{InstanceID: "i-0000000a", Node: "stopped"},
			},
			wantEvent: []string{"gone (i-00000008)", "dead (i-00000009)"},
		},
		{
			name:       "nil instance in the map counts as absent",
			nodes:      []*corev1.Node{testNode("n1", "aws:///us-east-1a/i-00000001", nil)},
			instances:  map[string]*instances.Instance{"i-00000001": nil},
			wantLookup: []string{"i-00000001"},
			wantEvent:  []string{"n1 (i-00000001)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			r, rec := newTestReconciler(Config{Instances: instanceFunc(func(_ context.Context, ids []string) (map[string]*instances.Instance, error) {
				asked = slices.Clone(ids)
				out := map[string]*instances.Instance{}
				for _, id := range ids {
					if inst, ok := tc.instances[id]; ok {
						out[id] = inst
					}
				}
				return out, nil
			})})
			got, err := r.targets(context.Background(), testService(nil), &lbconfig.Config{TargetNodeLabels: tc.sel}, tc.nodes)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(asked, tc.wantLookup) {
				t.Errorf("looked up %v, want %v", asked, tc.wantLookup)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("targets = %+v\nwant %+v", got, tc.want)
			}
			if tc.wantEvent == nil {
				if ev := events(rec); len(ev) > 0 {
					t.Errorf("unexpected events %q", ev)
				}
				return
			}
			wantOneEvent(t, rec, "Warning "+ReasonTargetSkipped, tc.wantEvent...)
		})
	}
}

func TestTargetsLookupErrorFails(t *testing.T) {
	boom := apiErr("RequestLimitExceeded")
	r, rec := newTestReconciler(Config{Instances: instanceFunc(func(context.Context, []string) (map[string]*instances.Instance, error) {
		// A partial answer with the error must not be used either.
		return map[string]*instances.Instance{"i-00000001": {ID: "i-00000001", State: "running"}}, boom
	})})
	nodes := []*corev1.Node{testNode("n1", "aws:///us-east-1a/i-00000001", nil), testNode("n2", "aws:///us-east-1a/i-00000002", nil)}
	got, err := r.targets(context.Background(), testService(nil), &lbconfig.Config{}, nodes)
	if err == nil {
		t.Fatalf("targets = %+v, nil; want the lookup error (never a shorter target list)", got)
	}
	if !errors.Is(err, boom) {
		t.Errorf("error %v does not wrap the lookup error", err)
	}
	if got != nil {
		t.Errorf("targets = %+v with an error, want nil", got)
	}
	if ev := events(rec); len(ev) > 0 {
		t.Errorf("a lookup error reported nodes as skipped: %q", ev)
	}
}

// TestRegistrations: only running instances are registered; stopped ones
// already registered stay (AWS brings them back when they start); only
// instances that are no target at all are deregistered.
func TestRegistrations(t *testing.T) {
	targets := []target{
		{InstanceID: "i-1", Running: true},  // registered already
		{InstanceID: "i-2", Running: true},  // new
		{InstanceID: "i-3", Running: false}, // stopped, registered: kept
		{InstanceID: "i-4", Running: false}, // stopped, not registered: not added
	}
	add, remove := registrations(targets, []string{"i-1", "i-3", "i-9"})
	if !slices.Equal(add, []string{"i-2"}) || !slices.Equal(remove, []string{"i-9"}) {
		t.Errorf("add %v remove %v, want [i-2] and [i-9]", add, remove)
	}
}

// TestRegisterRunning: when AWS refuses instances as not running, the
// others are registered in a second call; other errors are returned as
// they are.
func TestRegisterRunning(t *testing.T) {
	refused := &smithy.GenericAPIError{Code: "InvalidInstance", Message: "EC2 instance i-0000000000000002 is not in running state."}
	var calls [][]string
	err := registerRunning([]string{"i-0000000000000001", "i-0000000000000002"}, func(ids []string) error {
		calls = append(calls, ids)
		if slices.Contains(ids, "i-0000000000000002") {
			return refused
		}
		return nil
	})
	if err != nil || len(calls) != 2 || !slices.Equal(calls[1], []string{"i-0000000000000001"}) {
		t.Errorf("err %v, calls %v; want a second call with i-0000000000000001 only", err, calls)
	}
	other := apiErr("Throttling")
	calls = nil
	if err := registerRunning([]string{"i-0000000000000001"}, func(ids []string) error { calls = append(calls, ids); return other }); !errors.Is(err, other) || len(calls) != 1 {
		t.Errorf("throttling: err %v after %d calls, want it returned after 1", err, len(calls))
	}
}
