package awsemu

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
)

func createNLB(t *testing.T, client *elbv2.Client, in *elbv2.CreateLoadBalancerInput) elbv2types.LoadBalancer {
	t.Helper()
	in.Type = elbv2types.LoadBalancerTypeEnumNetwork
	if in.Subnets == nil && in.SubnetMappings == nil {
		in.Subnets = []string{demoSubnetA, demoSubnetB}
	}
	out, err := client.CreateLoadBalancer(context.Background(), in)
	if err != nil {
		t.Fatalf("CreateLoadBalancer %s: %v", aws.ToString(in.Name), err)
	}
	return out.LoadBalancers[0]
}

func createTG(t *testing.T, client *elbv2.Client, name string, port int32) elbv2types.TargetGroup {
	t.Helper()
	out, err := client.CreateTargetGroup(context.Background(), &elbv2.CreateTargetGroupInput{
		Name: aws.String(name), Protocol: elbv2types.ProtocolEnumTcp, Port: aws.Int32(port), VpcId: aws.String(demoVPC),
		TargetType: elbv2types.TargetTypeEnumInstance, HealthCheckProtocol: elbv2types.ProtocolEnumTcp,
		HealthCheckIntervalSeconds: aws.Int32(30), HealthyThresholdCount: aws.Int32(3), UnhealthyThresholdCount: aws.Int32(3),
		Tags: []elbv2types.Tag{{Key: aws.String("kubernetes.io/cluster/demo"), Value: aws.String("owned")}},
	})
	if err != nil {
		t.Fatalf("CreateTargetGroup %s: %v", name, err)
	}
	return out.TargetGroups[0]
}

func forward(tgArn string) []elbv2types.Action {
	return []elbv2types.Action{{Type: elbv2types.ActionTypeEnumForward, TargetGroupArn: aws.String(tgArn)}}
}

