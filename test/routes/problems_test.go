package routes

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/routes"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

const adminKey = "AKIDROUTESTESTADMIN"

var adminOnce sync.Once

// admin is an EC2 client outside the CCM's policy, for what a user does.
func admin(t *testing.T) *ec2.Client {
	t.Helper()
	adminOnce.Do(func() {
		all := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`
		if err := env.aws.AddPrincipal(awsemu.Principal{AccessKeyID: adminKey, Arn: "arn:aws:iam::123456789012:role/test-admin", Policies: []string{all}}); err != nil {
			t.Fatal(err)
		}
	})
	cfg := aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(adminKey, "awsemu-secret", "")}
	return ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint, o.HTTPClient = aws.String(env.aws.URL), awsemu.HTTPClient() })
}

// TestRouteTableProblemWarnsNode: while a second table of the VPC carries
// the cluster tag, a new Node gets no route but one AWSRouteTableProblem
// Warning naming both tables and the fix, not one per sync; once the tag
// is removed the Node gets its route.
func TestRouteTableProblemWarnsNode(t *testing.T) {
	ctx := syncCtx(t)
	const second = "rtb-0rtest000000000002"
	if err := env.aws.AddRouteTable(awsemu.RouteTable{ID: second, VPCID: vpcID, Tags: map[string]string{"kubernetes.io/cluster/" + clusterID: "shared"}}); err != nil {
		t.Fatal(err)
	}
	untag := func() {
		if _, err := admin(t).DeleteTags(context.Background(), &ec2.DeleteTagsInput{Resources: []string{second},
			Tags: []ec2types.Tag{{Key: aws.String("kubernetes.io/cluster/" + clusterID)}}}); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(untag)
	n, id := addNode(t, "10.244.9.0/24")
	var ev corev1.Event
	waitFor(t, ctx, "the Warning event", func() bool {
		evs, err := nodeEvents(ctx, n, routes.ReasonRouteTableProblem)
		if err != nil || len(evs) == 0 {
			return false
		}
		ev = evs[0]
		return true
	})
	if ev.Type != corev1.EventTypeWarning || !strings.Contains(ev.Message, "route tables "+tableID+", "+second) ||
		!strings.Contains(ev.Message, "fix: remove the cluster tag from all but one") || !strings.Contains(ev.Message, "10.244.9.0/24") {
		t.Errorf("event = %s %q, want a Warning naming both tables, the pod CIDR and the fix", ev.Type, ev.Message)
	}
	time.Sleep(3 * syncPeriod)
	evs, err := nodeEvents(ctx, n, routes.ReasonRouteTableProblem)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Count > 1 {
		t.Errorf("after 3 more syncs: %d events, first counted %d times; want one, once", len(evs), evs[0].Count)
	}
	if hasRoute(t, "10.244.9.0/24->"+id+" active") {
		t.Fatal("a route was made while two tables carry the cluster tag")
	}
	untag()
	waitFor(t, ctx, "the route once the second table is untagged", func() bool { return hasRoute(t, "10.244.9.0/24->"+id+" active") })
}

// TestMultiInterfaceNode: a Node whose instance has two network
// interfaces gets its route to the primary interface, whose
// source/destination check is turned off (EC2 refuses the instance call
// there); the other interface keeps its check.
func TestMultiInterfaceNode(t *testing.T) {
	ctx := syncCtx(t)
	n := seq.Add(1)
	instance := fmt.Sprintf("i-0a0b0c0d0e0f%05x", n)
	primary, second := fmt.Sprintf("eni-0rtest%011x", 2*n), fmt.Sprintf("eni-0rtest%011x", 2*n+1)
	clusterTag := map[string]string{"kubernetes.io/cluster/" + clusterID: "owned"}
	if err := env.aws.AddInstance(awsemu.Instance{ID: instance, Type: "m6i.large", SubnetID: subnetID, Tags: clusterTag,
		ENIs: []awsemu.ENI{
			{ID: primary, DeviceIndex: 0, PrivateIPs: []string{fmt.Sprintf("10.0.2.%d", n)}, Tags: clusterTag},
			{ID: second, DeviceIndex: 1, PrivateIPs: []string{fmt.Sprintf("10.0.3.%d", n)}},
		}}); err != nil {
		t.Fatal(err)
	}
	node := fmt.Sprintf("node-%d", n)
	if _, err := env.kube.CoreV1().Nodes().Create(t.Context(), &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: node},
		Spec:       corev1.NodeSpec{ProviderID: "aws:///us-east-1a/" + instance, PodCIDR: "10.244.10.0/24", PodCIDRs: []string{"10.244.10.0/24"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteNode(node) })
	// EC2 names the instance behind an interface target too.
	waitFor(t, ctx, "the route", func() bool { return hasRoute(t, "10.244.10.0/24->"+instance+" active") })
	rt, _ := env.aws.RouteTable(tableID)
	for _, r := range rt.Routes {
		if r.DestinationCIDR == "10.244.10.0/24" && r.NetworkInterfaceID != primary {
			t.Errorf("route names interface %q, want the primary %s", r.NetworkInterfaceID, primary)
		}
	}
	waitFor(t, ctx, node+" NetworkUnavailable=False", func() bool { ok, err := networkAvailable(ctx, node); return err == nil && ok })
	in, _ := env.aws.Instance(instance)
	for _, e := range in.ENIs {
		on := e.SourceDestCheck == nil || *e.SourceDestCheck
		if want := e.ID != primary; on != want {
			t.Errorf("interface %s: source/destination check on = %v, want %v", e.ID, on, want)
		}
	}
}
