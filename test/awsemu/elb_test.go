package awsemu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
)

func elbClient(t testing.TB, url string) *elb.Client {
	return elb.NewFromConfig(sdkConfig(t), func(o *elb.Options) {
		o.BaseEndpoint = aws.String(url)
		o.HTTPClient = HTTPClient()
	})
}

// lbFixture is the demo fixture plus n Classic load balancers named
// classic-0..n-1 and the given ones.
func lbFixture(t testing.TB, n int, lbs ...LoadBalancer) *Fixture {
	t.Helper()
	f, err := LoadFixture("testdata/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		f.LoadBalancers = append(f.LoadBalancers, LoadBalancer{Name: fmt.Sprintf("classic-%d", i)})
	}
	f.LoadBalancers = append(f.LoadBalancers, lbs...)
	return f
}

// webClassic is a Classic load balancer using all of the demo's resources.
var webClassic = LoadBalancer{
	Name: "a0123456789abcdef0123456789abcde", Subnets: []string{"subnet-0demo00000000000a", "subnet-0demo00000000000b"},
	SecurityGroups: []string{"sg-0demo000000000001"}, Instances: []string{demoA, demoB},
	Listeners: []LBListener{{Protocol: "TCP", Port: 80, InstancePort: 30080}, {Protocol: "SSL", Port: 443, InstancePort: 30443,
		CertificateARN: "arn:aws:acm:us-east-1:123456789012:certificate/demo"}},
	Tags: map[string]string{"kubernetes.io/cluster/demo": "owned", "kubernetes.io/service-name": "default/web"},
}

