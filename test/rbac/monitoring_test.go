package rbac

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// scrapeStep is the time between two scrapes on the timeline the rules are
// evaluated on: the test scrapes once a second and spaces the samples
// 30 s apart (Prometheus' usual interval), so 15 minutes of alerting pass
// in 30 seconds. Every alert compares a ratio of rates, a rate with 0 or a
// gauge, which compressing time leaves as they are; the retries of a
// failing Service (5 s, 10 s, 20 s apart at first) stay within the 15
// minute window (30 s here) of the load-balancer alert.
const (
	scrapeStep     = 30 * time.Second
	scrapeInterval = time.Second
)

// TestAlertsFireOnTheRealCCM runs the CCM binary with the objects `install
// --monitoring` renders, scrapes /metrics as the ServiceMonitor would (the
// metrics reader's token, bound by the rendered ClusterRole), and
// evaluates the rendered PrometheusRule over the samples with Prometheus'
// rule engine (rule-check). While nothing is wrong no alert is even
// pending; then, with every instance of three NotReady Nodes vanished,
// EC2 throttling a third of DescribeInstances and ELB refusing a Service's
// load balancer, the breaker, throttling and load-balancer alerts fire,
// each after its `for`, and the others stay quiet.
func TestAlertsFireOnTheRealCCM(t *testing.T) {
	testbed.Tool(t, testbed.RuleCheckBinary)
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(env.cp.Config)
	v := install.Values{ClusterName: clusterID, Monitoring: true, CloudConfig: &cloudconfig.Config{Global: cloudconfig.Global{
		Region: region, VPC: vpc, KubernetesClusterID: clusterID}}}
	v.Default()
	b, err := install.Render(v)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := apply.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	ac, err := apply.NewClient(env.cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ac.Apply(ctx, ofKind(objs, "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "RoleBinding"), apply.Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	c := startCCMWith(t, objs, "ccm-monitoring", map[string]string{
		"aws-instance-absence-grace-period": "3s",
		"aws-instance-cache-max-age":        "1s",
		"aws-max-absent-node-deletions":     "1",
	})
	// The token the ServiceMonitor sends: the metrics reader's (its
	// Secret is filled by the token controller, which the test bed does
	// not run; a TokenRequest token authenticates the same).
	reader, err := env.cp.ServiceAccountConfig(ctx, v.Namespace, install.MetricsReaderName)
	if err != nil {
		t.Fatal(err)
	}
	s := &scraper{port: c.port, token: reader.BearerToken, start: time.Now().Add(-2 * time.Hour),
		client: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}} // #nosec G402 -- the CCM's self-signed serving cert, as the ServiceMonitor's tlsConfig
	waitFor(t, 60*time.Second, "GET /metrics with the metrics reader's token", func(ctx context.Context) (bool, error) {
		return s.scrape(ctx) == nil, nil
	})
	s.scrapes = nil

	// Three NotReady Nodes on their instances.
	var ids []string
	for i := range 3 {
		id := fmt.Sprintf("i-0feed0000000000%02d", i)
		ip := fmt.Sprintf("10.0.1.%d", 200+i)
		if err := env.aws.AddInstance(awsemu.Instance{ID: id, Type: "m6i.large", State: "running", SubnetID: "subnet-0demo00000000000a",
			PrivateIP: ip, SecurityGroupIDs: []string{"sg-0demo000000000001"}, Tags: map[string]string{"kubernetes.io/cluster/" + clusterID: "owned"}}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		name := "monitoring-node-" + strconv.Itoa(i)
		registerNode(t, cs, name, providerid.Format("us-east-1a", id), false)
		waitFor(t, 60*time.Second, "Node "+name+" initialized", initialized(cs, name))
	}

	// Nothing wrong: a control no alert may even be pending in.
	s.scrapeFor(t, 12)
	control := len(s.scrapes)

	if err := env.aws.HideInstances(ids...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.aws.ShowInstances(ids...) })
	throttle := awsemu.Throttle("ec2", 0.3)
	throttle.Action = "DescribeInstances"
	for _, f := range []awsemu.Fault{throttle, {Service: "elasticloadbalancing", Action: "CreateLoadBalancer", Code: "AccessDenied", HTTPStatus: http.StatusForbidden}} {
		id := env.aws.InjectFault(f)
		t.Cleanup(func() { env.aws.ClearFault(id) })
	}
	failingLoadBalancer(t, cs, "monitoring-lb")
	s.scrapeFor(t, 45)

	rules := testbed.WriteRulesFile(t, ofKind(objs, "PrometheusRule")[0].Object)
	quiet := testbed.EvaluateRules(t, rules, scrapeStep, s.scrapes[:control])
	for _, a := range quiet.Alerts {
		if a.FirstPendingMs != 0 || a.FirstFiringMs != 0 || a.Error != "" {
			t.Errorf("control: %s went pending at %d, firing at %d (%s): nothing was wrong", a.Name, a.FirstPendingMs, a.FirstFiringMs, a.Error)
		}
	}
	all := testbed.EvaluateRules(t, rules, scrapeStep, s.scrapes)
	if len(all.Alerts) != len(install.Alerts()) {
		t.Fatalf("rule-check evaluated %d alerts, want %d", len(all.Alerts), len(install.Alerts()))
	}
	mustFire := map[string]bool{"AWSCCMNodeDeletionBreakerTripped": true, "AWSCCMAPIThrottled": true, "AWSCCMLoadBalancerSyncFailing": true}
	hold := map[string]time.Duration{}
	for _, a := range install.Alerts() {
		d, err := model.ParseDuration(a.For)
		if err != nil {
			t.Fatal(err)
		}
		hold[a.Name] = time.Duration(d)
	}
	for _, a := range all.Alerts {
		switch {
		case a.Error != "":
			t.Errorf("%s: evaluation error %s", a.Name, a.Error)
		case mustFire[a.Name] && a.FirstFiringMs == 0:
			t.Errorf("%s never fired (pending from %d, last state %s)", a.Name, a.FirstPendingMs, a.FinalState)
		case mustFire[a.Name] && time.Duration(a.FirstFiringMs-a.FirstPendingMs)*time.Millisecond < hold[a.Name]:
			t.Errorf("%s fired %v after going pending, before its for of %v", a.Name, time.Duration(a.FirstFiringMs-a.FirstPendingMs)*time.Millisecond, hold[a.Name])
		case !mustFire[a.Name] && a.FirstPendingMs != 0:
			t.Errorf("%s went pending, but its condition was never made", a.Name)
		}
		t.Logf("%s: pending %s, firing %s, last %s", a.Name, s.at(a.FirstPendingMs), s.at(a.FirstFiringMs), a.FinalState)
	}
}

