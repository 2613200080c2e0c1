package migration

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// Cloud routes: kube-controller-manager runs with --allocate-node-cidrs
// and --configure-cloud-routes over clusterCIDR, and its route controller
// routes each Node's pod CIDR through the demo VPC's main table, which
// carries the cluster tag.
const (
	clusterCIDR = "10.244.0.0/16"
	routeTable  = "rtb-0demo000000000001"
)

// routeChanges are the calls that change routes or a route target.
var routeChanges = []string{"CreateRoute", "DeleteRoute", "ReplaceRoute", "ModifyInstanceAttribute"}

// singleInterface gives the worker's instance one network interface: the
// in-tree provider routes to an instance ID, which EC2 refuses for an
// instance with several ("There are multiple interfaces attached").
func singleInterface(f *awsemu.Fixture) {
	for i := range f.Instances {
		if f.Instances[i].ID == workID {
			f.Instances[i].ENIs = f.Instances[i].ENIs[:1]
		}
	}
}

// clusterRoutes returns the table's routes into clusterCIDR as
// "destination -> instance/interface state", sorted.
func clusterRoutes(t *testing.T) []string {
	t.Helper()
	rt, ok := env.aws.RouteTable(routeTable)
	if !ok {
		t.Fatalf("route table %s is gone", routeTable)
	}
	cluster := netip.MustParsePrefix(clusterCIDR)
	var out []string
	for _, r := range rt.Routes {
		if p, err := netip.ParsePrefix(r.DestinationCIDR); err != nil || p.Bits() < cluster.Bits() || !cluster.Contains(p.Addr()) {
			continue
		}
		out = append(out, fmt.Sprintf("%s -> %s/%s %s", r.DestinationCIDR, r.InstanceID, r.NetworkInterfaceID, r.State))
	}
	slices.Sort(out)
	return out
}

// waitForInTreeRoutes waits until every Node's pod CIDR is routed to its
// instance (active) with the instance's source/destination check off, as
// the in-tree route controller leaves them, and returns the routes.
func waitForInTreeRoutes(t *testing.T) []string {
	t.Helper()
	nodes := map[string]string{cpNode: cpID, workNode: workID}
	waitFor(t, 2*time.Minute, "the in-tree route controller to route every Node's pod CIDR", func(ctx context.Context) (bool, error) {
		routes := clusterRoutes(t)
		for name, id := range nodes {
			n, err := env.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if n.Spec.PodCIDR == "" {
				return false, fmt.Errorf("node %s has no pod CIDR yet", name)
			}
			if !slices.ContainsFunc(routes, func(r string) bool {
				return strings.HasPrefix(r, n.Spec.PodCIDR+" -> "+id+"/") && strings.HasSuffix(r, " "+awsemu.RouteStateActive)
			}) {
				return false, fmt.Errorf("no active route %s -> %s in %v", n.Spec.PodCIDR, id, routes)
			}
			if in, _ := env.aws.Instance(id); in.SourceDestCheck == nil || *in.SourceDestCheck {
				return false, fmt.Errorf("instance %s still checks source/destination", id)
			}
		}
		return true, nil
	})
	routes := clusterRoutes(t)
	if len(routes) != len(nodes) {
		t.Fatalf("routes into %s: %v, want one per Node", clusterCIDR, routes)
	}
	return routes
}

// routeCallsSince counts the route-changing calls in [from, now) by the
// SDK match selects.
func routeCallsSince(from time.Time, match func(awsemu.Call) bool) map[string]int {
	out := map[string]int{}
	for _, c := range env.aws.CallLog() {
		if !c.Time.Before(from) && c.Service == "ec2" && slices.Contains(routeChanges, c.Action) && match(c) {
			out[c.Action]++
		}
	}
	return out
}

// deleteRouteAsOperator deletes a route through the EC2 API, as an operator
// clearing the table by hand would.
func deleteRouteAsOperator(t *testing.T, cidr string) {
	t.Helper()
	c := ec2.New(ec2.Options{Region: region, BaseEndpoint: aws.String(env.awsURL), HTTPClient: awsemu.HTTPClient(),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDOPERATOR", "secret", "")})
	if _, err := c.DeleteRoute(context.Background(), &ec2.DeleteRouteInput{RouteTableId: aws.String(routeTable), DestinationCidrBlock: aws.String(cidr)}); err != nil {
		t.Fatalf("delete route %s: %v", cidr, err)
	}
}

// podCIDR returns a Node's pod CIDR.
func podCIDR(t *testing.T, name string) string {
	t.Helper()
	n, err := env.kube.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n.Spec.PodCIDR
}
