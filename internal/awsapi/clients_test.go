package awsapi

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"

	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// emulator starts the AWS emulator and points the SDK at it the way an
// operator would, through the environment.
func emulator(t *testing.T) (*awsemu.Server, string) {
	t.Helper()
	e := awsemu.StartT(t)
	env := e.Env()
	delete(env, "AWS_ENDPOINT_URL") // each test says how the endpoint is found
	env.Set(t)
	return e.Server, e.URL
}

func TestGuardRefusesUnregisteredActions(t *testing.T) {
	srv, url := emulator(t)
	t.Setenv("AWS_ENDPOINT_URL", url)
	c, err := NewClients(context.Background(), Options{Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	// DescribeVpcs is a real EC2 action the emulator serves, but the CCM
	// does not register it: the call must fail before it is sent.
	_, err = c.EC2.DescribeVpcs(context.Background(), &ec2.DescribeVpcsInput{})
	var unreg *UnregisteredActionError
	if !errors.As(err, &unreg) || unreg.Operation != "DescribeVpcs" {
		t.Fatalf("DescribeVpcs error = %v, want UnregisteredActionError", err)
	}
	if !strings.Contains(err.Error(), "ec2:DescribeVpcs") {
		t.Errorf("error %q does not name the IAM action", err)
	}
	if n := srv.Calls("ec2", "DescribeVpcs"); n != 0 {
		t.Fatalf("the emulator saw %d DescribeVpcs calls; the guard must stop them", n)
	}
	if _, err := c.EC2.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{}); err != nil {
		t.Fatalf("registered DescribeInstances: %v", err)
	}
}

func TestMetricsCountEveryAttemptAndThrottles(t *testing.T) {
	srv, url := emulator(t)
	t.Setenv("AWS_ENDPOINT_URL", url)
	reg := metrics.NewKubeRegistry()
	m := NewMetrics(reg)
	c, err := NewClients(context.Background(), Options{Region: "us-east-1", Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	// Two throttled attempts, then success on the SDK's third attempt.
	f := awsemu.Throttle("ec2", 1)
	f.Action, f.Remaining = "DescribeInstances", 2
	srv.InjectFault(f)
	if _, err := c.EC2.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{}); err != nil {
		t.Fatalf("DescribeInstances after 2 throttles: %v", err)
	}
	// An ELB-style throttle on STS is recognised as well.
	sf := awsemu.Throttle("sts", 1)
	sf.Remaining = 1
	srv.InjectFault(sf)
	if _, err := c.STS.GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{}); err != nil {
		t.Fatalf("GetCallerIdentity after 1 throttle: %v", err)
	}

	want := `
# HELP aws_ccm_api_requests_total [ALPHA] AWS API request attempts (retries count separately) by service, operation and outcome.
# TYPE aws_ccm_api_requests_total counter
aws_ccm_api_requests_total{operation="DescribeInstances",outcome="success",service="EC2"} 1
aws_ccm_api_requests_total{operation="DescribeInstances",outcome="throttled",service="EC2"} 2
aws_ccm_api_requests_total{operation="GetCallerIdentity",outcome="success",service="STS"} 1
aws_ccm_api_requests_total{operation="GetCallerIdentity",outcome="throttled",service="STS"} 1
# HELP aws_ccm_api_throttles_total [ALPHA] AWS API attempts rejected by throttling, by service, operation and error code (RequestLimitExceeded for EC2, Throttling for ELB/IAM/STS).
# TYPE aws_ccm_api_throttles_total counter
aws_ccm_api_throttles_total{code="RequestLimitExceeded",operation="DescribeInstances",service="EC2"} 2
aws_ccm_api_throttles_total{code="Throttling",operation="GetCallerIdentity",service="STS"} 1
`
	if err := testutil.GatherAndCompare(reg, bytes.NewBufferString(want), "aws_ccm_api_requests_total", "aws_ccm_api_throttles_total"); err != nil {
		t.Fatal(err)
	}
	if got := srv.Calls("ec2", "DescribeInstances"); got != 3 {
		t.Fatalf("emulator counted %d DescribeInstances attempts, metrics say 3", got)
	}
}

func TestServiceOverrideEndpoint(t *testing.T) {
	srv, url := emulator(t)
	// No AWS_ENDPOINT_URL: only the cloud config knows the endpoint, spelt
	// the SDK v1 way the in-tree provider used.
	conf := "[ServiceOverride \"1\"]\nService = ec2\nRegion = us-east-1\nURL = " + url + "\nSigningRegion = us-east-1\n"
	cc := loadCloudConfig(t, conf)
	c, err := NewClients(context.Background(), Options{Region: "us-east-1", CloudConfig: cc})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.EC2.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{MaxResults: aws.Int32(5)}); err != nil {
		t.Fatalf("DescribeInstances through the override: %v", err)
	}
	if srv.Calls("ec2", "DescribeInstances") != 1 {
		t.Fatal("the call did not reach the overridden endpoint")
	}
}