func TestClassicDescribeLoadBalancers(t *testing.T) {
	internal := LoadBalancer{Name: "private", Scheme: LBSchemeInternal, Subnets: []string{"subnet-0demo00000000000c"}}
	_, url := start(t, lbFixture(t, 0, webClassic, internal))
	client := elbClient(t, url)
	out, err := client.DescribeLoadBalancers(context.Background(), &elb.DescribeLoadBalancersInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.LoadBalancerDescriptions) != 2 || out.NextMarker != nil {
		t.Fatalf("got %d load balancers, marker %v", len(out.LoadBalancerDescriptions), out.NextMarker)
	}
	d, in := out.LoadBalancerDescriptions[0], out.LoadBalancerDescriptions[1]
	if !regexp.MustCompile(`^a0123456789abcdef0123456789abcde-\d{10}\.us-east-1\.elb\.amazonaws\.com$`).MatchString(aws.ToString(d.DNSName)) {
		t.Errorf("DNS name %q is not <name>-<number>.<region>.elb.amazonaws.com", aws.ToString(d.DNSName))
	}
	if !strings.HasPrefix(aws.ToString(in.DNSName), "internal-private-") || aws.ToString(in.Scheme) != "internal" || in.CanonicalHostedZoneName != nil {
		t.Errorf("internal load balancer: %s %s %v", aws.ToString(in.DNSName), aws.ToString(in.Scheme), in.CanonicalHostedZoneName)
	}
	check := func(what string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	check("name", aws.ToString(d.LoadBalancerName), webClassic.Name)
	check("scheme", aws.ToString(d.Scheme), "internet-facing")
	check("zone name", aws.ToString(d.CanonicalHostedZoneName), aws.ToString(d.DNSName))
	check("zone ID", aws.ToString(d.CanonicalHostedZoneNameID), "Z35SXDOTRQ7X7K")
	check("VPC", aws.ToString(d.VPCId), demoVPC)
	check("zones", d.AvailabilityZones, []string{"us-east-1a", "us-east-1b"})
	check("subnets", d.Subnets, webClassic.Subnets)
	check("security groups", d.SecurityGroups, webClassic.SecurityGroups)
	check("source group", aws.ToString(d.SourceSecurityGroup.GroupName)+"/"+aws.ToString(d.SourceSecurityGroup.OwnerAlias), "demo-nodes/123456789012")
	check("health check", aws.ToString(d.HealthCheck.Target), "TCP:30080")
	check("created", aws.ToTime(d.CreatedTime).Format("2006-01-02"), "2026-01-01")
	var instances, listeners []string
	for _, i := range d.Instances {
		instances = append(instances, aws.ToString(i.InstanceId))
	}
	for _, l := range d.ListenerDescriptions {
		listeners = append(listeners, fmt.Sprintf("%s:%d->%s:%d %s", aws.ToString(l.Listener.Protocol), l.Listener.LoadBalancerPort,
			aws.ToString(l.Listener.InstanceProtocol), aws.ToInt32(l.Listener.InstancePort), aws.ToString(l.Listener.SSLCertificateId)))
	}
	check("instances", instances, []string{demoA, demoB})
	check("listeners", listeners, []string{"TCP:80->TCP:30080 ", "SSL:443->SSL:30443 arn:aws:acm:us-east-1:123456789012:certificate/demo"})
	if d.Policies == nil {
		t.Error("no Policies element")
	}

	// By name, with duplicates.
	out, err = client.DescribeLoadBalancers(context.Background(), &elb.DescribeLoadBalancersInput{LoadBalancerNames: []string{"private", "private"}})
	if err != nil || len(out.LoadBalancerDescriptions) != 1 || aws.ToString(out.LoadBalancerDescriptions[0].LoadBalancerName) != "private" {
		t.Fatalf("by name: %v %+v", err, out)
	}
}

func TestClassicNotFoundFailsTheWholeCall(t *testing.T) {
	s, url := start(t, lbFixture(t, 3))
	client := elbClient(t, url)
	_, err := client.DescribeLoadBalancers(context.Background(), &elb.DescribeLoadBalancersInput{LoadBalancerNames: []string{"classic-0", "gone", "classic-1"}})
	var nf *elbtypes.AccessPointNotFoundException
	if !errors.As(err, &nf) || nf.ErrorCode() != "LoadBalancerNotFound" || nf.ErrorMessage() != "There is no ACTIVE Load Balancer named 'gone'" {
		t.Fatalf("error = %v, want AccessPointNotFoundException (LoadBalancerNotFound)", err)
	}
	_, err = client.DescribeTags(context.Background(), &elb.DescribeTagsInput{LoadBalancerNames: []string{"classic-2", "gone"}})
	if !errors.As(err, &nf) {
		t.Fatalf("DescribeTags error = %v, want AccessPointNotFoundException", err)
	}
	// Not-found is a client error: no retries.
	if n := s.Calls("elasticloadbalancing", "DescribeLoadBalancers"); n != 1 {
		t.Errorf("%d DescribeLoadBalancers calls, want 1", n)
	}
}

func TestClassicPagination(t *testing.T) {
	s, url := start(t, lbFixture(t, 450))
	client := elbClient(t, url)
	var names []string
	p := elb.NewDescribeLoadBalancersPaginator(client, &elb.DescribeLoadBalancersInput{PageSize: aws.Int32(400)})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range out.LoadBalancerDescriptions {
			names = append(names, aws.ToString(d.LoadBalancerName))
		}
	}
	if len(names) != 450 || names[0] != "classic-0" || names[449] != "classic-449" || len(slices.Compact(slices.Clone(names))) != 450 {
		t.Fatalf("paginator returned %d names (%s ... %s)", len(names), names[0], names[len(names)-1])
	}
	if n := s.Calls("elasticloadbalancing", "DescribeLoadBalancers"); n != 2 {
		t.Errorf("%d calls for 450 load balancers at 400 a page, want 2", n)
	}
	// Without PageSize the page is 400 too.
	out, err := client.DescribeLoadBalancers(context.Background(), &elb.DescribeLoadBalancersInput{})
	if err != nil || len(out.LoadBalancerDescriptions) != 400 || out.NextMarker == nil {
		t.Fatalf("default page: %v, %d items", err, len(out.LoadBalancerDescriptions))
	}
	for _, size := range []int32{0, 401} {
		_, err := client.DescribeLoadBalancers(context.Background(), &elb.DescribeLoadBalancersInput{PageSize: aws.Int32(size)})
		wantCode(t, err, "ValidationError")
	}
	_, err = client.DescribeLoadBalancers(context.Background(), &elb.DescribeLoadBalancersInput{Marker: aws.String("garbage")})
	wantCode(t, err, "ValidationError")
}

