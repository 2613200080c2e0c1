//go:build linux

package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// The route scenario: the real route controller (k8s.io/cloud-provider,
// in the CCM binary) routes a pod CIDR to each of the cluster's Nodes in
// a cluster-tagged route table.
const (
	routeTableID = "rtb-0bench0000000000r1"
	// routeClusterCIDR holds a /24 per Node (up to 32,768), outside the VPC.
	routeClusterCIDR = "10.128.0.0/9"
	routeSyncPeriod  = 5 * time.Second
	routeSteadySyncs = 3
	// awsRouteMax is the most routes AWS lets one table hold (the
	// "Routes per route table" quota raised to its maximum; default 50).
	awsRouteMax = 1000
)

func podCIDR(i int) string { return fmt.Sprintf("10.%d.%d.0/24", 128+i/256, i%256) }

// runRoutes gives the joined cluster's Nodes pod CIDRs, starts a CCM that
// runs only the route controller, and counts the AWS calls of the initial
// sync (until every Node's route exists) and of steady syncs.
func runRoutes(b *testing.B) {
	s := beginScenario(b, "6 routes")
	ensureJoined(b)
	if err := env.aws.AddRouteTable(awsemu.RouteTable{ID: routeTableID, VPCID: vpcID,
		Tags: map[string]string{"kubernetes.io/cluster/" + clusterID: "owned"}}); err != nil {
		b.Fatal(err)
	}
	env.aws.SetRouteLimit(clusterNodes + 10)
	b.Cleanup(func() { env.aws.SetRouteLimit(0) })
	names := make([]string, len(env.base))
	for i, in := range env.base {
		names[i] = in.PrivateDNSName
	}
	if err := parallel(len(names), func(i int) error {
		patch := fmt.Sprintf(`{"spec":{"podCIDR":%q,"podCIDRs":[%q]}}`, podCIDR(i), podCIDR(i))
		_, err := env.kube.CoreV1().Nodes().Patch(context.Background(), names[i], types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	}); err != nil {
		b.Fatal(err)
	}

	before, start := countCalls(), time.Now()
	c := startCCM(b, "routes", "--controllers=route", "--configure-cloud-routes=true", "--cluster-cidr="+routeClusterCIDR,
		"--route-reconciliation-period="+routeSyncPeriod.String())
	s.note(b, "routes: --controllers=route (only the route controller), --cluster-cidr=%s, --route-reconciliation-period=%s (default 10s) to keep the run short; "+
		"the emulator's route limit is raised to %d: a table of more than %d routes (AWS's maximum per table; the default quota is 50) exists only in the emulator, so the figures at %d Nodes are emulator-only",
		routeClusterCIDR, routeSyncPeriod, clusterNodes+10, awsRouteMax, clusterNodes)
	waitUntil(b, 5*time.Minute, fmt.Sprintf("%d routes", len(names)), func() bool { return instanceRoutes() == len(names) })
	took := time.Since(start) // from before the CCM started
	n, breakdown := before.since()
	b.Logf("calls from CCM start until all %d routes existed (%s): %s", len(names), took.Round(time.Millisecond), breakdown)
	s.note(b, "routes: the calls of the initial route sync at %d nodes (from CCM start until every Node's route existed): %s", clusterNodes, breakdown)
	s.record(b, figure{name: fmt.Sprintf("EC2 calls, initial route sync (%d routes created)", len(names)), unit: "ec2-calls/initial-route-sync",
		value: float64(n), format: "%.0f", upstream: fmt.Sprintf("%d (derived: 3 per route)", 3*len(names))})
	s.record(b, figure{name: fmt.Sprintf("s until %d routes exist", len(names)), unit: "s/routes-created", value: took.Seconds(), format: "%.1f", upstream: "-"})

	// Steady: a settled table, counted over whole syncs (one
	// DescribeRouteTables each).
	time.Sleep(routeSyncPeriod)
	base := countCalls()
	time.Sleep(routeSteadySyncs * routeSyncPeriod)
	n, breakdown = base.since()
	syncs := countCalls()["ec2:DescribeRouteTables"] - base["ec2:DescribeRouteTables"]
	if syncs == 0 {
		b.Fatalf("no route sync in %s", routeSteadySyncs*routeSyncPeriod)
	}
	b.Logf("calls over %d steady route syncs: %s", syncs, breakdown)
	s.note(b, "routes: the calls of %d steady route syncs at %d nodes: %s", syncs, clusterNodes, breakdown)
	s.record(b, figure{name: "EC2 calls per steady route sync", unit: "ec2-calls/route-sync", value: float64(n) / float64(syncs),
		format: "%.2f", upstream: "2 (DescribeRouteTables + DescribeInstances)", target: "<= 1", meets: le(1)})
	finish(b, c)
}

// instanceRoutes counts the routes of routeTableID that lead to instances.
func instanceRoutes() int {
	rt, _ := env.aws.RouteTable(routeTableID)
	n := 0
	for _, r := range rt.Routes {
		if r.State == awsemu.RouteStateActive && (r.InstanceID != "" || strings.HasPrefix(r.NetworkInterfaceID, "eni-")) {
			n++
		}
	}
	return n
}
