package awsemu

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
)

const (
	demoSubnetA = "subnet-0demo00000000000a"
	demoSubnetB = "subnet-0demo00000000000b"
	demoSubnetC = "subnet-0demo00000000000c"
	lbName      = "a0123456789abcdef0123456789abcde"
)

// wantErrAs fails unless err is (or wraps) the SDK error type of target.
func wantErrAs[T error](t *testing.T, err error) {
	t.Helper()
	var target T
	if !errors.As(err, &target) {
		t.Fatalf("error = %v, want %T", err, target)
	}
}

func createCLB(t *testing.T, client *elb.Client, in *elb.CreateLoadBalancerInput) string {
	t.Helper()
	if in.Listeners == nil {
		in.Listeners = []elbtypes.Listener{{Protocol: aws.String("TCP"), LoadBalancerPort: 80, InstanceProtocol: aws.String("TCP"), InstancePort: aws.Int32(30080)}}
	}
	if in.Subnets == nil {
		in.Subnets = []string{demoSubnetA}
	}
	out, err := client.CreateLoadBalancer(context.Background(), in)
	if err != nil {
		t.Fatalf("CreateLoadBalancer %s: %v", aws.ToString(in.LoadBalancerName), err)
	}
	return aws.ToString(out.DNSName)
}

func describeCLB(t *testing.T, client *elb.Client, name string) elbtypes.LoadBalancerDescription {
	t.Helper()
	out, err := client.DescribeLoadBalancers(context.Background(), &elb.DescribeLoadBalancersInput{LoadBalancerNames: []string{name}})
	if err != nil {
		t.Fatalf("DescribeLoadBalancers %s: %v", name, err)
	}
	return out.LoadBalancerDescriptions[0]
}

