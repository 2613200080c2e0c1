//go:build linux

package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
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

// prepareRoutes adds the cluster-tagged route table (once per group),
// raises the emulator's route limit past the Nodes, and gives the base
// instances' Nodes pod CIDRs.
func prepareRoutes(b *testing.B) {
	ensureJoined(b)
	if _, ok := env.aws.RouteTable(routeTableID); !ok {
		if err := env.aws.AddRouteTable(awsemu.RouteTable{ID: routeTableID, VPCID: vpcID,
			Tags: map[string]string{"kubernetes.io/cluster/" + clusterID: "owned"}}); err != nil {
			b.Fatal(err)
		}
	}
	env.aws.SetRouteLimit(len(env.base) + 10)
	names := nodeNames(env.base)
	if err := parallel(len(names), func(i int) error {
		patch := fmt.Sprintf(`{"spec":{"podCIDR":%q,"podCIDRs":[%q]}}`, podCIDR(i), podCIDR(i))
		_, err := env.kube.CoreV1().Nodes().Patch(context.Background(), names[i], types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	}); err != nil {
		b.Fatal(err)
	}
}

// runRoutes starts a CCM that runs only the route controller and counts
// the AWS calls of the initial sync (until every Node's route exists) and
// of steady syncs.
func runRoutes(b *testing.B, r *result) {
	n := len(env.base)
	before, start := countCalls(), time.Now()
	c := startCCM(b, r, ccmArgs{args: []string{"--controllers=route", "--configure-cloud-routes=true", "--cluster-cidr=" + routeClusterCIDR,
		"--route-reconciliation-period=" + routeSyncPeriod.String()}})
	r.note(b, "--controllers=route (only the route controller), --cluster-cidr=%s, --route-reconciliation-period=%s (default 10s) to keep the run short; "+
		"the emulator's route limit is raised to %d: a table of more than %d routes (AWS's maximum per table; the default quota is 50) exists only in the emulator",
		routeClusterCIDR, routeSyncPeriod, n+10, awsRouteMax)
	names := nodeNames(env.base)
	waitUntil(b, 5*time.Minute, fmt.Sprintf("%d routes", n), func() bool { return instanceRoutes() == n })
	took := time.Since(start) // from before the CCM started
	calls, breakdown := before.since()
	r.note(b, "the calls of the initial route sync (from CCM start until every Node's route existed): %s", breakdown)
	r.record(b, "initial_route_sync_ec2_calls", fmt.Sprintf("EC2 calls, initial route sync (%d routes created)", n), "%.0f", float64(calls))
	r.record(b, "routes_seconds", fmt.Sprintf("s from CCM start until %d routes exist", n), "%.1f", took.Seconds())
	// The route controller then marks each Node's NetworkUnavailable
	// condition False (RouteCreated) through its client's rate limit; the
	// sync after a Node's route was created does it.
	waitUntil(b, 2*joinTimeout(n), fmt.Sprintf("%d Nodes with NetworkUnavailable=False", n), func() bool { return env.nodes.routedCount(names) == n })
	r.record(b, "routes_ready_seconds", fmt.Sprintf("s from CCM start until all %d Nodes have NetworkUnavailable=False", n), "%.1f", time.Since(start).Seconds())

	// Steady: a settled table, counted over whole syncs (each starts with
	// one DescribeRouteTables), from the start of one to the start of the
	// routeSteadySyncs-th after it.
	syncs := func() int { return countCalls()["ec2:DescribeRouteTables"] }
	s0 := syncs()
	waitUntil(b, 2*time.Minute, "a route sync", func() bool { return syncs() > s0 })
	base := countCalls()
	s1 := base["ec2:DescribeRouteTables"]
	waitUntil(b, routeSteadySyncs*routeSyncPeriod+2*time.Minute, fmt.Sprintf("%d route syncs", routeSteadySyncs), func() bool { return syncs() >= s1+routeSteadySyncs })
	calls, breakdown = base.since()
	r.note(b, "the calls of %d steady route syncs: %s", routeSteadySyncs, breakdown)
	r.record(b, "ec2_calls_per_route_sync", "EC2 calls per steady route sync", "%.2f", float64(calls)/routeSteadySyncs)
	finish(b, r, c)
}

// resetRoutes undoes what the first binary's route controller did in AWS:
// it deletes the Nodes' routes and turns the instances' source/destination
// check back on, through the EC2 API (outside every counted window).
func resetRoutes(b *testing.B) {
	b.Helper()
	ctx := context.Background()
	client := emulatorEC2()
	rt, _ := env.aws.RouteTable(routeTableID)
	var dests []string
	for _, rte := range rt.Routes {
		if rte.InstanceID != "" || strings.HasPrefix(rte.NetworkInterfaceID, "eni-") {
			dests = append(dests, rte.DestinationCIDR)
		}
	}
	if err := parallel(len(dests), func(i int) error {
		_, err := client.DeleteRoute(ctx, &ec2.DeleteRouteInput{RouteTableId: aws.String(routeTableID), DestinationCidrBlock: aws.String(dests[i])})
		return err
	}); err != nil {
		b.Fatalf("delete routes: %v", err)
	}
	if err := parallel(len(env.base), func(i int) error {
		_, err := client.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(env.base[i].ID),
			SourceDestCheck: &ec2types.AttributeBooleanValue{Value: aws.Bool(true)}})
		return err
	}); err != nil {
		b.Fatalf("restore source/destination checks: %v", err)
	}
	if left := instanceRoutes(); left != 0 {
		b.Fatalf("%d routes left after the reset", left)
	}
	// The Nodes' NetworkUnavailable condition goes too, as before the
	// first binary ran.
	names := nodeNames(env.base)
	patch := []byte(`{"status":{"conditions":[{"type":"NetworkUnavailable","$patch":"delete"}]}}`)
	if err := parallel(len(names), func(i int) error {
		_, err := env.kube.CoreV1().Nodes().Patch(ctx, names[i], types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		return err
	}); err != nil {
		b.Fatalf("remove NetworkUnavailable: %v", err)
	}
	waitUntil(b, time.Minute, "no Node routed", func() bool { return env.nodes.routedCount(names) == 0 })
}

// emulatorEC2 is an EC2 client of the emulator, for the bench itself.
func emulatorEC2() *ec2.Client {
	return ec2.New(ec2.Options{
		Region:       region,
		BaseEndpoint: aws.String(env.aws.URL),
		Credentials:  credentials.NewStaticCredentialsProvider(awsemu.DefaultAccessKeyID, "awsemu-secret", ""),
		HTTPClient:   awsemu.HTTPClient(),
	})
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
