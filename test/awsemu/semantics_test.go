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

// AWS semantics the load-balancer reconciler relies on, checked against
// the API references (see the comments for what AWS documents).

func tgInput(name string, mod func(*elbv2.CreateTargetGroupInput)) *elbv2.CreateTargetGroupInput {
	in := &elbv2.CreateTargetGroupInput{Name: aws.String(name), Protocol: elbv2types.ProtocolEnumTcp, Port: aws.Int32(30080),
		VpcId: aws.String(demoVPC), TargetType: elbv2types.TargetTypeEnumInstance}
	if mod != nil {
		mod(in)
	}
	return in
}

func TestTargetGroupCreateIsIdempotent(t *testing.T) {
	_, url := demo(t)
	client := elbv2Client(t, url)
	ctx := context.Background()
	first, err := client.CreateTargetGroup(ctx, tgInput("tg", func(in *elbv2.CreateTargetGroupInput) { in.HealthCheckTimeoutSeconds = aws.Int32(7) }))
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(first.TargetGroups[0].TargetGroupArn)
	again, err := client.CreateTargetGroup(ctx, tgInput("tg", func(in *elbv2.CreateTargetGroupInput) { in.HealthCheckTimeoutSeconds = aws.Int32(7) }))
	if err != nil || aws.ToString(again.TargetGroups[0].TargetGroupArn) != arn {
		t.Fatalf("identical create = %v, %v; want the existing group %s", again, err, arn)
	}
	// An explicit default is the same setting as an omitted one.
	if _, err := client.CreateTargetGroup(ctx, tgInput("tg", func(in *elbv2.CreateTargetGroupInput) {
		in.HealthCheckTimeoutSeconds, in.HealthyThresholdCount, in.HealthCheckPort = aws.Int32(7), aws.Int32(5), aws.String("traffic-port")
	})); err != nil {
		t.Fatalf("create with explicit defaults: %v", err)
	}
	for name, mod := range map[string]func(*elbv2.CreateTargetGroupInput){
		"port":      func(in *elbv2.CreateTargetGroupInput) { in.Port = aws.Int32(30081) },
		"timeout":   func(in *elbv2.CreateTargetGroupInput) { in.HealthCheckTimeoutSeconds = aws.Int32(8) },
		"threshold": func(in *elbv2.CreateTargetGroupInput) { in.HealthyThresholdCount = aws.Int32(2) },
		"hc-proto": func(in *elbv2.CreateTargetGroupInput) {
			in.HealthCheckProtocol, in.HealthCheckTimeoutSeconds = elbv2types.ProtocolEnumHttp, aws.Int32(7)
		},
	} {
		_, err := client.CreateTargetGroup(ctx, tgInput("tg", func(in *elbv2.CreateTargetGroupInput) {
			in.HealthCheckTimeoutSeconds = aws.Int32(7)
			mod(in)
		}))
		if wantCode(t, err, "DuplicateTargetGroupName"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestTargetGroupHealthCheckTimeout(t *testing.T) {
	_, url := demo(t)
	client := elbv2Client(t, url)
	ctx := context.Background()
	// AWS: 6 seconds for HTTP health checks, 10 for TCP and HTTPS ones.
	for i, c := range []struct {
		proto elbv2types.ProtocolEnum
		want  int32
	}{{"", 10}, {elbv2types.ProtocolEnumTcp, 10}, {elbv2types.ProtocolEnumHttp, 6}, {elbv2types.ProtocolEnumHttps, 10}} {
		out, err := client.CreateTargetGroup(ctx, tgInput(fmt.Sprintf("tg-%d", i), func(in *elbv2.CreateTargetGroupInput) { in.HealthCheckProtocol = c.proto }))
		if err != nil {
			t.Fatal(err)
		}
		if got := aws.ToInt32(out.TargetGroups[0].HealthCheckTimeoutSeconds); got != c.want {
			t.Errorf("%q health check: default timeout %d, want %d", c.proto, got, c.want)
		}
	}
	out, err := client.CreateTargetGroup(ctx, tgInput("set", func(in *elbv2.CreateTargetGroupInput) { in.HealthCheckTimeoutSeconds = aws.Int32(12) }))
	if err != nil {
		t.Fatal(err)
	}
	arn := out.TargetGroups[0].TargetGroupArn
	describe := func() int32 {
		t.Helper()
		d, err := client.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{TargetGroupArns: []string{aws.ToString(arn)}})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToInt32(d.TargetGroups[0].HealthCheckTimeoutSeconds)
	}
	if got := describe(); got != 12 {
		t.Errorf("described timeout %d, want 12", got)
	}
	if _, err := client.ModifyTargetGroup(ctx, &elbv2.ModifyTargetGroupInput{TargetGroupArn: arn, HealthCheckTimeoutSeconds: aws.Int32(3)}); err != nil {
		t.Fatal(err)
	}
	if got := describe(); got != 3 {
		t.Errorf("timeout after ModifyTargetGroup %d, want 3", got)
	}
}

func TestTargetGroupDescribeAndDelete(t *testing.T) {
	_, url := demo(t)
	client := elbv2Client(t, url)
	ctx := context.Background()
	lb := createNLB(t, client, &elbv2.CreateLoadBalancerInput{Name: aws.String("nlb")})
	lbArn := lb.LoadBalancerArn
	used, spare := createTG(t, client, "used", 30080), createTG(t, client, "spare", 30081)
	lis, err := client.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: lbArn, Protocol: elbv2types.ProtocolEnumTcp,
		Port: aws.Int32(80), DefaultActions: forward(aws.ToString(used.TargetGroupArn))})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{Names: []string{"used", "nope"}})
	wantErrAs[*elbv2types.TargetGroupNotFoundException](t, err)
	byLB, err := client.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{LoadBalancerArn: lbArn})
	if err != nil || len(byLB.TargetGroups) != 1 || aws.ToString(byLB.TargetGroups[0].TargetGroupName) != "used" {
		t.Fatalf("DescribeTargetGroups(LoadBalancerArn) = %+v, %v; want only the forwarded group", byLB, err)
	}

	_, err = client.DeleteTargetGroup(ctx, &elbv2.DeleteTargetGroupInput{TargetGroupArn: used.TargetGroupArn})
	wantErrAs[*elbv2types.ResourceInUseException](t, err)
	// DeleteTargetGroup documents ResourceInUse as its only error: an
	// unknown (or already deleted) group is not one.
	for range 2 {
		if _, err := client.DeleteTargetGroup(ctx, &elbv2.DeleteTargetGroupInput{TargetGroupArn: spare.TargetGroupArn}); err != nil {
			t.Fatalf("DeleteTargetGroup of an unused/unknown group: %v", err)
		}
	}
	if _, err := client.DeleteLoadBalancer(ctx, &elbv2.DeleteLoadBalancerInput{LoadBalancerArn: lbArn}); err != nil {
		t.Fatal(err)
	}
	_, err = client.DescribeListeners(ctx, &elbv2.DescribeListenersInput{ListenerArns: []string{aws.ToString(lis.Listeners[0].ListenerArn)}})
	wantErrAs[*elbv2types.ListenerNotFoundException](t, err)
	left, err := client.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{Names: []string{"used"}})
	if err != nil || len(left.TargetGroups[0].LoadBalancerArns) != 0 {
		t.Fatalf("target group after DeleteLoadBalancer = %+v, %v; want it kept and detached", left, err)
	}
	if _, err := client.DeleteTargetGroup(ctx, &elbv2.DeleteTargetGroupInput{TargetGroupArn: used.TargetGroupArn}); err != nil {
		t.Fatal(err)
	}
}

