package tagging

import (
	"context"
	"encoding/json"
	"fmt"
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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	k8smetrics "k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/instances"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// Shared helpers of the emulator tests: the real controller with a real
// aws-sdk-go-v2 EC2 client and the real instance view against an
// in-process test/awsemu (demo fixture) that enforces the generated
// least-privilege policy, and client-go's fake clientset for the Nodes.

const (
	emuCluster    = "demo"
	emuSubnet     = "subnet-0demo00000000000a"
	emuA          = "i-0a1b2c3d4e5f60001"
	emuB          = "i-0a1b2c3d4e5f60002"
	emuC          = "i-0a1b2c3d4e5f60003"
	emuTerminated = "i-0a1b2c3d4e5f60005"
	clusterTag    = "kubernetes.io/cluster/demo"
)

// testTags are the --tags of every test.
var testTags = map[string]string{"team": "blue", "env": "prod"}

type emu struct {
	t      *testing.T
	srv    *awsemu.Emulator
	client *fake.Clientset
	c      *Controller
	events *record.FakeRecorder
	// recorded has the same events with the Node each is on.
	recorded *nodeEvents
	ec2      *ec2.Client
	// results are the controller's outcomes per item.
	results *results
	view    *instances.View
	// viewClock is the view's: Step it past MaxAge to make it ask EC2.
	viewClock *clocktesting.FakeClock
	metrics   *Metrics
}

// count is the aws_ccm_tagging_nodes_total counter of action and outcome.
func (e *emu) count(action, outcome string) int {
	e.t.Helper()
	v, err := testutil.GetCounterMetricValue(e.metrics.nodes.WithLabelValues(action, outcome))
	if err != nil {
		e.t.Fatal(err)
	}
	return int(v)
}

type emuOptions struct {
	// fixture changes the demo fixture before the emulator starts.
	fixture func(*awsemu.Fixture)
	// nodes exist before the controller starts.
	nodes []*corev1.Node
	// faults are injected before the controller starts.
	faults []awsemu.Fault
	// policy is the file of iam/ the calls are evaluated against (default
	// ccm-policy-least-privilege.json).
	policy string
	// beforeStart runs before the controller starts.
	beforeStart func(*emu)
	// rate and burst are --tagging-controller-rate-limit and -burst-limit.
	rate  float64
	burst int
}

// newEmu starts the emulator and the controller (until the test ends).
func newEmu(t *testing.T, o emuOptions) *emu {
	t.Helper()
	f := awsemu.DemoFixture()
	if o.fixture != nil {
		o.fixture(f)
	}
	srv := awsemu.StartT(t, f)
	enforcePolicy(t, srv, o.policy)
	for _, f := range o.faults {
		srv.InjectFault(f)
	}
	cfg := aws.Config{
		Region:      srv.Region(),
		Credentials: credentials.NewStaticCredentialsProvider(awsemu.DefaultAccessKeyID, "awsemu-secret", ""),
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) { o.MaxBackoff, o.RateLimiter = 2*time.Millisecond, ratelimit.None })
		},
	}
	ec2c := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint, o.HTTPClient = aws.String(srv.URL), awsemu.HTTPClient() })
	viewClock := clocktesting.NewFakeClock(time.Now())
	view := instances.New(instances.NewEC2(ec2c), instances.Options{
		BatchWindow: time.Millisecond, MaxAge: time.Minute, Clock: viewClock,
		TagKeys: ViewTagKeys(testTags, emuCluster),
	})
	var objs []runtime.Object
	for _, n := range o.nodes {
		objs = append(objs, n)
	}
	// The plain object tracker: NewClientset's field-managed tracker
	// builds a REST mapper on every Patch, which made labelling 1,000
	// Nodes under -race take 10 s of the package's 35. The controller
	// patches with JSON merge patches, which the plain tracker applies
	// the same; nothing here uses server-side apply.
	client := fake.NewSimpleClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	events := record.NewFakeRecorder(1000)
	recorded := &nodeEvents{FakeRecorder: events}
	metrics := NewMetrics(k8smetrics.NewKubeRegistry())
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c, err := New(ctx, Config{
		Tags: testTags, Nodes: factory.Core().V1().Nodes(), Client: client,
		EC2: NewEC2(ec2c), Instances: view, ClusterID: emuCluster, Events: recorded,
		BatchWindow: 100 * time.Millisecond, RateLimit: o.rate, BurstLimit: o.burst,
		Metrics: metrics,
	})
	if err != nil {
		t.Fatal(err)
	}
	res := &results{errs: map[item][]error{}}
	c.afterSync = res.record
	e := &emu{t: t, srv: srv, client: client, c: c, events: events, recorded: recorded, ec2: ec2c, results: res, view: view, viewClock: viewClock, metrics: metrics}
	if o.beforeStart != nil {
		o.beforeStart(e)
	}
	factory.Start(ctx.Done())
	go c.Run(ctx)
	return e
}

// enforcePolicy makes srv evaluate the controller's calls against
// iam/<file> (default ccm-policy-least-privilege.json) for cluster demo,
// as IAM would.
func enforcePolicy(t *testing.T, srv *awsemu.Emulator, file string) {
	t.Helper()
	if file == "" {
		file = "ccm-policy-least-privilege.json"
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "iam", file))
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
	if err := srv.AddPrincipal(awsemu.Principal{AccessKeyID: adminKey, Arn: "arn:aws:iam::123456789012:role/test-setup", Policies: []string{all}}); err != nil {
		t.Fatal(err)
	}
}

// adminKey signs adminEC2's requests: changes a test makes as someone else.
const adminKey = "AKIDTAGGINGTESTADMIN"

