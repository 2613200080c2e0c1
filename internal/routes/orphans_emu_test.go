package routes

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// TestOrphanRoutes: a route to a cluster instance whose Node is gone (the
// instance lives on) is listed without a Node, so the route controller
// deletes it; a route to an instance outside the cluster is not, and its
// instance is looked up once per strangerTTL, not once per sync; while a
// Node names its instance only by DNS name, nothing is called an orphan.
func TestOrphanRoutes(t *testing.T) {
	e := newEmu(t, emuOptions{fixture: func(f *awsemu.Fixture) {
		f.RouteTables[0].Routes = append(f.RouteTables[0].Routes, awsemu.Route{DestinationCIDR: "10.244.51.0/24", InstanceID: emuForeign})
	}})
	a := e.node(emuA)
	e.list()
	e.mustCreate(a, "10.244.1.0/24")
	e.nodes.remove(a)

	e.nodes.add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-3-30.ec2.internal"}}, "")
	wantSlice(t, "listed with a Node known by DNS name only", listed(e.list()), nil)
	e.nodes.remove("ip-10-0-3-30.ec2.internal")

	before := e.srv.Calls("ec2", "DescribeInstances")
	rs := e.list()
	wantSlice(t, "listed", listed(rs), []string{"10.244.1.0/24->"})
	if n := e.srv.Calls("ec2", "DescribeInstances") - before; n > 1 {
		t.Errorf("DescribeInstances calls of the listing = %d, want at most 1 (the view's cache may answer)", n)
	}
	if err := e.m.Delete(t.Context(), rs[0]); err != nil {
		t.Fatal(err)
	}
	wantEq(t, "DeleteRoute calls", e.srv.Calls("ec2", "DeleteRoute"), 1)

	// The foreign instance is remembered: later syncs do not ask.
	e.clock.Step(time.Minute)
	before = e.srv.Calls("ec2", "DescribeInstances")
	wantSlice(t, "listed", listed(e.list()), nil)
	wantEq(t, "DescribeInstances calls for a remembered stranger", e.srv.Calls("ec2", "DescribeInstances")-before, 0)
	e.clock.Step(strangerTTL)
	e.list()
	// The view's snapshot of cluster instances, then the stranger by ID.
	wantEq(t, "DescribeInstances calls after strangerTTL", e.srv.Calls("ec2", "DescribeInstances")-before, 2)
	wantSlice(t, "table", e.routes(), []string{"0.0.0.0/0->igw-0demo000000000001 active", "10.0.0.0/16->local active",
		"10.244.51.0/24->" + emuForeign + " active"})
}