// TestFixtureTargetGroupWithoutListener: LoadBalancerArns come from
// listeners, for fixture groups too.
func TestFixtureTargetGroupWithoutListener(t *testing.T) {
	nlb := webNLB
	nlb.TargetGroups = append(nlb.TargetGroups, TargetGroup{Name: "unattached", Port: 30090})
	s, url := start(t, v2Fixture(t, 0, nlb))
	client := elbv2Client(t, url)
	lbArn := s.NetworkLoadBalancers()[0].ARN
	out, err := client.DescribeTargetGroups(context.Background(), &elbv2.DescribeTargetGroupsInput{LoadBalancerArn: aws.String(lbArn)})
	if err != nil || len(out.TargetGroups) != 1 || aws.ToString(out.TargetGroups[0].TargetGroupName) != "k8s-default-web-0123456789" {
		t.Fatalf("DescribeTargetGroups(LoadBalancerArn) = %+v, %v", out, err)
	}
	if tgs := s.TargetGroups(); len(tgs) != 2 || len(tgs[1].LoadBalancerARNs) != 0 {
		t.Errorf("TargetGroups() = %+v", tgs)
	}
}

func TestTargetHealthNeverRepeatsTargets(t *testing.T) {
	_, url := demo(t)
	client := elbv2Client(t, url)
	ctx := context.Background()
	tgArn := createTG(t, client, "tg", 30080).TargetGroupArn
	a, b := elbv2types.TargetDescription{Id: aws.String(demoA)}, elbv2types.TargetDescription{Id: aws.String(demoB)}
	for range 2 {
		if _, err := client.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: tgArn, Targets: []elbv2types.TargetDescription{a, a, b}}); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(in *elbv2.DescribeTargetHealthInput) []string {
		t.Helper()
		out, err := client.DescribeTargetHealth(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range out.TargetHealthDescriptions {
			got = append(got, aws.ToString(d.Target.Id)+"="+string(d.TargetHealth.State))
		}
		return got
	}
	if got := fmt.Sprint(ids(&elbv2.DescribeTargetHealthInput{TargetGroupArn: tgArn})); got != "["+demoA+"=unused "+demoB+"=unused]" {
		t.Errorf("all targets: %s", got)
	}
	if got := fmt.Sprint(ids(&elbv2.DescribeTargetHealthInput{TargetGroupArn: tgArn, Targets: []elbv2types.TargetDescription{b, b}})); got != "["+demoB+"=unused]" {
		t.Errorf("a target asked for twice: %s", got)
	}
	if _, err := client.DeregisterTargets(ctx, &elbv2.DeregisterTargetsInput{TargetGroupArn: tgArn, Targets: []elbv2types.TargetDescription{a}}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(ids(&elbv2.DescribeTargetHealthInput{TargetGroupArn: tgArn})); got != "["+demoB+"=unused]" {
		t.Errorf("after deregistering %s: %s", demoA, got)
	}
}

func TestSecurityGroupSemantics(t *testing.T) {
	f, err := LoadFixture("testdata/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f.VPCs = append(f.VPCs, VPC{ID: "vpc-0default", CIDR: "172.31.0.0/16", IsDefault: true})
	_, url := start(t, f)
	client := ec2Client(t, url)
	ctx := context.Background()
	elbID := createSG(t, client, "k8s-elb-web")
	tagged, err := client.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("k8s-elb-tagged"), Description: aws.String("d"),
		VpcId: aws.String(demoVPC), TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeSecurityGroup,
			Tags: []ec2types.Tag{{Key: aws.String("kubernetes.io/cluster/demo"), Value: aws.String("owned")}}}}})
	if err != nil {
		t.Fatal(err)
	}
	taggedID := aws.ToString(tagged.GroupId)
	_, err = client.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("k8s-elb-web"), Description: aws.String("d"), VpcId: aws.String(demoVPC)})
	wantCode(t, err, "InvalidGroup.Duplicate")

	fromELB := ec2types.IpPermission{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(30080), ToPort: aws.Int32(30080),
		UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String(elbID), Description: aws.String("from elb")}}}
	if _, err := client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(demoNodeSG),
		IpPermissions: []ec2types.IpPermission{fromELB}}); err != nil {
		t.Fatal(err)
	}
	_, err = client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(demoNodeSG), IpPermissions: []ec2types.IpPermission{fromELB}})
	wantCode(t, err, "InvalidPermission.Duplicate")
	if _, err := client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(elbID),
		IpPermissions: []ec2types.IpPermission{tcpFrom(80, "10.0.0.0/8", "clients")}}); err != nil {
		t.Fatal(err)
	}
	node := describeSG(t, client, demoNodeSG)
	found := false
	for _, p := range node.IpPermissions {
		for _, g := range p.UserIdGroupPairs {
			found = found || (aws.ToString(g.GroupId) == elbID && aws.ToString(g.Description) == "from elb")
		}
	}
	if r := describeSG(t, client, elbID).IpPermissions; !found || len(r) != 1 || aws.ToString(r[0].IpRanges[0].Description) != "clients" {
		t.Errorf("rule descriptions did not round-trip: node %+v, elb %+v", node.IpPermissions, r)
	}

	names := func(fs ...string) string {
		t.Helper()
		out, err := client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: filters(fs...)})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, g := range out.SecurityGroups {
			got = append(got, aws.ToString(g.GroupName))
		}
		return fmt.Sprint(got)
	}
	for _, c := range []struct {
		filters []string
		want    string
	}{
		{[]string{"group-name", "k8s-elb-*", "vpc-id", demoVPC}, "[k8s-elb-web k8s-elb-tagged]"},
		{[]string{"group-id", taggedID}, "[k8s-elb-tagged]"},
		{[]string{"tag-key", "kubernetes.io/cluster/demo", "group-name", "k8s-*"}, "[k8s-elb-tagged]"},
		{[]string{"tag:kubernetes.io/cluster/demo", "owned", "group-name", "k8s-*"}, "[k8s-elb-tagged]"},
		{[]string{"ip-permission.group-id", elbID}, "[" + aws.ToString(node.GroupName) + "]"},
		{[]string{"ip-permission.cidr", "10.0.0.0/8"}, "[k8s-elb-web]"},
	} {
		if got := names(c.filters...); got != c.want {
			t.Errorf("filters %v: %s, want %s", c.filters, got, c.want)
		}
	}
	_, err = client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{elbID, "sg-0123456789abcdef0"}})
	wantCode(t, err, "InvalidGroup.NotFound")

	// Revoking a missing rule: InvalidPermission.NotFound outside the
	// default VPC; in the default VPC success with UnknownIpPermissions.
	_, err = client.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String(elbID),
		IpPermissions: []ec2types.IpPermission{tcpFrom(81, "10.0.0.0/8", "")}})
	wantCode(t, err, "InvalidPermission.NotFound")
	def, err := client.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("in-default"), Description: aws.String("d")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: def.GroupId,
		IpPermissions: []ec2types.IpPermission{tcpFrom(80, "10.0.0.0/8", "")}}); err != nil {
		t.Fatal(err)
	}
	rev, err := client.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: def.GroupId,
		IpPermissions: []ec2types.IpPermission{tcpFrom(80, "10.0.0.0/8", ""), tcpFrom(81, "10.0.0.0/8", "")}})
	if err != nil || !aws.ToBool(rev.Return) || len(rev.UnknownIpPermissions) != 1 || aws.ToInt32(rev.UnknownIpPermissions[0].FromPort) != 81 {
		t.Fatalf("revoke in the default VPC = %+v, %v", rev, err)
	}
	if left := describeSG(t, client, aws.ToString(def.GroupId)).IpPermissions; len(left) != 0 {
		t.Errorf("the matching rule was not revoked: %+v", left)
	}

	// DependencyViolation while another group's rule or a load balancer
	// uses the group; deleting the load balancer frees it.
	_, err = client.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(elbID)})
	wantCode(t, err, "DependencyViolation")
	if _, err := client.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String(demoNodeSG), IpPermissions: []ec2types.IpPermission{fromELB}}); err != nil {
		t.Fatal(err)
	}
	clb := elbClient(t, url)
	createCLB(t, clb, &elb.CreateLoadBalancerInput{LoadBalancerName: aws.String("web"), SecurityGroups: []string{elbID}})
	_, err = client.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(elbID)})
	wantCode(t, err, "DependencyViolation")
	if _, err := clb.DeleteLoadBalancer(ctx, &elb.DeleteLoadBalancerInput{LoadBalancerName: aws.String("web")}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(elbID)}); err != nil {
		t.Fatalf("DeleteSecurityGroup after DeleteLoadBalancer: %v", err)
	}
}

