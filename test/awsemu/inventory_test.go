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

const certArn = "arn:aws:acm:us-east-1:123456789012:certificate/0123"

// TestInventory builds what the reconciler builds for a Classic and a
// Network load balancer through the SDK, checks the accessors, tears it
// down and checks that nothing is left.
func TestInventory(t *testing.T) {
	s, url := demo(t)
	ec2c, clb, v2 := ec2Client(t, url), elbClient(t, url), elbv2Client(t, url)
	ctx := context.Background()
	fixtureSGs := s.Inventory().SecurityGroups

	// Security group with described rules and tags.
	sgOut, err := ec2c.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{
		GroupName: aws.String("k8s-elb-web"), Description: aws.String("web"), VpcId: aws.String(demoVPC),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeSecurityGroup,
			Tags: []ec2types.Tag{{Key: aws.String("kubernetes.io/cluster/demo"), Value: aws.String("owned")}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	sgID := aws.ToString(sgOut.GroupId)
	if _, err := ec2c.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(demoNodeSG),
		IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(30080), ToPort: aws.Int32(30080),
			UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String(sgID), Description: aws.String("from elb web")}}}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ec2c.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(sgID),
		IpPermissions: []ec2types.IpPermission{tcpFrom(443, "0.0.0.0/0", "web https")}}); err != nil {
		t.Fatal(err)
	}

	// Classic load balancer with listeners, policies, health check, attributes and instances.
	createCLB(t, clb, &elb.CreateLoadBalancerInput{LoadBalancerName: aws.String("web"), Scheme: aws.String("internal"),
		Subnets: []string{demoSubnetA, demoSubnetB}, SecurityGroups: []string{sgID},
		Tags: []elbtypes.Tag{{Key: aws.String("kubernetes.io/service-name"), Value: aws.String("default/web")}},
		Listeners: []elbtypes.Listener{
			{Protocol: aws.String("TCP"), LoadBalancerPort: 80, InstanceProtocol: aws.String("TCP"), InstancePort: aws.Int32(30080)},
			{Protocol: aws.String("SSL"), LoadBalancerPort: 443, InstanceProtocol: aws.String("TCP"), InstancePort: aws.Int32(30080), SSLCertificateId: aws.String(certArn)},
		}})
	for _, p := range []*elb.CreateLoadBalancerPolicyInput{
		{PolicyName: aws.String("k8s-proxyprotocol-enabled"), PolicyTypeName: aws.String("ProxyProtocolPolicyType"),
			PolicyAttributes: []elbtypes.PolicyAttribute{{AttributeName: aws.String("ProxyProtocol"), AttributeValue: aws.String("true")}}},
		{PolicyName: aws.String("k8s-SSLNegotiationPolicy-ELBSecurityPolicy-2016-08"), PolicyTypeName: aws.String("SSLNegotiationPolicyType"),
			PolicyAttributes: []elbtypes.PolicyAttribute{{AttributeName: aws.String("Reference-Security-Policy"), AttributeValue: aws.String("ELBSecurityPolicy-2016-08")}}},
	} {
		p.LoadBalancerName = aws.String("web")
		if _, err := clb.CreateLoadBalancerPolicy(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	steps := []error{}
	_, err = clb.SetLoadBalancerPoliciesForBackendServer(ctx, &elb.SetLoadBalancerPoliciesForBackendServerInput{LoadBalancerName: aws.String("web"),
		InstancePort: aws.Int32(30080), PolicyNames: []string{"k8s-proxyprotocol-enabled"}})
	steps = append(steps, err)
	_, err = clb.SetLoadBalancerPoliciesOfListener(ctx, &elb.SetLoadBalancerPoliciesOfListenerInput{LoadBalancerName: aws.String("web"),
		LoadBalancerPort: 443, PolicyNames: []string{"k8s-SSLNegotiationPolicy-ELBSecurityPolicy-2016-08"}})
	steps = append(steps, err)
	_, err = clb.ConfigureHealthCheck(ctx, &elb.ConfigureHealthCheckInput{LoadBalancerName: aws.String("web"), HealthCheck: &elbtypes.HealthCheck{
		Target: aws.String("HTTP:31000/healthz"), Interval: aws.Int32(10), Timeout: aws.Int32(5), HealthyThreshold: aws.Int32(2), UnhealthyThreshold: aws.Int32(6)}})
	steps = append(steps, err)
	_, err = clb.ModifyLoadBalancerAttributes(ctx, &elb.ModifyLoadBalancerAttributesInput{LoadBalancerName: aws.String("web"),
		LoadBalancerAttributes: &elbtypes.LoadBalancerAttributes{
			CrossZoneLoadBalancing: &elbtypes.CrossZoneLoadBalancing{Enabled: true},
			ConnectionDraining:     &elbtypes.ConnectionDraining{Enabled: true, Timeout: aws.Int32(120)},
			ConnectionSettings:     &elbtypes.ConnectionSettings{IdleTimeout: aws.Int32(300)},
			AccessLog:              &elbtypes.AccessLog{Enabled: true, S3BucketName: aws.String("logs"), S3BucketPrefix: aws.String("web"), EmitInterval: aws.Int32(5)},
		}})
	steps = append(steps, err)
	_, err = clb.RegisterInstancesWithLoadBalancer(ctx, &elb.RegisterInstancesWithLoadBalancerInput{LoadBalancerName: aws.String("web"),
		Instances: []elbtypes.Instance{{InstanceId: aws.String(demoA)}, {InstanceId: aws.String(demoB)}}})
	steps = append(steps, err)
	for i, err := range steps {
		if err != nil {
			t.Fatalf("classic step %d: %v", i, err)
		}
	}

	// Network load balancer with subnet mappings, a listener, an attached
	// and an unattached target group.
	lb := createNLB(t, v2, &elbv2.CreateLoadBalancerInput{Name: aws.String("nlb"), SecurityGroups: []string{sgID},
		SubnetMappings: []elbv2types.SubnetMapping{{SubnetId: aws.String(demoSubnetA), AllocationId: aws.String("eipalloc-0a")}, {SubnetId: aws.String(demoSubnetB)}},
		Tags:           []elbv2types.Tag{{Key: aws.String("kubernetes.io/service-name"), Value: aws.String("default/nlb")}}})
	lbArn := aws.ToString(lb.LoadBalancerArn)
	tg := createTG(t, v2, "k8s-default-nlb-tcp", 30081)
	tgArn := aws.ToString(tg.TargetGroupArn)
	spare := createTG(t, v2, "k8s-default-nlb-spare", 30082)
	lis, err := v2.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: aws.String(lbArn), Protocol: elbv2types.ProtocolEnumTls,
		Port: aws.Int32(443), DefaultActions: forward(tgArn), Certificates: []elbv2types.Certificate{{CertificateArn: aws.String(certArn)}},
		Tags: []elbv2types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}})
	if err != nil {
		t.Fatal(err)
	}
	steps = steps[:0]
	_, err = v2.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: aws.String(tgArn),
		Targets: []elbv2types.TargetDescription{{Id: aws.String(demoA)}, {Id: aws.String(demoB), Port: aws.Int32(31081)}}})
	steps = append(steps, err)
	_, err = v2.ModifyTargetGroupAttributes(ctx, &elbv2.ModifyTargetGroupAttributesInput{TargetGroupArn: aws.String(tgArn),
		Attributes: []elbv2types.TargetGroupAttribute{{Key: aws.String("proxy_protocol_v2.enabled"), Value: aws.String("true")}}})
	steps = append(steps, err)
	_, err = v2.ModifyLoadBalancerAttributes(ctx, &elbv2.ModifyLoadBalancerAttributesInput{LoadBalancerArn: aws.String(lbArn),
		Attributes: []elbv2types.LoadBalancerAttribute{{Key: aws.String("load_balancing.cross_zone.enabled"), Value: aws.String("true")}}})
	steps = append(steps, err)
	_, err = v2.ModifyTargetGroup(ctx, &elbv2.ModifyTargetGroupInput{TargetGroupArn: aws.String(tgArn),
		HealthCheckProtocol: elbv2types.ProtocolEnumHttp, HealthCheckPath: aws.String("/healthz"), HealthCheckTimeoutSeconds: aws.Int32(4)})
	steps = append(steps, err)
	for i, err := range steps {
		if err != nil {
			t.Fatalf("network step %d: %v", i, err)
		}
	}

	// The accessors.
	if got, want := s.Inventory(), (Inventory{ClassicLBs: 1, NetworkLBs: 1, Listeners: 1, TargetGroups: 2, SecurityGroups: fixtureSGs + 1}); got != want {
		t.Errorf("Inventory() = %+v, want %+v", got, want)
	}
	clbs := s.ClassicLoadBalancers()
	if len(clbs) != 1 {
		t.Fatalf("ClassicLoadBalancers() = %+v", clbs)
	}
	c := clbs[0]
	got := fmt.Sprintf("%s %s %v %v %v %v %+v %+v %+v %v", c.Name, c.Scheme, c.Subnets, c.SecurityGroups, c.Tags, c.Instances,
		c.Listeners, c.HealthCheck, c.Attributes, c.BackendPolicies)
	want := "web internal [" + demoSubnetA + " " + demoSubnetB + "] [" + sgID + "] map[kubernetes.io/service-name:default/web] [" + demoA + " " + demoB + "] " +
		"[{Protocol:TCP Port:80 InstanceProtocol:TCP InstancePort:30080 SSLCertificateID: PolicyNames:[]} " +
		"{Protocol:SSL Port:443 InstanceProtocol:TCP InstancePort:30080 SSLCertificateID:" + certArn + " PolicyNames:[k8s-SSLNegotiationPolicy-ELBSecurityPolicy-2016-08]}] " +
		"{Target:HTTP:31000/healthz Interval:10 Timeout:5 HealthyThreshold:2 UnhealthyThreshold:6} " +
		"{CrossZoneLoadBalancing:true IdleTimeout:300 ConnectionDraining:true ConnectionDrainingTimeout:120 AccessLogEnabled:true AccessLogS3BucketName:logs AccessLogS3BucketPrefix:web AccessLogEmitInterval:5} " +
		"map[30080:[k8s-proxyprotocol-enabled]]"
	if got != want {
		t.Errorf("ClassicLoadBalancers():\n got %s\nwant %s", got, want)
	}
	if !regexp.MustCompile(`^internal-web-\d{10}\.us-east-1\.elb\.amazonaws\.com$`).MatchString(c.DNSName) {
		t.Errorf("internal Classic DNSName %q", c.DNSName)
	}
	if p := c.Policies["k8s-proxyprotocol-enabled"]; len(c.Policies) != 2 || p.Type != "ProxyProtocolPolicyType" || p.Attributes["ProxyProtocol"] != "true" {
		t.Errorf("Policies = %+v", c.Policies)
	}

	nlbs := s.NetworkLoadBalancers()
	if len(nlbs) != 1 {
		t.Fatalf("NetworkLoadBalancers() = %+v", nlbs)
	}
	n := nlbs[0]
	got = fmt.Sprintf("%s %s %s %s %+v %v %v %s %s", n.Name, n.ARN, n.Type, n.Scheme, n.SubnetMappings, n.SecurityGroups, n.Tags,
		n.Attributes["load_balancing.cross_zone.enabled"], n.Attributes["deletion_protection.enabled"])
	want = "nlb " + lbArn + " network internet-facing [{SubnetID:" + demoSubnetA + " AllocationID:eipalloc-0a PrivateIPv4Address:} {SubnetID:" + demoSubnetB +
		" AllocationID: PrivateIPv4Address:}] [" + sgID + "] map[kubernetes.io/service-name:default/nlb] true false"
	if got != want {
		t.Errorf("NetworkLoadBalancers():\n got %s\nwant %s", got, want)
	}
	if len(n.Listeners) != 1 || len(n.TargetGroups) != 1 || n.TargetGroups[0].ARN != tgArn {
		t.Fatalf("NLB listeners %+v, target groups %+v", n.Listeners, n.TargetGroups)
	}
	l := n.Listeners[0]
	got = fmt.Sprintf("%+v", l)
	want = fmt.Sprintf("{ARN:%s LoadBalancerARN:%s Port:443 Protocol:TLS SSLPolicy:ELBSecurityPolicy-TLS13-1-2-2021-06 CertificateARNs:[%s] TargetGroupARN:%s Tags:map[k:v]}",
		aws.ToString(lis.Listeners[0].ListenerArn), lbArn, certArn, tgArn)
	if got != want {
		t.Errorf("listener:\n got %s\nwant %s", got, want)
	}

	tgs := s.TargetGroups()
	if len(tgs) != 2 || tgs[1].ARN != aws.ToString(spare.TargetGroupArn) || len(tgs[1].LoadBalancerARNs) != 0 {
		t.Fatalf("TargetGroups() = %+v", tgs)
	}
	g := tgs[0]
	got = fmt.Sprintf("%s %s %d %s %s %s %s %s %d %d %d %d %s %s %+v %v %v", g.Name, g.Protocol, g.Port, g.TargetType, g.VPCID,
		g.HealthCheckProtocol, g.HealthCheckPort, g.HealthCheckPath, g.HealthCheckIntervalSeconds, g.HealthCheckTimeoutSeconds,
		g.HealthyThreshold, g.UnhealthyThreshold, g.Matcher, g.Attributes["proxy_protocol_v2.enabled"], g.Targets, g.Tags, g.LoadBalancerARNs)
	want = "k8s-default-nlb-tcp TCP 30081 instance " + demoVPC + " HTTP traffic-port /healthz 30 4 3 3 200-399 true " +
		"[{ID:" + demoA + " Port:30081} {ID:" + demoB + " Port:31081}] map[kubernetes.io/cluster/demo:owned] [" + lbArn + "]"
	if got != want {
		t.Errorf("TargetGroups()[0]:\n got %s\nwant %s", got, want)
	}

	named := s.SecurityGroupsNamed("k8s-elb-")
	if len(named) != 1 || named[0].ID != sgID || named[0].Tags["kubernetes.io/cluster/demo"] != "owned" ||
		len(named[0].Ingress) != 1 || named[0].Ingress[0].Descriptions["0.0.0.0/0"] != "web https" {
		t.Fatalf("SecurityGroupsNamed = %+v", named)
	}
	var node SecurityGroup
	for _, sg := range s.SecurityGroups() {
		if sg.ID == demoNodeSG {
			node = sg
		}
	}
	if len(s.SecurityGroups()) != fixtureSGs+1 || node.ID == "" {
		t.Fatalf("SecurityGroups() misses groups")
	}
	found := false
	for _, p := range node.Ingress {
		found = found || p.Descriptions[sgID] == "from elb web"
	}
	if !found {
		t.Errorf("node group ingress %+v lacks the described rule from %s", node.Ingress, sgID)
	}

	// Snapshots are copies.
	c.Tags["x"], c.Listeners[1].PolicyNames[0], n.Attributes["x"], g.Targets[0].ID = "y", "z", "y", "i-x"
	named[0].Ingress[0].Descriptions["0.0.0.0/0"] = "changed"
	*named[0].Ingress[0].FromPort = 1
	if c2, n2, g2, sg2 := s.ClassicLoadBalancers()[0], s.NetworkLoadBalancers()[0], s.TargetGroups()[0], s.SecurityGroupsNamed("k8s-elb-")[0]; c2.Tags["x"] != "" ||
		c2.Listeners[1].PolicyNames[0] == "z" || n2.Attributes["x"] != "" || g2.Targets[0].ID != demoA ||
		sg2.Ingress[0].Descriptions["0.0.0.0/0"] != "web https" || *sg2.Ingress[0].FromPort != 443 {
		t.Error("changing a snapshot changed the server's state")
	}

	// Teardown in the reconciler's order leaves nothing behind.
	steps = steps[:0]
	_, err = clb.DeleteLoadBalancer(ctx, &elb.DeleteLoadBalancerInput{LoadBalancerName: aws.String("web")})
	steps = append(steps, err)
	_, err = v2.DeleteLoadBalancer(ctx, &elbv2.DeleteLoadBalancerInput{LoadBalancerArn: aws.String(lbArn)})
	steps = append(steps, err)
	for _, arn := range []string{tgArn, aws.ToString(spare.TargetGroupArn)} {
		_, err = v2.DeleteTargetGroup(ctx, &elbv2.DeleteTargetGroupInput{TargetGroupArn: aws.String(arn)})
		steps = append(steps, err)
	}
	_, err = ec2c.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String(demoNodeSG),
		IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(30080), ToPort: aws.Int32(30080),
			UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String(sgID)}}}}})
	steps = append(steps, err)
	_, err = ec2c.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(sgID)})
	steps = append(steps, err)
	for i, err := range steps {
		if err != nil {
			t.Fatalf("teardown step %d: %v", i, err)
		}
	}
	if got, want := s.Inventory(), (Inventory{SecurityGroups: fixtureSGs}); got != want {
		t.Errorf("after teardown Inventory() = %+v, want %+v", got, want)
	}
	if len(s.ClassicLoadBalancers()) != 0 || len(s.NetworkLoadBalancers()) != 0 || len(s.TargetGroups()) != 0 || len(s.SecurityGroupsNamed("k8s-")) != 0 {
		t.Error("accessors still list deleted resources")
	}
}
