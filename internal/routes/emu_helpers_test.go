package routes

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/component-base/metrics"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/instances"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// Shared helpers of the emulator tests: the real Manager with a real
// aws-sdk-go-v2 EC2 client and the real instance view, against an
// in-process test/awsemu seeded with its demo cluster and enforcing the
// least-privilege policy of iam/. Every test starts its own emulator.

// The demo fixture (test/awsemu/testdata/demo.yaml).
const (
	emuCluster    = "demo"
	emuVPC        = "vpc-0demo000000000001"
	emuTable      = "rtb-0demo000000000001"
	emuA          = "i-0a1b2c3d4e5f60001" // one ENI
	emuB          = "i-0a1b2c3d4e5f60002" // two ENIs
	emuC          = "i-0a1b2c3d4e5f60003" // dual stack
	emuTerminated = "i-0a1b2c3d4e5f60005"
	emuENIA       = "eni-0demo00000000001a"
	emuENIB       = "eni-0demo00000000002a" // B's primary
	// emuForeign is an instance of the VPC outside the cluster.
	emuForeign = "i-0f0f0f0f0f0f0f0f1"
	// emuAdminKey signs requests outside the CCM's policy.
	emuAdminKey = "AKIDEMUTESTSETUP"
)

// emuCIDRs are the cluster CIDRs of the tests.
var emuCIDRs = []netip.Prefix{netip.MustParsePrefix("10.244.0.0/16"), netip.MustParsePrefix("fd00:10:244::/56")}

// emuOptions change the setup of one test.
type emuOptions struct {
	fixture func(*awsemu.Fixture)
	env     func(*Env)
}

// emu is one emulator and one Manager on it.
type emu struct {
	t     *testing.T
	srv   *awsemu.Emulator
	m     *Manager
	nodes *fakeNodes
	rec   *record.FakeRecorder
	// clock is the Manager's and the instance view's clock.
	clock *clocktesting.FakeClock
	// reg holds the Manager's metrics.
	reg metrics.KubeRegistry
}

func newEmu(t *testing.T, o emuOptions) *emu {
	t.Helper()
	f := awsemu.DemoFixture()
	f.Instances = append(f.Instances, awsemu.Instance{ID: emuForeign, Type: "t3.micro", SubnetID: "subnet-0demo00000000000a",
		PrivateIP: "10.0.1.99", LaunchTime: time.Date(2026, 1, 15, 9, 0, 0, 0, time.UTC), Tags: map[string]string{"Name": "not-a-node"}})
	if o.fixture != nil {
		o.fixture(f)
	}
	srv := awsemu.StartT(t, f)
	enforceLeastPrivilege(t, srv)
	cfg := aws.Config{
		Region:      srv.Region(),
		Credentials: credentials.NewStaticCredentialsProvider(awsemu.DefaultAccessKeyID, "awsemu-secret", ""),
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) { o.MaxBackoff = 2 * time.Millisecond; o.RateLimiter = ratelimit.None })
		},
	}
	client := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint, o.HTTPClient = aws.String(srv.URL), awsemu.HTTPClient() })
	clk := clocktesting.NewFakeClock(time.Now())
	view := instances.New(instances.NewEC2(client), instances.Options{
		ClusterFilters: []ec2types.Filter{clustertag.Filter(emuCluster, false)},
		VPCID:          emuVPC, BatchWindow: time.Millisecond, Clock: clk, TagKeys: ViewTagKeys(emuCluster),
	})
	env := Env{VPCID: emuVPC, ClusterID: emuCluster}
	if o.env != nil {
		o.env(&env)
	}
	e := &emu{t: t, srv: srv, nodes: newFakeNodes(), rec: record.NewFakeRecorder(1000), clock: clk, reg: metrics.NewKubeRegistry()}
	e.m = New(Config{EC2: NewEC2(client), Env: env, ClusterCIDRs: emuCIDRs, Instances: view, Nodes: e.nodes, Events: e.rec, Clock: clk,
		Metrics: NewMetrics(e.reg)})
	return e
}