func TestClassicSemantics(t *testing.T) {
	_, url := demo(t)
	client := elbClient(t, url)
	ctx := context.Background()
	createCLB(t, client, &elb.CreateLoadBalancerInput{LoadBalancerName: aws.String("web"), SecurityGroups: []string{demoNodeSG},
		Subnets: []string{demoSubnetA, demoSubnetB}, Tags: []elbtypes.Tag{{Key: aws.String("k"), Value: aws.String("v")}}})
	policy := &elb.CreateLoadBalancerPolicyInput{LoadBalancerName: aws.String("web"), PolicyName: aws.String("pp"), PolicyTypeName: aws.String("ProxyProtocolPolicyType"),
		PolicyAttributes: []elbtypes.PolicyAttribute{{AttributeName: aws.String("ProxyProtocol"), AttributeValue: aws.String("true")}}}
	if _, err := client.CreateLoadBalancerPolicy(ctx, policy); err != nil {
		t.Fatal(err)
	}
	_, err := client.CreateLoadBalancerPolicy(ctx, policy)
	wantErrAs[*elbtypes.DuplicatePolicyNameException](t, err)
	if _, err := client.SetLoadBalancerPoliciesForBackendServer(ctx, &elb.SetLoadBalancerPoliciesForBackendServerInput{LoadBalancerName: aws.String("web"),
		InstancePort: aws.Int32(30080), PolicyNames: []string{"pp"}}); err != nil {
		t.Fatal(err)
	}
	d := describeCLB(t, client, "web")
	got := fmt.Sprint(len(d.ListenerDescriptions), " ", d.ListenerDescriptions[0].PolicyNames, " ", aws.ToInt32(d.BackendServerDescriptions[0].InstancePort), " ",
		d.BackendServerDescriptions[0].PolicyNames, " ", d.Policies.OtherPolicies, " ", aws.ToString(d.HealthCheck.Target), " ",
		aws.ToString(d.SourceSecurityGroup.GroupName), " ", d.SecurityGroups, " ", d.Subnets)
	want := "1 [] 30080 [pp] [pp] TCP:30080 " + aws.ToString(describeSG(t, ec2Client(t, url), demoNodeSG).GroupName) + " [" + demoNodeSG + "] [" + demoSubnetA + " " + demoSubnetB + "]"
	if got != want {
		t.Errorf("DescribeLoadBalancers:\n got %s\nwant %s", got, want)
	}
	if !regexp.MustCompile(`^web-\d{10}\.us-east-1\.elb\.amazonaws\.com$`).MatchString(aws.ToString(d.DNSName)) {
		t.Errorf("DNSName %q", aws.ToString(d.DNSName))
	}
	for range 2 { // the second delete is of an unknown name, which succeeds in AWS
		if _, err := client.DeleteLoadBalancer(ctx, &elb.DeleteLoadBalancerInput{LoadBalancerName: aws.String("web")}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSecurityGroupArnPartition(t *testing.T) {
	_, url := start(t, chinaFixture())
	client := ec2.NewFromConfig(sdkConfig(t), func(o *ec2.Options) {
		o.BaseEndpoint, o.HTTPClient, o.Region = aws.String(url), HTTPClient(), "cn-north-1"
	})
	out, err := client.CreateSecurityGroup(context.Background(), &ec2.CreateSecurityGroupInput{GroupName: aws.String("g"), Description: aws.String("d"), VpcId: aws.String("vpc-0cn")})
	if err != nil {
		t.Fatal(err)
	}
	if arn := aws.ToString(describeSG(t, client, aws.ToString(out.GroupId)).SecurityGroupArn); arn != aws.ToString(out.SecurityGroupArn) ||
		!regexp.MustCompile(`^arn:aws-cn:ec2:cn-north-1:`).MatchString(arn) {
		t.Errorf("described ARN %q, created %q", arn, aws.ToString(out.SecurityGroupArn))
	}
}
