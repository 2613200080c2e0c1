package routes

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/component-base/metrics/testutil"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// TestRouteLimit: the create that finds the table full fails with the fix
// and a Warning event on its Node; later creates are refused without
// asking AWS (no storm, also across syncs) until FullTableRetry passed or
// a route was deleted.
func TestRouteLimit(t *testing.T) {
	e := newEmu(t, emuOptions{fixture: func(f *awsemu.Fixture) { f.RouteLimit = 3 }}) // 0.0.0.0/0 takes one
	a, c := e.node(emuA), e.node(emuC)
	e.list()
	e.mustCreate(a, "10.244.1.0/24")
	e.mustCreate(c, "10.244.3.0/24")

	for i, node := range []string{a, c, a, c} {
		err := e.create(node, fmt.Sprintf("10.244.%d.0/24", 20+i))
		var full *TableFullError
		if !errors.As(err, &full) || full.Table != emuTable {
			t.Fatalf("create %d: %v, want a TableFullError of %s", i, err, emuTable)
		}
		for _, want := range []string{"RouteLimitExceeded", "Routes per route table", "at most 1000", "--configure-cloud-routes=false"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("create %d: error %q does not say %q", i, err, want)
			}
		}
	}
	wantEq(t, "CreateRoute calls", e.srv.Calls("ec2", "CreateRoute"), 3)
	evs := e.events()
	wantEq(t, "events", len(evs), 4)
	for _, ev := range evs {
		if !strings.HasPrefix(ev, "Warning "+ReasonRouteLimitExceeded+" ") || !strings.Contains(ev, emuTable) || !strings.Contains(ev, "Routes per route table") {
			t.Errorf("event %q, want a Warning %s naming the table and the quota", ev, ReasonRouteLimitExceeded)
		}
	}
	want := "# HELP aws_ccm_route_node_warnings_total [ALPHA] Warning events the routes posted on Nodes whose route cannot be made, by reason (AWSRouteTableProblem, AWSRouteLimitExceeded).\n" +
		"# TYPE aws_ccm_route_node_warnings_total counter\n" +
		"aws_ccm_route_node_warnings_total{reason=\"AWSRouteLimitExceeded\"} 4\n" +
		"aws_ccm_route_node_warnings_total{reason=\"AWSRouteTableProblem\"} 0\n" // from the start, for increase()
	if err := testutil.GatherAndCompare(e.reg, strings.NewReader(want), "aws_ccm_route_node_warnings_total"); err != nil {
		t.Error(err)
	}

	// The next sync: still refused locally.
	e.list()
	if err := e.create(a, "10.244.30.0/24"); err == nil {
		t.Fatal("create into the full table succeeded")
	}
	wantEq(t, "CreateRoute calls after the next sync", e.srv.Calls("ec2", "CreateRoute"), 3)

	// After FullTableRetry AWS is asked once more.
	e.clock.Step(DefaultFullTableRetry)
	_ = e.create(a, "10.244.31.0/24")
	_ = e.create(a, "10.244.32.0/24")
	wantEq(t, "CreateRoute calls after the retry time", e.srv.Calls("ec2", "CreateRoute"), 4)

	// A deleted route ends the refusal at once.
	if err := e.m.Delete(t.Context(), &cloudprovider.Route{DestinationCIDR: "10.244.3.0/24", TargetNode: typesNode(c)}); err != nil {
		t.Fatal(err)
	}
	e.mustCreate(a, "10.244.33.0/24")
	wantEq(t, "CreateRoute calls after a delete", e.srv.Calls("ec2", "CreateRoute"), 5)
}

// TestRouteLimitEndsWhenSomeoneDeletes: a listing with fewer routes than
// when the table was full (someone else deleted one) ends the refusal.
func TestRouteLimitEndsWhenSomeoneDeletes(t *testing.T) {
	e := newEmu(t, emuOptions{fixture: func(f *awsemu.Fixture) { f.RouteLimit = 1 }})
	a := e.node(emuA)
	e.list()
	if err := e.create(a, "10.244.1.0/24"); err == nil {
		t.Fatal("create into the full table succeeded")
	}
	e.srv.SetRouteLimit(2)
	e.list()
	if err := e.create(a, "10.244.1.0/24"); err == nil {
		t.Fatal("refusal ended without a deleted route")
	}
	wantEq(t, "CreateRoute calls", e.srv.Calls("ec2", "CreateRoute"), 1)
	if _, err := e.admin().DeleteRoute(t.Context(), deleteInput(emuTable, "0.0.0.0/0")); err != nil {
		t.Fatal(err)
	}
	e.list()
	e.mustCreate(a, "10.244.1.0/24")
	wantEq(t, "CreateRoute calls", e.srv.Calls("ec2", "CreateRoute"), 2)
}