// TestELBServiceOverride: the in-tree spelling "elasticloadbalancing"
// redirects both the Classic and the v2 client, signed for the override's
// region, and both pass the guard and reach their own API.
func TestELBServiceOverride(t *testing.T) {
	srv, url := emulator(t)
	conf := "[ServiceOverride \"elb\"]\nService = elasticloadbalancing\nRegion = eu-west-1\nURL = " + url + "\nSigningRegion = us-east-1\n"
	c, err := NewClients(context.Background(), Options{Region: "eu-west-1", CloudConfig: loadCloudConfig(t, conf)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.ELB.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{}); err != nil {
		t.Fatalf("Classic DescribeLoadBalancers through the override: %v", err)
	}
	if _, err := c.ELBv2.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{}); err != nil {
		t.Fatalf("v2 DescribeLoadBalancers through the override: %v", err)
	}
	if c.ELB.Options().Region != "us-east-1" || c.ELBv2.Options().Region != "us-east-1" {
		t.Errorf("signing regions %s, %s; want the override's us-east-1", c.ELB.Options().Region, c.ELBv2.Options().Region)
	}
	if got := srv.CallCounts(); got["elasticloadbalancing:DescribeLoadBalancers"] != 1 || got["elasticloadbalancingv2:DescribeLoadBalancers"] != 1 {
		t.Fatalf("emulator calls %v", got)
	}
}

func TestNewClientsNeedsRegion(t *testing.T) {
	_, err := NewClients(context.Background(), Options{})
	if err == nil || !strings.Contains(err.Error(), "Region") {
		t.Fatalf("NewClients without a region: %v", err)
	}
}

// loadCloudConfig writes conf to a file and loads it as the CCM would.
func loadCloudConfig(t *testing.T, conf string) *cloudconfig.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cloud.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cc, err := cloudconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cc
}

// The SDK's own retry settings reach every client: AWS_MAX_ATTEMPTS sets
// the attempts and AWS_RETRY_MODE=adaptive the client-side rate limiting
// AWS recommends for an account that throttles; Options.MaxAttempts, when
// set, wins over both.
func TestRetrySettingsFromTheEnvironment(t *testing.T) {
	srv, url := emulator(t)
	t.Setenv("AWS_ENDPOINT_URL", url)
	throttle := func(times int) {
		f := awsemu.Throttle("ec2", 1)
		f.Action, f.Remaining = "DescribeInstances", times
		srv.InjectFault(f)
	}
	describe := func(o Options) (attempts int, err error) {
		t.Helper()
		c, err := NewClients(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		before := srv.Calls("ec2", "DescribeInstances")
		_, err = c.EC2.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{})
		return srv.Calls("ec2", "DescribeInstances") - before, err
	}

	// The SDK's default, three attempts, is TestMetricsCountEveryAttemptAndThrottles'.
	t.Setenv("AWS_MAX_ATTEMPTS", "2")
	throttle(2)
	if n, err := describe(Options{Region: "us-east-1"}); err == nil || n != 2 {
		t.Errorf("AWS_MAX_ATTEMPTS=2: %d attempts, %v; want 2 and the throttle's error", n, err)
	}
	srv.ClearFaults()
	throttle(1)
	if n, err := describe(Options{Region: "us-east-1", MaxAttempts: 1}); err == nil || n != 1 {
		t.Errorf("MaxAttempts 1 over AWS_MAX_ATTEMPTS=2: %d attempts, %v; want 1 and the throttle's error", n, err)
	}
	srv.ClearFaults()
	if err := os.Unsetenv("AWS_MAX_ATTEMPTS"); err != nil { // t.Setenv restores it after the test
		t.Fatal(err)
	}

	t.Setenv("AWS_RETRY_MODE", "adaptive")
	c, err := NewClients(context.Background(), Options{Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	if r := c.EC2.Options().Retryer; func() bool { _, ok := r.(*retry.AdaptiveMode); return !ok }() {
		t.Errorf("AWS_RETRY_MODE=adaptive: EC2's retryer is %T, want *retry.AdaptiveMode", r)
	}
	throttle(1)
	if n, err := describe(Options{Region: "us-east-1"}); err != nil || n != 2 {
		t.Errorf("adaptive after a throttle: %d attempts, %v; want success on the 2nd", n, err)
	}
}