// TestClassicLifecycle is what the CCM does for a type=LoadBalancer
// Service: security group, load balancer, listeners, health check,
// instances, attributes, then the teardown in the right order.
func TestClassicLifecycle(t *testing.T) {
	s, url := demo(t)
	ec2c, client := ec2Client(t, url), elbClient(t, url)
	ctx := context.Background()
	sgID := createSG(t, ec2c, "k8s-elb-"+lbName)
	if _, err := ec2c.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(sgID),
		IpPermissions: []ec2types.IpPermission{tcpFrom(80, "0.0.0.0/0", ""), tcpFrom(443, "0.0.0.0/0", "")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ec2c.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(demoNodeSG),
		IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("-1"), UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String(sgID)}}}}}); err != nil {
		t.Fatal(err)
	}
	tags := []elbtypes.Tag{{Key: aws.String("kubernetes.io/cluster/demo"), Value: aws.String("owned")},
		{Key: aws.String("kubernetes.io/service-name"), Value: aws.String("default/web")}}
	dns := createCLB(t, client, &elb.CreateLoadBalancerInput{
		LoadBalancerName: aws.String(lbName), Subnets: []string{demoSubnetA, demoSubnetB}, SecurityGroups: []string{sgID},
		Listeners: []elbtypes.Listener{{Protocol: aws.String("TCP"), LoadBalancerPort: 80, InstanceProtocol: aws.String("TCP"), InstancePort: aws.Int32(30080)}},
		Tags:      tags,
	})
	if !regexp.MustCompile(`^` + lbName + `-\d{10}\.us-east-1\.elb\.amazonaws\.com$`).MatchString(dns) {
		t.Errorf("DNSName %q", dns)
	}
	if _, err := client.CreateLoadBalancerListeners(ctx, &elb.CreateLoadBalancerListenersInput{LoadBalancerName: aws.String(lbName),
		Listeners: []elbtypes.Listener{{Protocol: aws.String("SSL"), LoadBalancerPort: 443, InstanceProtocol: aws.String("TCP"), InstancePort: aws.Int32(30443),
			SSLCertificateId: aws.String("arn:aws:acm:us-east-1:123456789012:certificate/web")}}}); err != nil {
		t.Fatal(err)
	}
	hc := &elbtypes.HealthCheck{Target: aws.String("TCP:30080"), Interval: aws.Int32(10), Timeout: aws.Int32(5), HealthyThreshold: aws.Int32(2), UnhealthyThreshold: aws.Int32(6)}
	hcOut, err := client.ConfigureHealthCheck(ctx, &elb.ConfigureHealthCheckInput{LoadBalancerName: aws.String(lbName), HealthCheck: hc})
	if err != nil || aws.ToString(hcOut.HealthCheck.Target) != "TCP:30080" {
		t.Fatalf("ConfigureHealthCheck: %v %+v", err, hcOut)
	}
	reg, err := client.RegisterInstancesWithLoadBalancer(ctx, &elb.RegisterInstancesWithLoadBalancerInput{LoadBalancerName: aws.String(lbName),
		Instances: []elbtypes.Instance{{InstanceId: aws.String(demoA)}, {InstanceId: aws.String(demoB)}}})
	if err != nil || len(reg.Instances) != 2 {
		t.Fatalf("RegisterInstancesWithLoadBalancer: %v %+v", err, reg)
	}
	if _, err := client.ModifyLoadBalancerAttributes(ctx, &elb.ModifyLoadBalancerAttributesInput{LoadBalancerName: aws.String(lbName),
		LoadBalancerAttributes: &elbtypes.LoadBalancerAttributes{
			CrossZoneLoadBalancing: &elbtypes.CrossZoneLoadBalancing{Enabled: true},
			ConnectionDraining:     &elbtypes.ConnectionDraining{Enabled: true, Timeout: aws.Int32(120)},
			ConnectionSettings:     &elbtypes.ConnectionSettings{IdleTimeout: aws.Int32(300)},
		}}); err != nil {
		t.Fatal(err)
	}

	d := describeCLB(t, client, lbName)
	check := func(what string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	check("name", aws.ToString(d.LoadBalancerName), lbName)
	check("DNS", aws.ToString(d.DNSName), dns)
	check("scheme", aws.ToString(d.Scheme), "internet-facing")
	check("VPC", aws.ToString(d.VPCId), demoVPC)
	check("subnets", d.Subnets, []string{demoSubnetA, demoSubnetB})
	check("zones", d.AvailabilityZones, []string{"us-east-1a", "us-east-1b"})
	check("security groups", d.SecurityGroups, []string{sgID})
	check("source SG", aws.ToString(d.SourceSecurityGroup.GroupName), "k8s-elb-"+lbName)
	check("health check", fmt.Sprintf("%s %d %d %d %d", aws.ToString(d.HealthCheck.Target), aws.ToInt32(d.HealthCheck.Interval),
		aws.ToInt32(d.HealthCheck.Timeout), aws.ToInt32(d.HealthCheck.HealthyThreshold), aws.ToInt32(d.HealthCheck.UnhealthyThreshold)), "TCP:30080 10 5 2 6")
	var listeners, instances []string
	for _, l := range d.ListenerDescriptions {
		listeners = append(listeners, fmt.Sprintf("%s:%d->%s:%d %s", aws.ToString(l.Listener.Protocol), l.Listener.LoadBalancerPort,
			aws.ToString(l.Listener.InstanceProtocol), aws.ToInt32(l.Listener.InstancePort), aws.ToString(l.Listener.SSLCertificateId)))
	}
	check("listeners", listeners, []string{"TCP:80->TCP:30080 ", "SSL:443->TCP:30443 arn:aws:acm:us-east-1:123456789012:certificate/web"})
	for _, in := range d.Instances {
		instances = append(instances, aws.ToString(in.InstanceId))
	}
	check("instances", instances, []string{demoA, demoB})
	tagsOut, err := client.DescribeTags(ctx, &elb.DescribeTagsInput{LoadBalancerNames: []string{lbName}})
	if err != nil {
		t.Fatal(err)
	}
	check("tags", len(tagsOut.TagDescriptions[0].Tags), 2)
	attrs, err := client.DescribeLoadBalancerAttributes(ctx, &elb.DescribeLoadBalancerAttributesInput{LoadBalancerName: aws.String(lbName)})
	if err != nil {
		t.Fatal(err)
	}
	a := attrs.LoadBalancerAttributes
	check("attributes", fmt.Sprintf("%v %v/%d %d %v/%d", a.CrossZoneLoadBalancing.Enabled, a.ConnectionDraining.Enabled, aws.ToInt32(a.ConnectionDraining.Timeout),
		aws.ToInt32(a.ConnectionSettings.IdleTimeout), a.AccessLog.Enabled, aws.ToInt32(a.AccessLog.EmitInterval)), "true true/120 300 false/60")

	// Teardown: the LB's group cannot go while the LB or a node rule uses it.
	_, err = ec2c.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(sgID)})
	wantCode(t, err, "DependencyViolation")
	if _, err := ec2c.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String(demoNodeSG),
		IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("-1"), UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String(sgID)}}}}}); err != nil {
		t.Fatal(err)
	}
	_, err = ec2c.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(sgID)})
	wantCode(t, err, "DependencyViolation") // still used by the load balancer
	if _, err := client.DeleteLoadBalancer(ctx, &elb.DeleteLoadBalancerInput{LoadBalancerName: aws.String(lbName)}); err != nil {
		t.Fatal(err)
	}
	if _, err := ec2c.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(sgID)}); err != nil {
		t.Fatalf("DeleteSecurityGroup after the load balancer is gone: %v", err)
	}
	lbs, err := client.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{})
	if err != nil || len(lbs.LoadBalancerDescriptions) != 0 {
		t.Errorf("load balancers left: %v %v", err, lbs)
	}
	sgs, err := ec2c.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
	if err != nil || len(sgs.SecurityGroups) != 1 || len(sgs.SecurityGroups[0].IpPermissions) != 2 {
		t.Errorf("security groups left: %v %+v", err, sgs)
	}
	for _, action := range []string{"CreateLoadBalancer", "CreateLoadBalancerListeners", "ConfigureHealthCheck", "RegisterInstancesWithLoadBalancer",
		"ModifyLoadBalancerAttributes", "DescribeLoadBalancerAttributes", "DeleteLoadBalancer"} {
		if n := s.Calls("elasticloadbalancing", action); n != 1 {
			t.Errorf("%s calls = %d, want 1", action, n)
		}
	}
}

