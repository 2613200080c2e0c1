package awsemu

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
)

func elbv2Client(t testing.TB, url string) *elbv2.Client {
	return elbv2.NewFromConfig(sdkConfig(t), func(o *elbv2.Options) {
		o.BaseEndpoint = aws.String(url)
		o.HTTPClient = HTTPClient()
	})
}

// webNLB is a Network load balancer with one listener and target group.
var webNLB = LoadBalancer{
	Name: "a0123456789abcdef0123456789abcde", Type: LBTypeNetwork,
	Subnets: []string{"subnet-0demo00000000000a", "subnet-0demo00000000000c"},
	Tags:    map[string]string{"kubernetes.io/cluster/demo": "owned", "kubernetes.io/service-name": "default/web"},
	TargetGroups: []TargetGroup{{Name: "k8s-default-web-0123456789", Port: 30080,
		Tags: map[string]string{"kubernetes.io/service-name": "default/web"}}},
	Listeners: []LBListener{{Protocol: "TCP", Port: 80, TargetGroup: "k8s-default-web-0123456789"}},
}

var webALB = LoadBalancer{Name: "web-alb", Type: LBTypeApplication, Scheme: LBSchemeInternal,
	Subnets: []string{"subnet-0demo00000000000b"}, SecurityGroups: []string{"sg-0demo000000000001"}}

// v2Fixture is the demo fixture plus n Network load balancers named
// nlb-0..n-1 and the given ones.
func v2Fixture(t testing.TB, n int, lbs ...LoadBalancer) *Fixture {
	f := lbFixture(t, 0)
	for i := range n {
		f.LoadBalancers = append(f.LoadBalancers, LoadBalancer{Name: fmt.Sprintf("nlb-%d", i), Type: LBTypeNetwork})
	}
	f.LoadBalancers = append(f.LoadBalancers, lbs...)
	return f
}

func TestV2DescribeLoadBalancers(t *testing.T) {
	_, url := start(t, v2Fixture(t, 0, webNLB, webALB))
	client := elbv2Client(t, url)
	out, err := client.DescribeLoadBalancers(context.Background(), &elbv2.DescribeLoadBalancersInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.LoadBalancers) != 2 || out.NextMarker != nil {
		t.Fatalf("got %d load balancers, marker %v", len(out.LoadBalancers), out.NextMarker)
	}
	nlb, alb := out.LoadBalancers[0], out.LoadBalancers[1]
	arnRE := regexp.MustCompile(`^arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/net/a0123456789abcdef0123456789abcde/[0-9a-f]{16}$`)
	if !arnRE.MatchString(aws.ToString(nlb.LoadBalancerArn)) {
		t.Errorf("NLB ARN %q", aws.ToString(nlb.LoadBalancerArn))
	}
	dnsRE := regexp.MustCompile(`^a0123456789abcdef0123456789abcde-[0-9a-f]{16}\.elb\.us-east-1\.amazonaws\.com$`)
	if !dnsRE.MatchString(aws.ToString(nlb.DNSName)) {
		t.Errorf("NLB DNS name %q is not <name>-<16 hex>.elb.<region>.amazonaws.com", aws.ToString(nlb.DNSName))
	}
	var zones []string
	for _, az := range nlb.AvailabilityZones {
		zones = append(zones, aws.ToString(az.ZoneName)+"="+aws.ToString(az.SubnetId))
	}
	got := fmt.Sprint(nlb.Type, " ", nlb.Scheme, " ", nlb.State.Code, " ", aws.ToString(nlb.VpcId), " ", aws.ToString(nlb.CanonicalHostedZoneId), " ", zones, " ", nlb.SecurityGroups)
	if want := "network internet-facing active " + demoVPC + " Z26RNL4JYFTOTI [us-east-1a=subnet-0demo00000000000a us-east-1c=subnet-0demo00000000000c] []"; got != want {
		t.Errorf("NLB:\n got %s\nwant %s", got, want)
	}
	if !strings.HasPrefix(aws.ToString(alb.LoadBalancerArn), "arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/web-alb/") ||
		!regexp.MustCompile(`^internal-web-alb-\d{10}\.us-east-1\.elb\.amazonaws\.com$`).MatchString(aws.ToString(alb.DNSName)) ||
		alb.Type != elbv2types.LoadBalancerTypeEnumApplication || len(alb.SecurityGroups) != 1 {
		t.Errorf("ALB %s %s %s %v", aws.ToString(alb.LoadBalancerArn), aws.ToString(alb.DNSName), alb.Type, alb.SecurityGroups)
	}

	byName, err := client.DescribeLoadBalancers(context.Background(), &elbv2.DescribeLoadBalancersInput{Names: []string{"web-alb"}})
	if err != nil || len(byName.LoadBalancers) != 1 || aws.ToString(byName.LoadBalancers[0].LoadBalancerArn) != aws.ToString(alb.LoadBalancerArn) {
		t.Fatalf("by name: %v %+v", err, byName)
	}
	byArn, err := client.DescribeLoadBalancers(context.Background(), &elbv2.DescribeLoadBalancersInput{LoadBalancerArns: []string{aws.ToString(nlb.LoadBalancerArn)}})
	if err != nil || len(byArn.LoadBalancers) != 1 || aws.ToString(byArn.LoadBalancers[0].LoadBalancerName) != webNLB.Name {
		t.Fatalf("by ARN: %v %+v", err, byArn)
	}
}