// TestNLBLifecycle is what the CCM does for an NLB Service.
func TestNLBLifecycle(t *testing.T) {
	s, url := demo(t)
	client := elbv2Client(t, url)
	ctx := context.Background()
	lb := createNLB(t, client, &elbv2.CreateLoadBalancerInput{Name: aws.String(lbName),
		Tags: []elbv2types.Tag{{Key: aws.String("kubernetes.io/service-name"), Value: aws.String("default/web")}}})
	lbArn := aws.ToString(lb.LoadBalancerArn)
	if !regexp.MustCompile(`^arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/net/`+lbName+`/[0-9a-f]{16}$`).MatchString(lbArn) ||
		!regexp.MustCompile(`^`+lbName+`-[0-9a-f]{16}\.elb\.us-east-1\.amazonaws\.com$`).MatchString(aws.ToString(lb.DNSName)) ||
		lb.Type != elbv2types.LoadBalancerTypeEnumNetwork || lb.Scheme != elbv2types.LoadBalancerSchemeEnumInternetFacing ||
		aws.ToString(lb.VpcId) != demoVPC || len(lb.AvailabilityZones) != 2 || lb.State.Code != elbv2types.LoadBalancerStateEnumActive {
		t.Errorf("created load balancer = %+v", lb)
	}
	tg := createTG(t, client, "k8s-default-web-0123456789", 30080)
	tgArn := aws.ToString(tg.TargetGroupArn)
	if !regexp.MustCompile(`^arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/k8s-default-web-0123456789/[0-9a-f]{16}$`).MatchString(tgArn) ||
		aws.ToInt32(tg.HealthyThresholdCount) != 3 || tg.HealthCheckProtocol != elbv2types.ProtocolEnumTcp || aws.ToString(tg.HealthCheckPort) != "traffic-port" {
		t.Errorf("created target group = %+v", tg)
	}
	lis, err := client.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: aws.String(lbArn), Protocol: elbv2types.ProtocolEnumTcp,
		Port: aws.Int32(80), DefaultActions: forward(tgArn)})
	if err != nil {
		t.Fatal(err)
	}
	lisArn := aws.ToString(lis.Listeners[0].ListenerArn)
	// AWS registers running instances only; a registered instance that
	// stops stays, "unused".
	_, err = client.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: aws.String(tgArn),
		Targets: []elbv2types.TargetDescription{{Id: aws.String("i-0a1b2c3d4e5f60004")}}})
	if code := apiCode(err); code != "InvalidTarget" {
		t.Errorf("registering a stopped instance: %v, want InvalidTarget", err)
	}
	if err := s.SetInstanceState("i-0a1b2c3d4e5f60004", "running"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: aws.String(tgArn),
		Targets: []elbv2types.TargetDescription{{Id: aws.String(demoA)}, {Id: aws.String(demoB)}, {Id: aws.String("i-0a1b2c3d4e5f60004")}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetInstanceState("i-0a1b2c3d4e5f60004", "stopped"); err != nil {
		t.Fatal(err)
	}
	health, err := client.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(tgArn)})
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, d := range health.TargetHealthDescriptions {
		states = append(states, fmt.Sprintf("%s:%d=%s", aws.ToString(d.Target.Id), aws.ToInt32(d.Target.Port), d.TargetHealth.State))
	}
	if want := fmt.Sprint([]string{demoA + ":30080=healthy", demoB + ":30080=healthy", "i-0a1b2c3d4e5f60004:30080=unused"}); fmt.Sprint(states) != want {
		t.Errorf("target health = %v, want %v", states, want)
	}
	if _, err := client.DeregisterTargets(ctx, &elbv2.DeregisterTargetsInput{TargetGroupArn: aws.String(tgArn),
		Targets: []elbv2types.TargetDescription{{Id: aws.String("i-0a1b2c3d4e5f60004")}}}); err != nil {
		t.Fatal(err)
	}
	tgs, err := client.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{LoadBalancerArn: aws.String(lbArn)})
	if err != nil || len(tgs.TargetGroups) != 1 || tgs.TargetGroups[0].LoadBalancerArns[0] != lbArn {
		t.Fatalf("target groups of the LB: %v %+v", err, tgs)
	}

	// Attributes.
	if _, err := client.ModifyLoadBalancerAttributes(ctx, &elbv2.ModifyLoadBalancerAttributesInput{LoadBalancerArn: aws.String(lbArn),
		Attributes: []elbv2types.LoadBalancerAttribute{{Key: aws.String("load_balancing.cross_zone.enabled"), Value: aws.String("true")}}}); err != nil {
		t.Fatal(err)
	}
	lbAttrs, err := client.DescribeLoadBalancerAttributes(ctx, &elbv2.DescribeLoadBalancerAttributesInput{LoadBalancerArn: aws.String(lbArn)})
	if err != nil || attr(lbAttrs.Attributes, "load_balancing.cross_zone.enabled") != "true" || attr(lbAttrs.Attributes, "deletion_protection.enabled") != "false" {
		t.Fatalf("LB attributes: %v %+v", err, lbAttrs)
	}
	if _, err := client.ModifyTargetGroupAttributes(ctx, &elbv2.ModifyTargetGroupAttributesInput{TargetGroupArn: aws.String(tgArn),
		Attributes: []elbv2types.TargetGroupAttribute{{Key: aws.String("proxy_protocol_v2.enabled"), Value: aws.String("true")}}}); err != nil {
		t.Fatal(err)
	}
	tgAttrs, err := client.DescribeTargetGroupAttributes(ctx, &elbv2.DescribeTargetGroupAttributesInput{TargetGroupArn: aws.String(tgArn)})
	if err != nil || tgAttr(tgAttrs.Attributes, "proxy_protocol_v2.enabled") != "true" || tgAttr(tgAttrs.Attributes, "preserve_client_ip.enabled") != "true" {
		t.Fatalf("TG attributes: %v %+v", err, tgAttrs)
	}
	_, err = client.ModifyTargetGroupAttributes(ctx, &elbv2.ModifyTargetGroupAttributesInput{TargetGroupArn: aws.String(tgArn),
		Attributes: []elbv2types.TargetGroupAttribute{{Key: aws.String("nope"), Value: aws.String("1")}}})
	wantErrAs[*elbv2types.InvalidConfigurationRequestException](t, err)

	// Health check change and listener re-pointing, as the CCM does when
	// the health check protocol changes.
	mod, err := client.ModifyTargetGroup(ctx, &elbv2.ModifyTargetGroupInput{TargetGroupArn: aws.String(tgArn), HealthCheckProtocol: elbv2types.ProtocolEnumHttp,
		HealthCheckPort: aws.String("10256"), HealthCheckPath: aws.String("/healthz"), HealthCheckIntervalSeconds: aws.Int32(10),
		HealthyThresholdCount: aws.Int32(2), UnhealthyThresholdCount: aws.Int32(2)})
	if err != nil {
		t.Fatal(err)
	}
	m := mod.TargetGroups[0]
	if m.HealthCheckProtocol != elbv2types.ProtocolEnumHttp || aws.ToString(m.HealthCheckPath) != "/healthz" || aws.ToString(m.HealthCheckPort) != "10256" ||
		aws.ToInt32(m.HealthCheckIntervalSeconds) != 10 || aws.ToInt32(m.HealthyThresholdCount) != 2 {
		t.Errorf("modified target group = %+v", m)
	}
	tg2 := createTG(t, client, "k8s-default-web-abcdef0123", 30081)
	tg2Arn := aws.ToString(tg2.TargetGroupArn)
	ml, err := client.ModifyListener(ctx, &elbv2.ModifyListenerInput{ListenerArn: aws.String(lisArn), DefaultActions: forward(tg2Arn)})
	if err != nil || aws.ToString(ml.Listeners[0].DefaultActions[0].TargetGroupArn) != tg2Arn {
		t.Fatalf("ModifyListener: %v %+v", err, ml)
	}
	if _, err := client.DeleteTargetGroup(ctx, &elbv2.DeleteTargetGroupInput{TargetGroupArn: aws.String(tgArn)}); err != nil {
		t.Fatalf("deleting the target group no listener uses: %v", err)
	}
	_, err = client.DeleteTargetGroup(ctx, &elbv2.DeleteTargetGroupInput{TargetGroupArn: aws.String(tg2Arn)})
	wantErrAs[*elbv2types.ResourceInUseException](t, err)

	// Tags on all three resource types.
	if _, err := client.AddTags(ctx, &elbv2.AddTagsInput{ResourceArns: []string{lbArn, tg2Arn, lisArn},
		Tags: []elbv2types.Tag{{Key: aws.String("x"), Value: aws.String("1")}, {Key: aws.String("y"), Value: aws.String("2")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RemoveTags(ctx, &elbv2.RemoveTagsInput{ResourceArns: []string{lbArn, tg2Arn}, TagKeys: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	tags, err := client.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: []string{lbArn, tg2Arn, lisArn}})
	if err != nil || len(tags.TagDescriptions) != 3 || len(tags.TagDescriptions[0].Tags) != 2 || len(tags.TagDescriptions[1].Tags) != 2 || len(tags.TagDescriptions[2].Tags) != 2 {
		t.Fatalf("tags: %v %+v", err, tags)
	}

	// Teardown: deleting the LB deletes its listeners; target groups stay.
	if _, err := client.DeleteLoadBalancer(ctx, &elbv2.DeleteLoadBalancerInput{LoadBalancerArn: aws.String(lbArn)}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.DeleteLoadBalancer(ctx, &elbv2.DeleteLoadBalancerInput{LoadBalancerArn: aws.String(lbArn)}); err != nil {
		t.Fatalf("second DeleteLoadBalancer: %v", err)
	}
	_, err = client.DescribeListeners(ctx, &elbv2.DescribeListenersInput{ListenerArns: []string{lisArn}})
	wantErrAs[*elbv2types.ListenerNotFoundException](t, err)
	left, err := client.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{})
	if err != nil || len(left.TargetGroups) != 1 || len(left.TargetGroups[0].LoadBalancerArns) != 0 {
		t.Fatalf("target groups after LB deletion: %v %+v", err, left)
	}
	if _, err := client.DeleteTargetGroup(ctx, &elbv2.DeleteTargetGroupInput{TargetGroupArn: aws.String(tg2Arn)}); err != nil {
		t.Fatal(err)
	}
	lbs, err := client.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{})
	if err != nil || len(lbs.LoadBalancers) != 0 {
		t.Errorf("load balancers left: %v %+v", err, lbs)
	}
	if n := s.Calls("elasticloadbalancingv2", "CreateTargetGroup"); n != 2 {
		t.Errorf("CreateTargetGroup calls = %d, want 2", n)
	}
}

func attr(as []elbv2types.LoadBalancerAttribute, key string) string {
	for _, a := range as {
		if aws.ToString(a.Key) == key {
			return aws.ToString(a.Value)
		}
	}
	return "<missing>"
}

func tgAttr(as []elbv2types.TargetGroupAttribute, key string) string {
	for _, a := range as {
		if aws.ToString(a.Key) == key {
			return aws.ToString(a.Value)
		}
	}
	return "<missing>"
}

func TestNLBErrors(t *testing.T) {
	_, url := demo(t)
	client := elbv2Client(t, url)
	ctx := context.Background()
	lb := createNLB(t, client, &elbv2.CreateLoadBalancerInput{Name: aws.String("web")})
	lbArn := lb.LoadBalancerArn
	tg := createTG(t, client, "tg", 30080)
	udp, err := client.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String("udp"), Protocol: elbv2types.ProtocolEnumUdp,
		Port: aws.Int32(30053), VpcId: aws.String(demoVPC)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: lbArn, Protocol: elbv2types.ProtocolEnumTcp,
		Port: aws.Int32(80), DefaultActions: forward(aws.ToString(tg.TargetGroupArn))}); err != nil {
		t.Fatal(err)
	}

	// Identical creates succeed and return the existing resource.
	again := createNLB(t, client, &elbv2.CreateLoadBalancerInput{Name: aws.String("web")})
	if aws.ToString(again.LoadBalancerArn) != aws.ToString(lbArn) {
		t.Errorf("idempotent create returned %s, want %s", aws.ToString(again.LoadBalancerArn), aws.ToString(lbArn))
	}
	if again := createTG(t, client, "tg", 30080); aws.ToString(again.TargetGroupArn) != aws.ToString(tg.TargetGroupArn) {
		t.Errorf("idempotent CreateTargetGroup returned a new ARN")
	}

	cases := []struct {
		name string
		call func() error
		want func(*testing.T, error)
	}{
		{"duplicate LB name, other settings", func() error {
			_, err := client.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("web"), Type: elbv2types.LoadBalancerTypeEnumNetwork,
				Scheme: elbv2types.LoadBalancerSchemeEnumInternal, Subnets: []string{demoSubnetC}})
			return err
		}, wantErrAs[*elbv2types.DuplicateLoadBalancerNameException]},
		{"unknown subnet", func() error {
			_, err := client.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("x"), Type: elbv2types.LoadBalancerTypeEnumNetwork, Subnets: []string{"subnet-0nope"}})
			return err
		}, wantErrAs[*elbv2types.SubnetNotFoundException]},
		{"EIP on an internal LB", func() error {
			_, err := client.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("x"), Type: elbv2types.LoadBalancerTypeEnumNetwork,
				Scheme: elbv2types.LoadBalancerSchemeEnumInternal, SubnetMappings: []elbv2types.SubnetMapping{{SubnetId: aws.String(demoSubnetA), AllocationId: aws.String("eipalloc-1")}}})
			return err
		}, wantErrAs[*elbv2types.InvalidConfigurationRequestException]},
		{"private IP outside the subnet", func() error {
			_, err := client.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("x"), Type: elbv2types.LoadBalancerTypeEnumNetwork,
				Scheme: elbv2types.LoadBalancerSchemeEnumInternal, SubnetMappings: []elbv2types.SubnetMapping{{SubnetId: aws.String(demoSubnetA), PrivateIPv4Address: aws.String("10.0.2.10")}}})
			return err
		}, wantErrAs[*elbv2types.InvalidConfigurationRequestException]},
		{"duplicate target group name, other settings", func() error {
			_, err := client.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String("tg"), Protocol: elbv2types.ProtocolEnumTcp, Port: aws.Int32(1), VpcId: aws.String(demoVPC)})
			return err
		}, wantErrAs[*elbv2types.DuplicateTargetGroupNameException]},
		{"target group name over 32 characters", func() error {
			_, err := client.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String("k8s-0123456789-0123456789-0123456"), Protocol: elbv2types.ProtocolEnumTcp, Port: aws.Int32(1), VpcId: aws.String(demoVPC)})
			return err
		}, func(t *testing.T, err error) { wantCode(t, err, "ValidationError") }},
		{"duplicate listener port", func() error {
			_, err := client.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: lbArn, Protocol: elbv2types.ProtocolEnumUdp, Port: aws.Int32(80),
				DefaultActions: forward(aws.ToString(udp.TargetGroups[0].TargetGroupArn))})
			return err
		}, wantErrAs[*elbv2types.DuplicateListenerException]},
		{"incompatible protocols", func() error {
			_, err := client.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: lbArn, Protocol: elbv2types.ProtocolEnumTcp, Port: aws.Int32(53),
				DefaultActions: forward(aws.ToString(udp.TargetGroups[0].TargetGroupArn))})
			return err
		}, wantErrAs[*elbv2types.IncompatibleProtocolsException]},
		{"unknown target group", func() error {
			_, err := client.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: lbArn, Protocol: elbv2types.ProtocolEnumTcp, Port: aws.Int32(81),
				DefaultActions: forward("arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/nope/0000000000000000")})
			return err
		}, wantErrAs[*elbv2types.TargetGroupNotFoundException]},
		{"unknown load balancer", func() error {
			_, err := client.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: aws.String("arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/net/nope/0000000000000000"),
				Protocol: elbv2types.ProtocolEnumTcp, Port: aws.Int32(81), DefaultActions: forward(aws.ToString(tg.TargetGroupArn))})
			return err
		}, wantErrAs[*elbv2types.LoadBalancerNotFoundException]},
		{"unknown target instance", func() error {
			_, err := client.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: tg.TargetGroupArn, Targets: []elbv2types.TargetDescription{{Id: aws.String("i-0nope")}}})
			return err
		}, wantErrAs[*elbv2types.InvalidTargetException]},
		{"delete unknown listener", func() error {
			_, err := client.DeleteListener(ctx, &elbv2.DeleteListenerInput{ListenerArn: aws.String("arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/net/web/0000000000000000/0000000000000000")})
			return err
		}, wantErrAs[*elbv2types.ListenerNotFoundException]},
		{"UDP target group keeps client IPs", func() error {
			_, err := client.ModifyTargetGroupAttributes(ctx, &elbv2.ModifyTargetGroupAttributesInput{TargetGroupArn: udp.TargetGroups[0].TargetGroupArn,
				Attributes: []elbv2types.TargetGroupAttribute{{Key: aws.String("preserve_client_ip.enabled"), Value: aws.String("false")}}})
			return err
		}, wantErrAs[*elbv2types.InvalidConfigurationRequestException]},
		{"deletion protection", func() error {
			if _, err := client.ModifyLoadBalancerAttributes(ctx, &elbv2.ModifyLoadBalancerAttributesInput{LoadBalancerArn: lbArn,
				Attributes: []elbv2types.LoadBalancerAttribute{{Key: aws.String("deletion_protection.enabled"), Value: aws.String("true")}}}); err != nil {
				return err
			}
			_, err := client.DeleteLoadBalancer(ctx, &elbv2.DeleteLoadBalancerInput{LoadBalancerArn: lbArn})
			return err
		}, wantErrAs[*elbv2types.OperationNotPermittedException]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.want(t, tc.call()) })
	}
}

