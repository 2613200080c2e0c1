package topology

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/smithy-go"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

const subnet = "subnet-0topo00000000001"

// env is an emulator with instances of the given types and counts, a
// client of it that does not retry (so calls count requests), and a
// Reader with the default required pattern on a fake clock.
type env struct {
	srv    *awsemu.Emulator
	client *ec2.Client
	clock  *clocktesting.FakeClock
	r      *Reader
	// ids by instance type, in creation order.
	ids map[string][]string
}

func newEnv(t *testing.T, pattern string, counts map[string]int) *env {
	t.Helper()
	f := &awsemu.Fixture{
		VPCs:    []awsemu.VPC{{ID: "vpc-0topo000000000001", CIDR: "10.0.0.0/16"}},
		Subnets: []awsemu.Subnet{{ID: subnet, VPCID: "vpc-0topo000000000001", AvailabilityZone: "us-east-1a", CIDR: "10.0.0.0/16"}},
	}
	e := &env{ids: map[string][]string{}, clock: clocktesting.NewFakeClock(time.Now())}
	n := 0
	for _, typ := range slices.Sorted(func(yield func(string) bool) {
		for k := range counts {
			if !yield(k) {
				return
			}
		}
	}) {
		for range counts[typ] {
			n++
			id := fmt.Sprintf("i-%017x", 0x1000+n)
			f.Instances = append(f.Instances, awsemu.Instance{ID: id, Type: typ, SubnetID: subnet,
				PrivateIP: fmt.Sprintf("10.0.%d.%d", n/250, n%250+1)})
			e.ids[typ] = append(e.ids[typ], id)
		}
	}
	e.srv = awsemu.StartT(t, f)
	cfg := aws.Config{Region: e.srv.Region(), Retryer: func() aws.Retryer { return aws.NopRetryer{} },
		Credentials: credentials.NewStaticCredentialsProvider(awsemu.DefaultAccessKeyID, "awsemu-secret", "")}
	e.client = ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint, o.HTTPClient = aws.String(e.srv.URL), awsemu.HTTPClient() })
	var re *regexp.Regexp
	if pattern != "" {
		re = regexp.MustCompile(pattern)
	}
	// A wide window: every goroutine of a test joins the first batch even
	// under -race on a busy machine.
	e.r = New(NewEC2(e.client), Options{Required: re, Clock: e.clock, BatchWindow: 300 * time.Millisecond})
	return e
}

func (e *env) calls() int { return e.srv.Calls("ec2", "DescribeInstanceTopology") }

type result struct {
	nodes []string
	err   error
}