// enforceLeastPrivilege makes srv evaluate the Manager's requests against
// iam/ccm-policy-least-privilege.json for cluster demo, as IAM would.
func enforceLeastPrivilege(t *testing.T, srv *awsemu.Emulator) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "iam", "ccm-policy-least-privilege.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc awsapi.PolicyDocument
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(raw), awsapi.ClusterIDPlaceholder, emuCluster)), &doc); err != nil {
		t.Fatal(err)
	}
	policy, err := doc.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.AddPrincipal(awsemu.Principal{AccessKeyID: awsemu.DefaultAccessKeyID, Policies: []string{string(policy)}}); err != nil {
		t.Fatal(err)
	}
	all := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`
	if err := srv.AddPrincipal(awsemu.Principal{AccessKeyID: emuAdminKey, Arn: "arn:aws:iam::123456789012:role/test-setup", Policies: []string{all}}); err != nil {
		t.Fatal(err)
	}
}

// admin is an EC2 client outside the CCM's policy, for what a user does.
func (e *emu) admin() *ec2.Client {
	cfg := aws.Config{Region: e.srv.Region(), Credentials: credentials.NewStaticCredentialsProvider(emuAdminKey, "awsemu-secret", "")}
	return ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint, o.HTTPClient = aws.String(e.srv.URL), awsemu.HTTPClient() })
}

// node adds a Node for instance id with the pod CIDRs; name is
// "node-" + the instance's suffix.
func (e *emu) node(id string) string {
	e.t.Helper()
	in, ok := e.srv.Instance(id)
	if !ok {
		e.t.Fatalf("no instance %s", id)
	}
	name := "node-" + strings.TrimPrefix(id, "i-")
	e.nodes.add(&corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Spec:       corev1.NodeSpec{ProviderID: "aws:///" + in.AvailabilityZone + "/" + id},
	}, id)
	return name
}

func (e *emu) list() []*cloudprovider.Route {
	e.t.Helper()
	rs, err := e.m.List(e.t.Context(), "kubernetes")
	if err != nil {
		e.t.Fatalf("List: %v", err)
	}
	return rs
}

// listed renders routes as "dest->node" or "dest blackhole", sorted.
func listed(rs []*cloudprovider.Route) []string {
	var out []string
	for _, r := range rs {
		if r.Blackhole {
			out = append(out, r.DestinationCIDR+" blackhole")
		} else {
			out = append(out, r.DestinationCIDR+"->"+string(r.TargetNode))
		}
	}
	slices.Sort(out)
	return out
}

func (e *emu) create(node, cidr string) error {
	return e.m.Create(e.t.Context(), &cloudprovider.Route{TargetNode: types.NodeName(node), DestinationCIDR: cidr})
}

func (e *emu) mustCreate(node, cidr string) {
	e.t.Helper()
	if err := e.create(node, cidr); err != nil {
		e.t.Fatalf("Create(%s, %s): %v", node, cidr, err)
	}
}

// routes renders emuTable's routes as EC2 shows them: "dest->target state".
func (e *emu) routes() []string {
	e.t.Helper()
	rt, ok := e.srv.RouteTable(emuTable)
	if !ok {
		e.t.Fatalf("no route table %s", emuTable)
	}
	var out []string
	for _, r := range rt.Routes {
		dest := r.DestinationCIDR + r.DestinationIPv6CIDR
		tgt := r.GatewayID + r.InstanceID
		if r.GatewayID == "" && r.InstanceID == "" {
			tgt = r.NetworkInterfaceID
		}
		out = append(out, fmt.Sprintf("%s->%s %s", dest, tgt, r.State))
	}
	slices.Sort(out)
	return out
}

// calls returns the EC2 calls by action since the emulator started.
func (e *emu) calls(actions ...string) map[string]int {
	out := map[string]int{}
	for _, a := range actions {
		out[a] = e.srv.Calls("ec2", a)
	}
	return out
}

// events drains the recorded events.
func (e *emu) events() []string {
	var out []string
	for {
		select {
		case ev := <-e.rec.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

// fakeNodes is the Node lister's answer.
type fakeNodes struct {
	mu    sync.Mutex
	nodes map[string]Node
}

func newFakeNodes() *fakeNodes { return &fakeNodes{nodes: map[string]Node{}} }

func (f *fakeNodes) add(n *corev1.Node, instanceID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nodes[n.Name] = Node{Node: n, InstanceID: instanceID}
}

func (f *fakeNodes) remove(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.nodes, name)
}

func (f *fakeNodes) List() ([]Node, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Node
	for _, n := range f.nodes {
		out = append(out, n)
	}
	return out, nil
}

func (f *fakeNodes) Get(name string) (Node, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.nodes[name]
	if !ok {
		return Node{}, apierrors.NewNotFound(corev1.Resource("nodes"), name)
	}
	return n, nil
}

func wantEq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func wantSlice(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s =\n  %q\nwant\n  %q", what, got, want)
	}
}