func TestV2NotFound(t *testing.T) {
	s, url := start(t, v2Fixture(t, 2))
	client := elbv2Client(t, url)
	_, err := client.DescribeLoadBalancers(context.Background(), &elbv2.DescribeLoadBalancersInput{Names: []string{"nlb-0", "gone", "nlb-1"}})
	var nf *elbv2types.LoadBalancerNotFoundException
	if !errors.As(err, &nf) || nf.ErrorMessage() != "Load balancers '[gone]' not found" {
		t.Fatalf("error = %v, want LoadBalancerNotFoundException", err)
	}
	unknown := "arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/net/gone/0123456789abcdef"
	_, err = client.DescribeLoadBalancers(context.Background(), &elbv2.DescribeLoadBalancersInput{LoadBalancerArns: []string{unknown}})
	if !errors.As(err, &nf) {
		t.Fatalf("by ARN: error = %v, want LoadBalancerNotFoundException", err)
	}
	_, err = client.DescribeTags(context.Background(), &elbv2.DescribeTagsInput{ResourceArns: []string{unknown}})
	if !errors.As(err, &nf) {
		t.Fatalf("DescribeTags: error = %v, want LoadBalancerNotFoundException", err)
	}
	_, err = client.DescribeTargetGroups(context.Background(), &elbv2.DescribeTargetGroupsInput{Names: []string{"gone"}})
	var tgnf *elbv2types.TargetGroupNotFoundException
	if !errors.As(err, &tgnf) {
		t.Fatalf("DescribeTargetGroups: error = %v, want TargetGroupNotFoundException", err)
	}
	_, err = client.DescribeListeners(context.Background(), &elbv2.DescribeListenersInput{LoadBalancerArn: aws.String(unknown)})
	if !errors.As(err, &nf) {
		t.Fatalf("DescribeListeners: error = %v, want LoadBalancerNotFoundException", err)
	}
	_, err = client.DescribeListeners(context.Background(), &elbv2.DescribeListenersInput{
		ListenerArns: []string{"arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/net/gone/0123456789abcdef/0123456789abcdef"}})
	var lnf *elbv2types.ListenerNotFoundException
	if !errors.As(err, &lnf) {
		t.Fatalf("DescribeListeners by ARN: error = %v, want ListenerNotFoundException", err)
	}
	if n := s.Calls("elasticloadbalancingv2", "DescribeLoadBalancers"); n != 2 {
		t.Errorf("%d DescribeLoadBalancers calls, want 2 (not-found is not retried)", n)
	}
}