func TestClassicDescribeTags(t *testing.T) {
	_, url := start(t, lbFixture(t, 25, webClassic))
	client := elbClient(t, url)
	out, err := client.DescribeTags(context.Background(), &elb.DescribeTagsInput{LoadBalancerNames: []string{webClassic.Name, "classic-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.TagDescriptions) != 2 {
		t.Fatalf("%d tag descriptions", len(out.TagDescriptions))
	}
	got := map[string]string{}
	for _, tg := range out.TagDescriptions[0].Tags {
		got[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
	}
	if aws.ToString(out.TagDescriptions[0].LoadBalancerName) != webClassic.Name || fmt.Sprint(got) != fmt.Sprint(webClassic.Tags) ||
		len(out.TagDescriptions[1].Tags) != 0 {
		t.Errorf("tags %+v", out.TagDescriptions)
	}
	var names []string
	for i := range 21 {
		names = append(names, fmt.Sprintf("classic-%d", i))
	}
	_, err = client.DescribeTags(context.Background(), &elb.DescribeTagsInput{LoadBalancerNames: names[:20]})
	if err != nil {
		t.Fatalf("20 names: %v", err)
	}
	_, err = client.DescribeTags(context.Background(), &elb.DescribeTagsInput{LoadBalancerNames: names})
	wantCode(t, err, "ValidationError")
}

func TestClassicThrottleAndCounting(t *testing.T) {
	s, url := start(t, lbFixture(t, 1))
	f := Throttle("elasticloadbalancing", 1)
	f.Action, f.Remaining = "DescribeLoadBalancers", 2
	s.InjectFault(f)
	if _, err := elbClient(t, url).DescribeLoadBalancers(context.Background(), &elb.DescribeLoadBalancersInput{}); err != nil {
		t.Fatalf("after 2 throttles: %v", err)
	}
	if got := s.CallCounts(); got["elasticloadbalancing:DescribeLoadBalancers"] != 3 || got["elasticloadbalancingv2:DescribeLoadBalancers"] != 0 {
		t.Fatalf("calls %v", got)
	}
	s.InjectFault(Throttle("elasticloadbalancing", 1))
	_, err := elbClient(t, url).DescribeTags(context.Background(), &elb.DescribeTagsInput{LoadBalancerNames: []string{"classic-0"}})
	wantCode(t, err, "Throttling")
}

func TestLoadBalancerFixtureErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"bad name", "loadBalancers:\n  - {name: -bad-}\n  - {name: internal-x}\n  - {name: abcdefghijabcdefghijabcdefghijabc}\n",
			[]string{"loadBalancers[0] (-bad-): name", "loadBalancers[1] (internal-x): name", "loadBalancers[2]"}},
		{"bad type and scheme", "loadBalancers:\n  - {name: x, type: gateway, scheme: public}\n",
			[]string{`type "gateway"`, `scheme "public"`}},
		{"unknown references", "loadBalancers:\n  - {name: x, subnets: [subnet-x], securityGroups: [sg-x], instances: [i-x]}\n",
			[]string{`subnet "subnet-x" does not exist`, `security group "sg-x" does not exist`, `instance "i-x" does not exist`}},
		{"duplicates", "loadBalancers:\n  - {name: x}\n  - {name: x}\n  - {name: x, type: network}\n  - {name: x, type: application}\n",
			[]string{"loadBalancers[1] (x): duplicate classic", "loadBalancers[3] (x): duplicate load balancer name"}},
		{"classic with v2 fields", "loadBalancers:\n  - {name: x, arn: arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/net/x/0123456789abcdef}\n",
			[]string{"a classic load balancer has no arn"}},
		{"bad arn", "loadBalancers:\n  - {name: x, type: network, arn: arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/x/0123456789abcdef}\n",
			[]string{"must be arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/net/x/<16 hex digits>"}},
		{"listeners", "loadBalancers:\n  - name: x\n    type: network\n    listeners:\n      - {protocol: HTTP, port: 80}\n      - {protocol: TCP, port: 0, targetGroup: nope}\n",
			[]string{`listeners[0]: protocol "HTTP"`, "listeners[1]: port 0", `targetGroup "nope" is not in this load balancer's targetGroups`}},
		{"target group port", "loadBalancers:\n  - name: x\n    type: network\n    targetGroups: [{name: tg}]\n", []string{"targetGroups[0] (tg): port 0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadFixture(path)
			if err == nil {
				t.Fatal("LoadFixture succeeded")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

// TestLoadBalancerFixtureIsCopied checks that a Server does not share the
// fixture's maps and slices.
func TestLoadBalancerFixtureIsCopied(t *testing.T) {
	f := lbFixture(t, 0, webClassic)
	f.LoadBalancers[0].Tags = map[string]string{"k": "v"}
	f.LoadBalancers[0].Subnets = []string{"subnet-0demo00000000000a"}
	s := New(f)
	f.LoadBalancers[0].Tags["k"] = "changed"
	f.LoadBalancers[0].Subnets[0] = "subnet-changed"
	s.elb.mu.RLock()
	defer s.elb.mu.RUnlock()
	lb, _ := s.elb.classic.get(webClassic.Name)
	if lb.Tags["k"] != "v" || lb.Subnets[0] != "subnet-0demo00000000000a" {
		t.Fatalf("server shares fixture data: %v %v", lb.Tags, lb.Subnets)
	}
	if f.LoadBalancers[0].DNSName != "" {
		t.Fatal("New changed the caller's fixture")
	}
}