func TestNLBSubnetMappingsAndSecurityGroups(t *testing.T) {
	_, url := demo(t)
	client, ec2c := elbv2Client(t, url), ec2Client(t, url)
	ctx := context.Background()
	sg := createSG(t, ec2c, "k8s-default-web-0123456789")
	lb := createNLB(t, client, &elbv2.CreateLoadBalancerInput{Name: aws.String("private"), Scheme: elbv2types.LoadBalancerSchemeEnumInternal,
		SecurityGroups: []string{sg},
		SubnetMappings: []elbv2types.SubnetMapping{{SubnetId: aws.String(demoSubnetA), PrivateIPv4Address: aws.String("10.0.1.200")},
			{SubnetId: aws.String(demoSubnetC), PrivateIPv4Address: aws.String("10.0.3.200")}}})
	out, err := client.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{Names: []string{"private"}})
	if err != nil {
		t.Fatal(err)
	}
	d := out.LoadBalancers[0]
	if len(d.AvailabilityZones) != 2 || aws.ToString(d.AvailabilityZones[1].LoadBalancerAddresses[0].PrivateIPv4Address) != "10.0.3.200" ||
		aws.ToString(d.AvailabilityZones[1].ZoneName) != "us-east-1c" || len(d.SecurityGroups) != 1 || d.Scheme != elbv2types.LoadBalancerSchemeEnumInternal {
		t.Errorf("described = %+v", d)
	}
	_, err = ec2c.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(sg)})
	wantCode(t, err, "DependencyViolation")
	if _, err := client.DeleteLoadBalancer(ctx, &elbv2.DeleteLoadBalancerInput{LoadBalancerArn: lb.LoadBalancerArn}); err != nil {
		t.Fatal(err)
	}
	if _, err := ec2c.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(sg)}); err != nil {
		t.Fatal(err)
	}
	eip := createNLB(t, client, &elbv2.CreateLoadBalancerInput{Name: aws.String("public"),
		SubnetMappings: []elbv2types.SubnetMapping{{SubnetId: aws.String(demoSubnetA), AllocationId: aws.String("eipalloc-0123")}}})
	if aws.ToString(eip.AvailabilityZones[0].LoadBalancerAddresses[0].AllocationId) != "eipalloc-0123" {
		t.Errorf("EIP mapping: %+v", eip.AvailabilityZones)
	}
}