// adminEC2 is an EC2 client outside the controller's policy.
func adminEC2(t *testing.T, e *emu) *ec2.Client {
	t.Helper()
	cfg := aws.Config{Region: e.srv.Region(), Credentials: credentials.NewStaticCredentialsProvider(adminKey, "awsemu-secret", "")}
	return ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint, o.HTTPClient = aws.String(e.srv.URL), awsemu.HTTPClient() })
}

// createTags is a CreateTags input for one tag on one instance.
func createTags(id, key, value string) *ec2.CreateTagsInput {
	return &ec2.CreateTagsInput{Resources: []string{id}, Tags: []ec2types.Tag{{Key: aws.String(key), Value: aws.String(value)}}}
}

// node is a Node for instance id, created age ago.
func node(name, id string, age time.Duration) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Now().Add(-age))},
		Spec:       corev1.NodeSpec{ProviderID: providerid.Format("us-east-1a", id)},
	}
}

// eventually polls cond for up to 30 s (1,203 Nodes under -race take a
// while).
func (e *emu) eventually(what string, cond func() (bool, error)) {
	e.t.Helper()
	e.eventuallyEvery(what, 20*time.Millisecond, cond)
}

// eventuallyEvery is eventually polling every interval: the tests of a
// thousand Nodes poll less often, as each look copies every Node and would
// otherwise take the CPU the controller under test needs.
func (e *emu) eventuallyEvery(what string, interval time.Duration, cond func() (bool, error)) {
	e.t.Helper()
	// A deadline, not a timing claim: labelling 1,203 Nodes takes ~10 s
	// alone and past 30 s on a loaded CI machine (-race, other packages).
	err := wait.PollUntilContextTimeout(context.Background(), interval, 2*time.Minute, true,
		func(context.Context) (bool, error) { return cond() })
	if err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
}

// labelled reports whether every named Node carries the tags' checksum. It
// lists the Nodes once: a Get per Node, every poll, of 1,000 Nodes took
// more CPU than the controller under test.
func (e *emu) labelled(names ...string) (bool, error) {
	list, err := e.client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	sum := map[string]string{}
	for i := range list.Items {
		sum[list.Items[i].Name] = list.Items[i].Labels[LabelKey]
	}
	for _, n := range names {
		got, ok := sum[n]
		if !ok {
			return false, fmt.Errorf("no Node %s", n)
		}
		if got != Checksum(testTags) {
			return false, nil
		}
	}
	return true, nil
}

// tags returns the tags of instance id in the emulator.
func (e *emu) tags(id string) map[string]string {
	in, ok := e.srv.Instance(id)
	if !ok {
		e.t.Fatalf("no instance %s", id)
	}
	return in.Tags
}

// hasTestTags reports whether instance id carries testTags.
func (e *emu) hasTestTags(id string) bool {
	tags := e.tags(id)
	for k, v := range testTags {
		if tags[k] != v {
			return false
		}
	}
	return true
}

// results records what each sync of the controller returned, per item.
type results struct {
	mu   sync.Mutex
	errs map[item][]error
}

func (r *results) record(batch []item, errs map[item]error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, it := range batch {
		r.errs[it] = append(r.errs[it], errs[it])
	}
}

// waitSynced waits until every item has been synced at least n times
// (outcomes are recorded after the batch's Nodes are labelled).
func (e *emu) waitSynced(n int, items ...item) {
	e.t.Helper()
	e.eventually("items synced", func() (bool, error) {
		for _, it := range items {
			if len(e.results.of(it)) < n {
				return false, nil
			}
		}
		return true, nil
	})
}

// waitSucceeded waits until it has been synced without error: a Node is
// labelled before its batch's outcome is recorded, and a retried Node
// may have more failed outcomes than a test can predict.
func (e *emu) waitSucceeded(it item) {
	e.t.Helper()
	e.eventually("item synced without error", func() (bool, error) {
		got := e.results.of(it)
		return len(got) > 0 && got[len(got)-1] == nil, nil
	})
}

// of returns the outcomes of it so far.
func (r *results) of(it item) []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs[it]...)
}

// nodeEvents records the events the controller sends with the name of the
// object each is on (record.FakeRecorder keeps only the text), and passes
// them on to the FakeRecorder.
type nodeEvents struct {
	*record.FakeRecorder
	mu   sync.Mutex
	list []nodeEvent
}

type nodeEvent struct{ node, eventType, reason, message string }

func (r *nodeEvents) add(obj runtime.Object, eventType, reason, message string) {
	name := "<unnamed>"
	if m, err := meta.Accessor(obj); err == nil {
		name = m.GetName()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, nodeEvent{name, eventType, reason, message})
}

func (r *nodeEvents) Event(obj runtime.Object, eventType, reason, message string) {
	r.add(obj, eventType, reason, message)
	r.FakeRecorder.Event(obj, eventType, reason, message)
}

func (r *nodeEvents) Eventf(obj runtime.Object, eventType, reason, messageFmt string, args ...any) {
	r.add(obj, eventType, reason, fmt.Sprintf(messageFmt, args...))
	r.FakeRecorder.Eventf(obj, eventType, reason, messageFmt, args...)
}

func (r *nodeEvents) AnnotatedEventf(obj runtime.Object, annotations map[string]string, eventType, reason, messageFmt string, args ...any) {
	r.add(obj, eventType, reason, fmt.Sprintf(messageFmt, args...))
	r.FakeRecorder.AnnotatedEventf(obj, annotations, eventType, reason, messageFmt, args...)
}

// all returns the events recorded so far.
func (r *nodeEvents) all() []nodeEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.list)
}