func TestClassicErrors(t *testing.T) {
	_, url := demo(t)
	client := elbClient(t, url)
	ctx := context.Background()
	dns := createCLB(t, client, &elb.CreateLoadBalancerInput{LoadBalancerName: aws.String("web")})
	name := aws.String("web")
	if again := createCLB(t, client, &elb.CreateLoadBalancerInput{LoadBalancerName: aws.String("web")}); again != dns {
		t.Errorf("identical create returned %q, want the existing %q", again, dns)
	}

	cases := []struct {
		name string
		call func() error
		want func(*testing.T, error)
	}{
		{"duplicate name, other settings", func() error {
			_, err := client.CreateLoadBalancer(ctx, &elb.CreateLoadBalancerInput{LoadBalancerName: name, Subnets: []string{demoSubnetA},
				Listeners: []elbtypes.Listener{{Protocol: aws.String("TCP"), LoadBalancerPort: 80, InstancePort: aws.Int32(1)}}})
			return err
		}, wantErrAs[*elbtypes.DuplicateAccessPointNameException]},
		{"unknown subnet", func() error {
			_, err := client.CreateLoadBalancer(ctx, &elb.CreateLoadBalancerInput{LoadBalancerName: aws.String("x"), Subnets: []string{"subnet-0nope"},
				Listeners: []elbtypes.Listener{{Protocol: aws.String("TCP"), LoadBalancerPort: 80, InstancePort: aws.Int32(1)}}})
			return err
		}, wantErrAs[*elbtypes.SubnetNotFoundException]},
		{"unknown security group", func() error {
			_, err := client.CreateLoadBalancer(ctx, &elb.CreateLoadBalancerInput{LoadBalancerName: aws.String("x"), Subnets: []string{demoSubnetA},
				SecurityGroups: []string{"sg-0nope"}, Listeners: []elbtypes.Listener{{Protocol: aws.String("TCP"), LoadBalancerPort: 80, InstancePort: aws.Int32(1)}}})
			return err
		}, wantErrAs[*elbtypes.InvalidSecurityGroupException]},
		{"bad protocol", func() error {
			_, err := client.CreateLoadBalancer(ctx, &elb.CreateLoadBalancerInput{LoadBalancerName: aws.String("x"), Subnets: []string{demoSubnetA},
				Listeners: []elbtypes.Listener{{Protocol: aws.String("UDP"), LoadBalancerPort: 80, InstancePort: aws.Int32(1)}}})
			return err
		}, wantErrAs[*elbtypes.UnsupportedProtocolException]},
		{"attach is idempotent and adds new zones", func() error {
			_, err := client.AttachLoadBalancerToSubnets(ctx, &elb.AttachLoadBalancerToSubnetsInput{LoadBalancerName: name, Subnets: []string{demoSubnetA, demoSubnetA, demoSubnetB}})
			if err != nil {
				return err
			}
			_, err = client.AttachLoadBalancerToSubnets(ctx, &elb.AttachLoadBalancerToSubnetsInput{LoadBalancerName: name, Subnets: []string{demoSubnetC}})
			return err
		}, func(t *testing.T, err error) {
			if err != nil {
				t.Fatalf("attaching already attached subnets and a new zone: %v", err)
			}
		}},
		{"unknown load balancer", func() error {
			_, err := client.ConfigureHealthCheck(ctx, &elb.ConfigureHealthCheckInput{LoadBalancerName: aws.String("nope"),
				HealthCheck: &elbtypes.HealthCheck{Target: aws.String("TCP:1"), Interval: aws.Int32(10), Timeout: aws.Int32(5), HealthyThreshold: aws.Int32(2), UnhealthyThreshold: aws.Int32(2)}})
			return err
		}, wantErrAs[*elbtypes.AccessPointNotFoundException]},
		{"bad health check", func() error {
			_, err := client.ConfigureHealthCheck(ctx, &elb.ConfigureHealthCheckInput{LoadBalancerName: name,
				HealthCheck: &elbtypes.HealthCheck{Target: aws.String("HTTP:80"), Interval: aws.Int32(10), Timeout: aws.Int32(5), HealthyThreshold: aws.Int32(2), UnhealthyThreshold: aws.Int32(2)}})
			return err
		}, func(t *testing.T, err error) { wantCode(t, err, "ValidationError") }},
		{"unknown instance", func() error {
			_, err := client.RegisterInstancesWithLoadBalancer(ctx, &elb.RegisterInstancesWithLoadBalancerInput{LoadBalancerName: name,
				Instances: []elbtypes.Instance{{InstanceId: aws.String("i-0nope")}}})
			return err
		}, wantErrAs[*elbtypes.InvalidEndPointException]},
		{"conflicting listener", func() error {
			_, err := client.CreateLoadBalancerListeners(ctx, &elb.CreateLoadBalancerListenersInput{LoadBalancerName: name,
				Listeners: []elbtypes.Listener{{Protocol: aws.String("TCP"), LoadBalancerPort: 80, InstancePort: aws.Int32(1)}}})
			return err
		}, wantErrAs[*elbtypes.DuplicateListenerException]},
		{"access log without bucket", func() error {
			_, err := client.ModifyLoadBalancerAttributes(ctx, &elb.ModifyLoadBalancerAttributesInput{LoadBalancerName: name,
				LoadBalancerAttributes: &elbtypes.LoadBalancerAttributes{AccessLog: &elbtypes.AccessLog{Enabled: true}}})
			return err
		}, wantErrAs[*elbtypes.InvalidConfigurationRequestException]},
		{"detach every subnet", func() error {
			_, err := client.DetachLoadBalancerFromSubnets(ctx, &elb.DetachLoadBalancerFromSubnetsInput{LoadBalancerName: name, Subnets: []string{demoSubnetA, demoSubnetB, demoSubnetC}})
			return err
		}, wantErrAs[*elbtypes.InvalidConfigurationRequestException]},
		{"unknown policy type", func() error {
			_, err := client.CreateLoadBalancerPolicy(ctx, &elb.CreateLoadBalancerPolicyInput{LoadBalancerName: name, PolicyName: aws.String("p"), PolicyTypeName: aws.String("Nope")})
			return err
		}, wantErrAs[*elbtypes.PolicyTypeNotFoundException]},
		{"unknown policy", func() error {
			_, err := client.SetLoadBalancerPoliciesOfListener(ctx, &elb.SetLoadBalancerPoliciesOfListenerInput{LoadBalancerName: name, LoadBalancerPort: 80, PolicyNames: []string{"nope"}})
			return err
		}, wantErrAs[*elbtypes.PolicyNotFoundException]},
		{"policy on a missing listener", func() error {
			_, err := client.SetLoadBalancerPoliciesOfListener(ctx, &elb.SetLoadBalancerPoliciesOfListenerInput{LoadBalancerName: name, LoadBalancerPort: 8080, PolicyNames: []string{}})
			return err
		}, wantErrAs[*elbtypes.ListenerNotFoundException]},
		{"too many tags", func() error {
			var tags []elbtypes.Tag
			for i := range 51 {
				tags = append(tags, elbtypes.Tag{Key: aws.String(fmt.Sprint("k", i))})
			}
			_, err := client.AddTags(ctx, &elb.AddTagsInput{LoadBalancerNames: []string{"web"}, Tags: tags})
			return err
		}, wantErrAs[*elbtypes.TooManyTagsException]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.want(t, tc.call()) })
	}
	// Deletes are idempotent.
	for range 2 {
		if _, err := client.DeleteLoadBalancer(ctx, &elb.DeleteLoadBalancerInput{LoadBalancerName: aws.String("never-existed")}); err != nil {
			t.Fatalf("DeleteLoadBalancer of a missing load balancer: %v", err)
		}
	}
}