func TestNLBChinaPartition(t *testing.T) {
	_, url := start(t, chinaFixture())
	client := elbv2Client(t, url)
	lb := createNLB(t, client, &elbv2.CreateLoadBalancerInput{Name: aws.String("web"), Subnets: []string{"subnet-0cna"}})
	if !regexp.MustCompile(`^arn:aws-cn:elasticloadbalancing:cn-north-1:123456789012:loadbalancer/net/web/[0-9a-f]{16}$`).MatchString(aws.ToString(lb.LoadBalancerArn)) ||
		!regexp.MustCompile(`^web-[0-9a-f]{16}\.elb\.cn-north-1\.amazonaws\.com\.cn$`).MatchString(aws.ToString(lb.DNSName)) {
		t.Errorf("ARN %s, DNS %s", aws.ToString(lb.LoadBalancerArn), aws.ToString(lb.DNSName))
	}
}

// TestLBMutationFaults shows that fault injection and call accounting
// select the new actions by service and action name, and that Classic and
// ELBv2 actions of the same name are told apart.
func TestLBMutationFaults(t *testing.T) {
	s, url := demo(t)
	v2, classic := elbv2Client(t, url), elbClient(t, url)
	ctx := context.Background()
	s.InjectFault(Fault{Service: "elasticloadbalancingv2", Action: "CreateTargetGroup", Code: "Throttling", Remaining: 1})
	createTG(t, v2, "tg", 30080) // the SDK retries the throttled call
	if n := s.Calls("elasticloadbalancingv2", "CreateTargetGroup"); n != 2 {
		t.Errorf("CreateTargetGroup calls = %d, want 2 (throttled + retried)", n)
	}
	s.InjectFault(Fault{Service: "elasticloadbalancing", Action: "CreateLoadBalancer", HTTPStatus: 500})
	_, err := classic.CreateLoadBalancer(ctx, &elb.CreateLoadBalancerInput{LoadBalancerName: aws.String("web"), Subnets: []string{demoSubnetA},
		Listeners: []elbtypes.Listener{{Protocol: aws.String("TCP"), LoadBalancerPort: 80, InstancePort: aws.Int32(30080)}}})
	wantCode(t, err, "InternalError")
	createNLB(t, v2, &elbv2.CreateLoadBalancerInput{Name: aws.String("web")}) // not selected by the Classic fault
	if c, n := s.Calls("elasticloadbalancing", "CreateLoadBalancer"), s.Calls("elasticloadbalancingv2", "CreateLoadBalancer"); c != 3 || n != 1 {
		t.Errorf("CreateLoadBalancer calls: classic %d (want 3 attempts), v2 %d (want 1)", c, n)
	}
	s.ClearFaults()
	s.InjectFault(Fault{Service: "ec2", Action: "AuthorizeSecurityGroupIngress", Code: "RequestLimitExceeded", HTTPStatus: 503, Remaining: 2})
	ec2c := ec2Client(t, url)
	if _, err := ec2c.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(demoNodeSG),
		IpPermissions: []ec2types.IpPermission{tcpFrom(30080, "0.0.0.0/0", "")}}); err != nil {
		t.Fatalf("AuthorizeSecurityGroupIngress after two throttles: %v", err)
	}
	if n := s.Calls("ec2", "AuthorizeSecurityGroupIngress"); n != 3 {
		t.Errorf("AuthorizeSecurityGroupIngress calls = %d, want 3", n)
	}
}