func TestV2Validation(t *testing.T) {
	_, url := start(t, v2Fixture(t, 25))
	client := elbv2Client(t, url)
	ctx := context.Background()
	var arns []string
	p := elbv2.NewDescribeLoadBalancersPaginator(client, &elbv2.DescribeLoadBalancersInput{})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, lb := range out.LoadBalancers {
			arns = append(arns, aws.ToString(lb.LoadBalancerArn))
		}
	}
	tests := map[string]func() error{
		"names and ARNs": func() error {
			_, err := client.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{Names: []string{"nlb-0"}, LoadBalancerArns: arns[:1]})
			return err
		},
		"21 ARNs": func() error {
			_, err := client.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{LoadBalancerArns: arns[:21]})
			return err
		},
		"malformed ARN": func() error {
			_, err := client.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{LoadBalancerArns: []string{"nlb-0"}})
			return err
		},
		"21 tag resources": func() error {
			_, err := client.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: arns[:21]})
			return err
		},
		"page size 401": func() error {
			_, err := client.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{PageSize: aws.Int32(401)})
			return err
		},
		"listeners without selector": func() error {
			_, err := client.DescribeListeners(ctx, &elbv2.DescribeListenersInput{})
			return err
		},
		"target groups by LB and name": func() error {
			_, err := client.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{LoadBalancerArn: aws.String(arns[0]), Names: []string{"x"}})
			return err
		},
	}
	for name, call := range tests {
		t.Run(name, func(t *testing.T) { wantCode(t, call(), "ValidationError") })
	}
	out, err := client.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: arns[:20]})
	if err != nil || len(out.TagDescriptions) != 20 {
		t.Fatalf("20 tag resources: %v", err)
	}
}

func TestV2Pagination(t *testing.T) {
	s, url := start(t, v2Fixture(t, 801))
	client := elbv2Client(t, url)
	n := 0
	p := elbv2.NewDescribeLoadBalancersPaginator(client, &elbv2.DescribeLoadBalancersInput{PageSize: aws.Int32(400)})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, lb := range out.LoadBalancers {
			if want := fmt.Sprintf("nlb-%d", n); aws.ToString(lb.LoadBalancerName) != want {
				t.Fatalf("item %d is %s, want %s", n, aws.ToString(lb.LoadBalancerName), want)
			}
			n++
		}
	}
	if n != 801 || s.Calls("elasticloadbalancingv2", "DescribeLoadBalancers") != 3 {
		t.Fatalf("%d load balancers in %d calls, want 801 in 3", n, s.Calls("elasticloadbalancingv2", "DescribeLoadBalancers"))
	}
}