// lookupAll asks for every instance of types at once, as concurrent node
// syncs do.
func (e *env) lookupAll(types ...string) map[string]result {
	var mu sync.Mutex
	out := map[string]result{}
	var wg sync.WaitGroup
	for _, typ := range types {
		for _, id := range e.ids[typ] {
			wg.Go(func() {
				nodes, err := e.r.NetworkNodes(context.Background(), id, typ)
				mu.Lock()
				out[id] = result{nodes, err}
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	return out
}

// expectedCalls is what one batch over ids costs: per chunk of 100 sorted
// IDs, one page per 20 instances EC2 lists (at least one).
func expectedCalls(ids []string, listed func(string) bool) int {
	ids = slices.Sorted(slices.Values(ids))
	calls := 0
	for chunk := range slices.Chunk(ids, MaxIDsPerCall) {
		n := 0
		for _, id := range chunk {
			if listed(id) {
				n++
			}
		}
		calls += max(1, (n+19)/20)
	}
	return calls
}

// TestJoiningNodesShareCalls: 250 p5 and 60 m5 Nodes join at once: one
// batch, the p5s and one m5 in ceil(251/100) = 3 chunks of instance IDs,
// each paged by 20 of the instances EC2 lists, instead of 310 calls. Every p5 gets its three
// network nodes as EC2 reports them; the m5s get none and no error.
func TestJoiningNodesShareCalls(t *testing.T) {
	e := newEnv(t, cloudconfig.DefaultTopologyInstanceTypePattern, map[string]int{"p5.48xlarge": 250, "m5.large": 60})
	got := e.lookupAll("p5.48xlarge", "m5.large")

	// Every p5 (required) and one m5 (the type's probe) are asked about:
	// 251 IDs, 3 chunks, each paged by 20 of the instances EC2 lists.
	all := append(slices.Clone(e.ids["p5.48xlarge"]), e.ids["m5.large"]...)
	asked := append(slices.Clone(e.ids["p5.48xlarge"]), slices.Min(e.ids["m5.large"]))
	want := expectedCalls(asked, func(id string) bool { return slices.Contains(e.ids["p5.48xlarge"], id) })
	if calls := e.calls(); calls != want {
		t.Errorf("DescribeInstanceTopology calls for %d joining Nodes = %d, want %d (3 chunks of at most 100 IDs, pages of 20)", len(all), calls, want)
	}
	t.Logf("%d Nodes: %d calls", len(all), e.calls())

	truth := map[string][]string{}
	p := ec2.NewDescribeInstanceTopologyPaginator(e.client, &ec2.DescribeInstanceTopologyInput{MaxResults: aws.Int32(100)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Instances {
			truth[aws.ToString(it.InstanceId)] = it.NetworkNodes
		}
	}
	for _, id := range e.ids["p5.48xlarge"] {
		if r := got[id]; r.err != nil || len(r.nodes) != 3 || !slices.Equal(r.nodes, truth[id]) {
			t.Fatalf("%s: %v, %v; want %v", id, r.nodes, r.err, truth[id])
		}
	}
	for _, id := range e.ids["m5.large"] {
		if r := got[id]; r.err != nil || r.nodes != nil {
			t.Fatalf("%s (m5.large): %v, %v; want no nodes and no error", id, r.nodes, r.err)
		}
	}
}

// TestUnsupportedTypeIsNotAskedAgainFor24h: once EC2 lists nothing for an
// m5.large, other m5.large Nodes cost no call until 24 h have passed.
func TestUnsupportedTypeIsNotAskedAgainFor24h(t *testing.T) {
	e := newEnv(t, cloudconfig.DefaultTopologyInstanceTypePattern, map[string]int{"m5.large": 3})
	ctx := context.Background()
	ids := e.ids["m5.large"]
	if nodes, err := e.r.NetworkNodes(ctx, ids[0], "m5.large"); err != nil || nodes != nil {
		t.Fatalf("first m5: %v, %v", nodes, err)
	}
	if c := e.calls(); c != 1 {
		t.Fatalf("calls = %d, want 1", c)
	}
	e.clock.Step(UnsupportedFor - time.Minute)
	for _, id := range ids[1:] {
		if nodes, err := e.r.NetworkNodes(ctx, id, "m5.large"); err != nil || nodes != nil {
			t.Fatalf("%s: %v, %v", id, nodes, err)
		}
	}
	if c := e.calls(); c != 1 {
		t.Errorf("calls within 24h = %d, want still 1 (type remembered as unsupported)", c)
	}
	e.clock.Step(time.Minute)
	if _, err := e.r.NetworkNodes(ctx, ids[1], "m5.large"); err != nil {
		t.Fatal(err)
	}
	if c := e.calls(); c != 2 {
		t.Errorf("calls after 24h = %d, want 2 (asked again)", c)
	}
}

// TestRequiredTypeWithoutAnswerIsAnError: a type matching the pattern with
// no topology (m5.large by a custom pattern; a stopped p5) is an error,
// and is asked again on the next try: the Node stays uninitialized until
// EC2 answers.
func TestRequiredTypeWithoutAnswerIsAnError(t *testing.T) {
	e := newEnv(t, `^(p5|m5)\.`, map[string]int{"m5.large": 1, "p5.48xlarge": 1})
	ctx := context.Background()
	m5, p5 := e.ids["m5.large"][0], e.ids["p5.48xlarge"][0]
	for range 2 {
		_, err := e.r.NetworkNodes(ctx, m5, "m5.large")
		var req *RequiredError
		if !errors.As(err, &req) || !errors.Is(err, ErrNoTopology) || req.InstanceID != m5 {
			t.Fatalf("m5 required by the pattern: err = %v, want a RequiredError with ErrNoTopology", err)
		}
	}
	if c := e.calls(); c != 2 {
		t.Errorf("calls = %d, want 2: a required type is never remembered as unsupported", c)
	}
	// A p5 that is not running is listed without network nodes.
	if err := e.srv.SetInstanceState(p5, "stopped"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.r.NetworkNodes(ctx, p5, "p5.48xlarge"); !errors.Is(err, ErrNoTopology) {
		t.Fatalf("stopped p5: err = %v, want ErrNoTopology", err)
	}
	if err := e.srv.SetInstanceState(p5, "running"); err != nil {
		t.Fatal(err)
	}
	if nodes, err := e.r.NetworkNodes(ctx, p5, "p5.48xlarge"); err != nil || len(nodes) != 3 {
		t.Fatalf("running p5: %v, %v; want 3 network nodes", nodes, err)
	}
}

// TestFailedCallsBlockOnlyRequiredTypes: throttling and a server error
// fail a p5 (required) and leave an m5 without labels but initialized, and
// the m5's type is not remembered as unsupported (a denied call is
// TestDeniedCallBlocksNoNode's). A
// region without the API stops all calls for 24 h, required types
// included (they could never be answered).
func TestFailedCallsBlockOnlyRequiredTypes(t *testing.T) {
	for _, tc := range []struct {
		code   string
		status int
	}{
		{"RequestLimitExceeded", http.StatusServiceUnavailable},
		{"InternalError", http.StatusInternalServerError},
	} {
		t.Run(tc.code, func(t *testing.T) {
			e := newEnv(t, cloudconfig.DefaultTopologyInstanceTypePattern, map[string]int{"m5.large": 1, "p5.48xlarge": 1})
			id := e.srv.InjectFault(awsemu.Fault{Service: "ec2", Action: "DescribeInstanceTopology", Code: tc.code, HTTPStatus: tc.status})
			got := e.lookupAll("p5.48xlarge", "m5.large")
			var ae smithy.APIError
			if err := got[e.ids["p5.48xlarge"][0]].err; !errors.As(err, &ae) || ae.ErrorCode() != tc.code {
				t.Errorf("p5: err = %v, want the %s error", err, tc.code)
			}
			if r := got[e.ids["m5.large"][0]]; r.err != nil || r.nodes != nil {
				t.Errorf("m5: %v, %v; want no labels and no error", r.nodes, r.err)
			}
			e.srv.ClearFault(id)
			before := e.calls()
			if _, err := e.r.NetworkNodes(context.Background(), e.ids["m5.large"][0], "m5.large"); err != nil {
				t.Fatal(err)
			}
			if e.calls() != before+1 {
				t.Error("m5.large was remembered as unsupported after a failed call")
			}
		})
	}
	t.Run("UnsupportedOperation", func(t *testing.T) {
		e := newEnv(t, cloudconfig.DefaultTopologyInstanceTypePattern, map[string]int{"m5.large": 1, "p5.48xlarge": 1})
		e.srv.InjectFault(awsemu.Fault{Service: "ec2", Action: "DescribeInstanceTopology", Code: "UnsupportedOperation"})
		got := e.lookupAll("p5.48xlarge", "m5.large")
		for id, r := range got {
			if r.err != nil || r.nodes != nil {
				t.Errorf("%s: %v, %v; want no labels and no error", id, r.nodes, r.err)
			}
		}
		before := e.calls()
		e.lookupAll("p5.48xlarge", "m5.large")
		if e.calls() != before {
			t.Errorf("calls after UnsupportedOperation: %d more, want none for 24h", e.calls()-before)
		}
	})
}

// TestCancelledCallerGetsItsContextError: a caller whose context ends
// gets that error whatever its type (a non-required Node is not
// initialized without labels because its worker gave up), and its type is
// not remembered as unsupported.
func TestCancelledCallerGetsItsContextError(t *testing.T) {
	e := newEnv(t, cloudconfig.DefaultTopologyInstanceTypePattern, map[string]int{"m5.large": 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	id := e.ids["m5.large"][0]
	if _, err := e.r.NetworkNodes(ctx, id, "m5.large"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	before := e.calls()
	if _, err := e.r.NetworkNodes(context.Background(), id, "m5.large"); err != nil {
		t.Fatal(err)
	}
	if e.calls() == before {
		t.Error("m5.large was remembered as unsupported after a cancelled lookup")
	}
}

// TestUnlistedTypeCostsOneProbe: 1,000 m5.large Nodes joining at once cost
// one call: one instance answers for its type. A type that has topology
// but is not required (p5 under a pattern for trn only) is probed with one
// instance, then the others are asked about together, and all get labels.
func TestUnlistedTypeCostsOneProbe(t *testing.T) {
	e := newEnv(t, `^trn`, map[string]int{"m5.large": 1000, "p5.48xlarge": 30})
	got := e.lookupAll("m5.large")
	if c := e.calls(); c != 1 {
		t.Errorf("calls for 1,000 joining m5.large Nodes = %d, want 1", c)
	}
	for id, r := range got {
		if r.err != nil || r.nodes != nil {
			t.Fatalf("%s: %v, %v", id, r.nodes, r.err)
		}
	}
	got = e.lookupAll("p5.48xlarge")
	// The probe (1 call), then 29 IDs in one chunk: pages of 20 (2 calls).
	if c := e.calls() - 1; c != 3 {
		t.Errorf("calls for 30 p5 Nodes of a type with topology = %d, want 3", c)
	}
	for id, r := range got {
		if r.err != nil || len(r.nodes) != 3 {
			t.Fatalf("%s: %v, %v; want 3 network nodes", id, r.nodes, r.err)
		}
	}
	// Now known to have topology, its instances are asked about at once.
	before := e.calls()
	e.lookupAll("p5.48xlarge")
	if c := e.calls() - before; c != 2 {
		t.Errorf("calls for 30 more p5 lookups = %d, want 2 (no probe)", c)
	}
}

// TestDeniedCallBlocksNoNode: under a policy that does not grant
// ec2:DescribeInstanceTopology, a p5 (required) gets a *DeniedError naming
// the permission, which lets its Node be initialized without labels, and
// an m5 gets no error; both are counted. The denial is remembered for
// DeniedFor: no call meanwhile, not even for a new type. Once the
// permission is granted and DeniedFor passed, the labels come back.
func TestDeniedCallBlocksNoNode(t *testing.T) {
	e := newEnv(t, cloudconfig.DefaultTopologyInstanceTypePattern, map[string]int{"m5.large": 1, "p5.48xlarge": 2, "trn1.32xlarge": 1})
	reg := metrics.NewKubeRegistry()
	e.r.opts.Metrics = NewMetrics(reg)
	withoutTopology := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ec2:DescribeInstances"],"Resource":"*"}]}`
	if err := e.srv.AddPrincipal(awsemu.Principal{AccessKeyID: awsemu.DefaultAccessKeyID, Policies: []string{withoutTopology}}); err != nil {
		t.Fatal(err)
	}
	p5 := e.ids["p5.48xlarge"]
	got := e.lookupAll("m5.large", "p5.48xlarge")
	for _, id := range p5 {
		var de *DeniedError
		var ae smithy.APIError
		if err := got[id].err; !errors.As(err, &de) || !errors.As(err, &ae) || ae.ErrorCode() != "UnauthorizedOperation" ||
			!strings.Contains(err.Error(), "ec2:DescribeInstanceTopology is denied") || got[id].nodes != nil {
			t.Errorf("p5 %s: %v, %v; want a DeniedError with UnauthorizedOperation and no labels", id, got[id].nodes, err)
		}
	}
	if r := got[e.ids["m5.large"][0]]; r.err != nil || r.nodes != nil {
		t.Errorf("m5: %v, %v; want no labels and no error", r.nodes, r.err)
	}
	calls := e.calls()
	if calls == 0 {
		t.Fatal("no DescribeInstanceTopology call was made")
	}

	// Within DeniedFor: answered from memory, a type not asked before too.
	e.clock.Step(DeniedFor - time.Second)
	trn := e.ids["trn1.32xlarge"][0]
	var de *DeniedError
	if _, err := e.r.NetworkNodes(context.Background(), trn, "trn1.32xlarge"); !errors.As(err, &de) {
		t.Errorf("trn1 within DeniedFor: %v, want a DeniedError", err)
	}
	if e.calls() != calls {
		t.Errorf("%d calls within DeniedFor, want none", e.calls()-calls)
	}
	want := "# HELP aws_ccm_instance_topology_denied_total [ALPHA] Joining Nodes initialized without network-node labels because ec2:DescribeInstanceTopology is denied, by whether their instance type matches SupportedTopologyInstanceTypePattern (required: true also gets a Warning event).\n" +
		"# TYPE aws_ccm_instance_topology_denied_total counter\n" +
		"aws_ccm_instance_topology_denied_total{required=\"false\"} 1\n" +
		"aws_ccm_instance_topology_denied_total{required=\"true\"} 3\n"
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "aws_ccm_instance_topology_denied_total"); err != nil {
		t.Error(err)
	}

	// Granted: after DeniedFor the next Node gets its labels.
	full := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ec2:DescribeInstances","ec2:DescribeInstanceTopology"],"Resource":"*"}]}`
	if err := e.srv.AddPrincipal(awsemu.Principal{AccessKeyID: awsemu.DefaultAccessKeyID, Policies: []string{full}}); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(time.Second)
	if nodes, err := e.r.NetworkNodes(context.Background(), p5[0], "p5.48xlarge"); err != nil || len(nodes) != 3 {
		t.Errorf("p5 once granted: %v, %v; want its 3 network nodes", nodes, err)
	}
}