func TestClassicUpdates(t *testing.T) {
	_, url := demo(t)
	client, ec2c := elbClient(t, url), ec2Client(t, url)
	ctx := context.Background()
	name := aws.String("web")
	createCLB(t, client, &elb.CreateLoadBalancerInput{LoadBalancerName: name, Scheme: aws.String("internal"), Subnets: []string{demoSubnetC},
		Tags: []elbtypes.Tag{{Key: aws.String("a"), Value: aws.String("1")}}})
	if d := describeCLB(t, client, "web"); aws.ToString(d.Scheme) != "internal" || !regexp.MustCompile(`^internal-web-\d+\.`).MatchString(aws.ToString(d.DNSName)) {
		t.Errorf("internal: %s %s", aws.ToString(d.Scheme), aws.ToString(d.DNSName))
	}

	// Tags.
	if _, err := client.AddTags(ctx, &elb.AddTagsInput{LoadBalancerNames: []string{"web"}, Tags: []elbtypes.Tag{{Key: aws.String("b"), Value: aws.String("2")}, {Key: aws.String("a"), Value: aws.String("3")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RemoveTags(ctx, &elb.RemoveTagsInput{LoadBalancerNames: []string{"web"}, Tags: []elbtypes.TagKeyOnly{{Key: aws.String("b")}}}); err != nil {
		t.Fatal(err)
	}
	tags, err := client.DescribeTags(ctx, &elb.DescribeTagsInput{LoadBalancerNames: []string{"web"}})
	if err != nil || len(tags.TagDescriptions[0].Tags) != 1 || aws.ToString(tags.TagDescriptions[0].Tags[0].Value) != "3" {
		t.Errorf("tags: %v %+v", err, tags)
	}

	// Listeners, subnets, security groups, instances.
	if _, err := client.CreateLoadBalancerListeners(ctx, &elb.CreateLoadBalancerListenersInput{LoadBalancerName: name,
		Listeners: []elbtypes.Listener{{Protocol: aws.String("TCP"), LoadBalancerPort: 80, InstanceProtocol: aws.String("TCP"), InstancePort: aws.Int32(30080)}, // identical: fine
			{Protocol: aws.String("HTTP"), LoadBalancerPort: 8080, InstancePort: aws.Int32(30081)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.DeleteLoadBalancerListeners(ctx, &elb.DeleteLoadBalancerListenersInput{LoadBalancerName: name, LoadBalancerPorts: []int32{80, 9999}}); err != nil {
		t.Fatal(err)
	}
	att, err := client.AttachLoadBalancerToSubnets(ctx, &elb.AttachLoadBalancerToSubnetsInput{LoadBalancerName: name, Subnets: []string{demoSubnetA}})
	if err != nil || !slices.Equal(att.Subnets, []string{demoSubnetC, demoSubnetA}) {
		t.Fatalf("attach: %v %v", err, att)
	}
	_, err = client.AttachLoadBalancerToSubnets(ctx, &elb.AttachLoadBalancerToSubnetsInput{LoadBalancerName: name, Subnets: []string{"subnet-0nope"}})
	wantErrAs[*elbtypes.SubnetNotFoundException](t, err)
	det, err := client.DetachLoadBalancerFromSubnets(ctx, &elb.DetachLoadBalancerFromSubnetsInput{LoadBalancerName: name, Subnets: []string{demoSubnetC}})
	if err != nil || !slices.Equal(det.Subnets, []string{demoSubnetA}) {
		t.Fatalf("detach: %v %v", err, det)
	}
	sg2 := createSG(t, ec2c, "extra")
	app, err := client.ApplySecurityGroupsToLoadBalancer(ctx, &elb.ApplySecurityGroupsToLoadBalancerInput{LoadBalancerName: name, SecurityGroups: []string{sg2, demoNodeSG}})
	if err != nil || !slices.Equal(app.SecurityGroups, []string{sg2, demoNodeSG}) {
		t.Fatalf("apply security groups: %v %v", err, app)
	}
	if _, err := client.RegisterInstancesWithLoadBalancer(ctx, &elb.RegisterInstancesWithLoadBalancerInput{LoadBalancerName: name,
		Instances: []elbtypes.Instance{{InstanceId: aws.String(demoA)}, {InstanceId: aws.String(demoB)}}}); err != nil {
		t.Fatal(err)
	}
	dereg, err := client.DeregisterInstancesFromLoadBalancer(ctx, &elb.DeregisterInstancesFromLoadBalancerInput{LoadBalancerName: name,
		Instances: []elbtypes.Instance{{InstanceId: aws.String(demoA)}}})
	if err != nil || len(dereg.Instances) != 1 || aws.ToString(dereg.Instances[0].InstanceId) != demoB {
		t.Fatalf("deregister: %v %+v", err, dereg)
	}
	health, err := client.DescribeInstanceHealth(ctx, &elb.DescribeInstanceHealthInput{LoadBalancerName: name})
	if err != nil || len(health.InstanceStates) != 1 || aws.ToString(health.InstanceStates[0].State) != "InService" {
		t.Fatalf("instance health: %v %+v", err, health)
	}
	d := describeCLB(t, client, "web")
	if len(d.ListenerDescriptions) != 1 || d.ListenerDescriptions[0].Listener.LoadBalancerPort != 8080 || aws.ToString(d.ListenerDescriptions[0].Listener.InstanceProtocol) != "HTTP" ||
		!slices.Equal(d.Subnets, []string{demoSubnetA}) || !slices.Equal(d.AvailabilityZones, []string{"us-east-1a"}) ||
		aws.ToString(d.SourceSecurityGroup.GroupName) != "extra" || len(d.Instances) != 1 {
		t.Errorf("after updates: %+v", d)
	}
	_, err = ec2c.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(sg2)})
	wantCode(t, err, "DependencyViolation")
}

func TestClassicPolicies(t *testing.T) {
	_, url := demo(t)
	client := elbClient(t, url)
	ctx := context.Background()
	name := aws.String("web")
	createCLB(t, client, &elb.CreateLoadBalancerInput{LoadBalancerName: name, Listeners: []elbtypes.Listener{
		{Protocol: aws.String("TCP"), LoadBalancerPort: 80, InstanceProtocol: aws.String("TCP"), InstancePort: aws.Int32(30080)},
		{Protocol: aws.String("SSL"), LoadBalancerPort: 443, InstanceProtocol: aws.String("TCP"), InstancePort: aws.Int32(30443), SSLCertificateId: aws.String("arn:aws:acm:us-east-1:123456789012:certificate/x")},
	}})
	sample, err := client.DescribeLoadBalancerPolicies(ctx, &elb.DescribeLoadBalancerPoliciesInput{PolicyNames: []string{"ELBSecurityPolicy-TLS-1-2-2017-01"}})
	if err != nil || len(sample.PolicyDescriptions) != 1 || aws.ToString(sample.PolicyDescriptions[0].PolicyTypeName) != "SSLNegotiationPolicyType" {
		t.Fatalf("sample policies: %v %+v", err, sample)
	}
	// What the CCM does for aws-load-balancer-proxy-protocol: "*" and
	// aws-load-balancer-ssl-negotiation-policy.
	for _, in := range []*elb.CreateLoadBalancerPolicyInput{
		{LoadBalancerName: name, PolicyName: aws.String("k8s-proxyprotocol-enabled"), PolicyTypeName: aws.String("ProxyProtocolPolicyType"),
			PolicyAttributes: []elbtypes.PolicyAttribute{{AttributeName: aws.String("ProxyProtocol"), AttributeValue: aws.String("true")}}},
		{LoadBalancerName: name, PolicyName: aws.String("k8s-SSLNegotiationPolicy-ELBSecurityPolicy-TLS-1-2-2017-01"), PolicyTypeName: aws.String("SSLNegotiationPolicyType"),
			PolicyAttributes: []elbtypes.PolicyAttribute{{AttributeName: aws.String("Reference-Security-Policy"), AttributeValue: aws.String("ELBSecurityPolicy-TLS-1-2-2017-01")}}},
	} {
		if _, err := client.CreateLoadBalancerPolicy(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	_, err = client.CreateLoadBalancerPolicy(ctx, &elb.CreateLoadBalancerPolicyInput{LoadBalancerName: name, PolicyName: aws.String("k8s-proxyprotocol-enabled"),
		PolicyTypeName: aws.String("ProxyProtocolPolicyType"), PolicyAttributes: []elbtypes.PolicyAttribute{{AttributeName: aws.String("ProxyProtocol"), AttributeValue: aws.String("true")}}})
	wantErrAs[*elbtypes.DuplicatePolicyNameException](t, err)
	for _, port := range []int32{30080, 30443} {
		if _, err := client.SetLoadBalancerPoliciesForBackendServer(ctx, &elb.SetLoadBalancerPoliciesForBackendServerInput{LoadBalancerName: name,
			InstancePort: aws.Int32(port), PolicyNames: []string{"k8s-proxyprotocol-enabled"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.SetLoadBalancerPoliciesOfListener(ctx, &elb.SetLoadBalancerPoliciesOfListenerInput{LoadBalancerName: name, LoadBalancerPort: 443,
		PolicyNames: []string{"k8s-SSLNegotiationPolicy-ELBSecurityPolicy-TLS-1-2-2017-01"}}); err != nil {
		t.Fatal(err)
	}
	pols, err := client.DescribeLoadBalancerPolicies(ctx, &elb.DescribeLoadBalancerPoliciesInput{LoadBalancerName: name})
	if err != nil || len(pols.PolicyDescriptions) != 2 || aws.ToString(pols.PolicyDescriptions[0].PolicyAttributeDescriptions[0].AttributeValue) != "true" {
		t.Fatalf("policies: %v %+v", err, pols)
	}
	d := describeCLB(t, client, "web")
	var backends []string
	for _, b := range d.BackendServerDescriptions {
		backends = append(backends, fmt.Sprint(aws.ToInt32(b.InstancePort), b.PolicyNames))
	}
	if fmt.Sprint(backends) != "[30080 [k8s-proxyprotocol-enabled] 30443 [k8s-proxyprotocol-enabled]]" ||
		len(d.ListenerDescriptions[0].PolicyNames) != 0 || fmt.Sprint(d.ListenerDescriptions[1].PolicyNames) != "[k8s-SSLNegotiationPolicy-ELBSecurityPolicy-TLS-1-2-2017-01]" ||
		len(d.Policies.OtherPolicies) != 2 {
		t.Errorf("described policies: backends %v, listeners %+v, policies %+v", backends, d.ListenerDescriptions, d.Policies)
	}
	_, err = client.DeleteLoadBalancerPolicy(ctx, &elb.DeleteLoadBalancerPolicyInput{LoadBalancerName: name, PolicyName: aws.String("k8s-proxyprotocol-enabled")})
	wantErrAs[*elbtypes.InvalidConfigurationRequestException](t, err)
	// An empty list removes the policies of a backend.
	for _, port := range []int32{30080, 30443} {
		if _, err := client.SetLoadBalancerPoliciesForBackendServer(ctx, &elb.SetLoadBalancerPoliciesForBackendServerInput{LoadBalancerName: name,
			InstancePort: aws.Int32(port), PolicyNames: []string{}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.DeleteLoadBalancerPolicy(ctx, &elb.DeleteLoadBalancerPolicyInput{LoadBalancerName: name, PolicyName: aws.String("k8s-proxyprotocol-enabled")}); err != nil {
		t.Fatal(err)
	}
	if d := describeCLB(t, client, "web"); len(d.BackendServerDescriptions) != 0 || len(d.Policies.OtherPolicies) != 1 {
		t.Errorf("after removal: %+v %+v", d.BackendServerDescriptions, d.Policies)
	}
}

// chinaFixture is one VPC with a subnet in cn-north-1.
func chinaFixture() *Fixture {
	return &Fixture{Region: "cn-north-1",
		VPCs:    []VPC{{ID: "vpc-0cn", CIDR: "10.1.0.0/16"}},
		Subnets: []Subnet{{ID: "subnet-0cna", VPCID: "vpc-0cn", AvailabilityZone: "cn-north-1a", CIDR: "10.1.1.0/24"}},
	}
}

func TestClassicChinaDNSName(t *testing.T) {
	_, url := start(t, chinaFixture())
	client := elbClient(t, url)
	dns := createCLB(t, client, &elb.CreateLoadBalancerInput{LoadBalancerName: aws.String("web"), Subnets: []string{"subnet-0cna"}})
	if !regexp.MustCompile(`^web-\d{10}\.cn-north-1\.elb\.amazonaws\.com\.cn$`).MatchString(dns) {
		t.Errorf("DNSName %q, want <name>-<number>.cn-north-1.elb.amazonaws.com.cn", dns)
	}
}