// failingLoadBalancer creates an internal Classic load-balancer Service the
// CCM cannot make (the test refuses CreateLoadBalancer); at the end it is
// deleted, and its finalizer removed if the CCM has not released it.
func failingLoadBalancer(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	createInternalLoadBalancer(t, cs, name)
	t.Cleanup(func() {
		ctx := context.Background()
		_ = cs.CoreV1().Services("default").Delete(ctx, name, metav1.DeleteOptions{})
		_, _ = cs.CoreV1().Services("default").Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
}

// scraper collects /metrics as Prometheus would for the rendered
// ServiceMonitor's target.
type scraper struct {
	port    int
	token   string
	client  *http.Client
	start   time.Time
	scrapes []testbed.RuleScrape
}

// at says where on the compressed timeline a time of rule-check's is.
func (s *scraper) at(ms int64) string {
	if ms == 0 {
		return "never"
	}
	return time.UnixMilli(ms).Sub(s.start).String()
}

// scrapeFor scrapes n times, scrapeInterval apart.
func (s *scraper) scrapeFor(t *testing.T, n int) {
	t.Helper()
	for range n {
		if err := s.scrape(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(scrapeInterval)
	}
}

// scrape reads /metrics once and appends its samples at the next step of
// the timeline, with the target labels Prometheus adds.
func (s *scraper) scrape(ctx context.Context) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", s.port), nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /metrics: HTTP %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return fmt.Errorf("parse /metrics: %w", err)
	}
	target := map[string]string{"job": install.MetricsServiceName, "instance": "127.0.0.1:" + strconv.Itoa(s.port)}
	s.scrapes = append(s.scrapes, testbed.NewRuleScrape(s.start.Add(time.Duration(len(s.scrapes))*scrapeStep), slices.Collect(maps.Values(mfs)), target))
	return nil
}