func TestV2TagsTargetGroupsAndListeners(t *testing.T) {
	_, url := start(t, v2Fixture(t, 0, webNLB, webALB))
	client := elbv2Client(t, url)
	ctx := context.Background()
	lbs, err := client.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{Names: []string{webNLB.Name}})
	if err != nil {
		t.Fatal(err)
	}
	lbArn := aws.ToString(lbs.LoadBalancers[0].LoadBalancerArn)

	tgs, err := client.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{LoadBalancerArn: aws.String(lbArn)})
	if err != nil || len(tgs.TargetGroups) != 1 {
		t.Fatalf("target groups: %v %+v", err, tgs)
	}
	tg := tgs.TargetGroups[0]
	got := fmt.Sprint(aws.ToString(tg.TargetGroupName), " ", tg.Protocol, " ", aws.ToInt32(tg.Port), " ", tg.TargetType, " ",
		tg.HealthCheckProtocol, " ", aws.ToString(tg.HealthCheckPort), " ", tg.LoadBalancerArns, " ", aws.ToString(tg.VpcId))
	if want := fmt.Sprint("k8s-default-web-0123456789 TCP 30080 instance TCP traffic-port [", lbArn, "] ", demoVPC); got != want {
		t.Errorf("target group:\n got %s\nwant %s", got, want)
	}
	if !strings.HasPrefix(aws.ToString(tg.TargetGroupArn), "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/k8s-default-web-0123456789/") {
		t.Errorf("target group ARN %s", aws.ToString(tg.TargetGroupArn))
	}
	byName, err := client.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{Names: []string{"k8s-default-web-0123456789"}})
	if err != nil || len(byName.TargetGroups) != 1 {
		t.Fatalf("target group by name: %v", err)
	}

	ls, err := client.DescribeListeners(ctx, &elbv2.DescribeListenersInput{LoadBalancerArn: aws.String(lbArn)})
	if err != nil || len(ls.Listeners) != 1 {
		t.Fatalf("listeners: %v %+v", err, ls)
	}
	l := ls.Listeners[0]
	if l.Protocol != elbv2types.ProtocolEnumTcp || aws.ToInt32(l.Port) != 80 || len(l.DefaultActions) != 1 ||
		l.DefaultActions[0].Type != elbv2types.ActionTypeEnumForward || aws.ToString(l.DefaultActions[0].TargetGroupArn) != aws.ToString(tg.TargetGroupArn) ||
		!strings.HasPrefix(aws.ToString(l.ListenerArn), "arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/net/"+webNLB.Name+"/") {
		t.Errorf("listener %+v", l)
	}

	tags, err := client.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: []string{lbArn, aws.ToString(tg.TargetGroupArn), aws.ToString(l.ListenerArn)}})
	if err != nil || len(tags.TagDescriptions) != 3 {
		t.Fatalf("tags: %v %+v", err, tags)
	}
	var kv []string
	for _, d := range tags.TagDescriptions {
		for _, tag := range d.Tags {
			kv = append(kv, aws.ToString(tag.Key)+"="+aws.ToString(tag.Value))
		}
		kv = append(kv, "|")
	}
	if want := "[kubernetes.io/cluster/demo=owned kubernetes.io/service-name=default/web | kubernetes.io/service-name=default/web | |]"; fmt.Sprint(kv) != want {
		t.Errorf("tags %v, want %s", kv, want)
	}
}

// TestClassicAndV2ShareTheSigningName checks that the Version parameter
// routes the two APIs: a Classic and a Network load balancer with the same
// name are each seen by their own API only, and counted apart.
func TestClassicAndV2ShareTheSigningName(t *testing.T) {
	s, url := start(t, v2Fixture(t, 0, LoadBalancer{Name: "same"}, LoadBalancer{Name: "same", Type: LBTypeNetwork}, LoadBalancer{Name: "only-classic"}))
	ctx := context.Background()
	c, err := elbClient(t, url).DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{})
	if err != nil || len(c.LoadBalancerDescriptions) != 2 {
		t.Fatalf("classic: %v", err)
	}
	v, err := elbv2Client(t, url).DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{})
	if err != nil || len(v.LoadBalancers) != 1 || v.LoadBalancers[0].Type != elbv2types.LoadBalancerTypeEnumNetwork {
		t.Fatalf("v2: %v", err)
	}
	if aws.ToString(c.LoadBalancerDescriptions[0].DNSName) == aws.ToString(v.LoadBalancers[0].DNSName) {
		t.Error("the Classic and the Network load balancer share a DNS name")
	}
	_, err = elbv2Client(t, url).DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{Names: []string{"only-classic"}})
	var nf *elbv2types.LoadBalancerNotFoundException
	if !errors.As(err, &nf) {
		t.Fatalf("v2 saw a Classic load balancer: %v", err)
	}
	if got := s.CallCounts(); got["elasticloadbalancing:DescribeLoadBalancers"] != 1 || got["elasticloadbalancingv2:DescribeLoadBalancers"] != 2 {
		t.Fatalf("calls %v", got)
	}
	// A fault for one API leaves the other alone.
	s.InjectFault(Fault{Service: "elasticloadbalancingv2", Code: "AccessDenied", HTTPStatus: 403})
	if _, err := elbClient(t, url).DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{}); err != nil {
		t.Fatalf("classic under a v2 fault: %v", err)
	}
	_, err = elbv2Client(t, url).DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{})
	wantCode(t, err, "AccessDenied")
}
