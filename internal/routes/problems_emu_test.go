package routes

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics/testutil"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// problemMetrics renders aws_ccm_route_table_problem as the registry
// exposes it, for the problem that holds (none: all 0).
func problemMetrics(current string) string {
	var b strings.Builder
	b.WriteString("# HELP aws_ccm_route_table_problem [ALPHA] 1 while the route controller has no route table to manage, by problem (no_tagged_table, several_tagged_tables, configured_table_missing, configured_table_elsewhere); 0 otherwise. No route is created or deleted meanwhile.\n")
	b.WriteString("# TYPE aws_ccm_route_table_problem gauge\n")
	for _, p := range []string{"configured_table_elsewhere", "configured_table_missing", "no_tagged_table", "several_tagged_tables"} {
		v := "0"
		if p == current {
			v = "1"
		}
		b.WriteString(`aws_ccm_route_table_problem{problem="` + p + `"} ` + v + "\n")
	}
	return b.String()
}

// TestTableProblemWarnsNodes: while there is no one route table to manage,
// each Node with a pod CIDR gets one Warning event with the fix, not one
// per sync; a Node without a pod CIDR gets none; a changed problem is told
// again, and so is a problem that comes back after the table was found.
// aws_ccm_route_table_problem shows the problem that holds.
func TestTableProblemWarnsNodes(t *testing.T) {
	e := newEmu(t, emuOptions{fixture: func(f *awsemu.Fixture) { f.RouteTables[0].Tags = map[string]string{"Name": "demo"} }})
	a := e.node(emuA)
	e.nodes.add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: a, UID: types.UID("uid-" + a)},
		Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/" + emuA, PodCIDR: "10.244.1.0/24", PodCIDRs: []string{"10.244.1.0/24", "fd00:10:244::/64"}}}, emuA)
	e.node(emuC) // no pod CIDR: the route controller does not route it, and it is not told
	sync := func() {
		t.Helper()
		if _, err := e.m.List(t.Context(), "kubernetes"); err == nil {
			t.Fatal("List succeeded without a tagged table")
		}
	}
	for range 3 {
		sync()
	}
	evs := e.events()
	if len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning "+ReasonRouteTableProblem+" No route can be made for this Node's pod CIDRs 10.244.1.0/24, fd00:10:244::/64: no route table in VPC "+emuVPC) ||
		!strings.Contains(evs[0], "fix: tag the route table") {
		t.Fatalf("events after 3 syncs = %q, want one %s Warning with the fix", evs, ReasonRouteTableProblem)
	}
	if err := testutil.GatherAndCompare(e.reg, strings.NewReader(problemMetrics("no_tagged_table")), "aws_ccm_route_table_problem"); err != nil {
		t.Error(err)
	}

	// Tagging two tables changes the problem: told again, once.
	admin := e.admin()
	tag := func(id string) {
		t.Helper()
		if _, err := admin.CreateTags(t.Context(), &ec2.CreateTagsInput{Resources: []string{id},
			Tags: []ec2types.Tag{{Key: aws.String("kubernetes.io/cluster/demo"), Value: aws.String("owned")}}}); err != nil {
			t.Fatal(err)
		}
	}
	tag(emuTable)
	if err := e.srv.AddRouteTable(awsemu.RouteTable{ID: "rtb-0demo000000000002", VPCID: emuVPC, Tags: map[string]string{"kubernetes.io/cluster/demo": "shared"}}); err != nil {
		t.Fatal(err)
	}
	sync()
	sync()
	evs = e.events()
	if len(evs) != 1 || !strings.Contains(evs[0], "route tables "+emuTable+", rtb-0demo000000000002") {
		t.Fatalf("events after the problem changed = %q, want one naming both tables", evs)
	}
	if err := testutil.GatherAndCompare(e.reg, strings.NewReader(problemMetrics("several_tagged_tables")), "aws_ccm_route_table_problem"); err != nil {
		t.Error(err)
	}

	// Fixed: no error, the gauge drops, no event.
	if _, err := admin.DeleteTags(t.Context(), &ec2.DeleteTagsInput{Resources: []string{"rtb-0demo000000000002"},
		Tags: []ec2types.Tag{{Key: aws.String("kubernetes.io/cluster/demo")}}}); err != nil {
		t.Fatal(err)
	}
	e.list()
	if evs := e.events(); len(evs) != 0 {
		t.Errorf("events once the table is found = %q", evs)
	}
	if err := testutil.GatherAndCompare(e.reg, strings.NewReader(problemMetrics("")), "aws_ccm_route_table_problem"); err != nil {
		t.Error(err)
	}

	// The same problem again later is told again.
	tag("rtb-0demo000000000002")
	sync()
	if evs := e.events(); len(evs) != 1 {
		t.Errorf("events when the problem comes back = %q, want one", evs)
	}
	want := "# HELP aws_ccm_route_node_warnings_total [ALPHA] Warning events the routes posted on Nodes whose route cannot be made, by reason (AWSRouteTableProblem, AWSRouteLimitExceeded).\n" +
		"# TYPE aws_ccm_route_node_warnings_total counter\n" +
		"aws_ccm_route_node_warnings_total{reason=\"AWSRouteLimitExceeded\"} 0\n" + // from the start, for increase()
		"aws_ccm_route_node_warnings_total{reason=\"AWSRouteTableProblem\"} 3\n"
	if err := testutil.GatherAndCompare(e.reg, strings.NewReader(want), "aws_ccm_route_node_warnings_total"); err != nil {
		t.Error(err)
	}
}
