package awsemu

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

const demoNodeSG = "sg-0demo000000000001"

func tcpFrom(port int32, cidr, desc string) ec2types.IpPermission {
	return ec2types.IpPermission{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(port), ToPort: aws.Int32(port),
		IpRanges: []ec2types.IpRange{{CidrIp: aws.String(cidr), Description: aws.String(desc)}}}
}

func createSG(t *testing.T, client *ec2.Client, name string) string {
	t.Helper()
	out, err := client.CreateSecurityGroup(context.Background(), &ec2.CreateSecurityGroupInput{
		GroupName: aws.String(name), Description: aws.String("test group " + name), VpcId: aws.String(demoVPC),
	})
	if err != nil {
		t.Fatalf("CreateSecurityGroup %s: %v", name, err)
	}
	return aws.ToString(out.GroupId)
}

func describeSG(t *testing.T, client *ec2.Client, id string) ec2types.SecurityGroup {
	t.Helper()
	out, err := client.DescribeSecurityGroups(context.Background(), &ec2.DescribeSecurityGroupsInput{GroupIds: []string{id}})
	if err != nil {
		t.Fatalf("DescribeSecurityGroups %s: %v", id, err)
	}
	return out.SecurityGroups[0]
}

func TestCreateDeleteSecurityGroup(t *testing.T) {
	s, url := demo(t)
	client := ec2Client(t, url)
	ctx := context.Background()
	out, err := client.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{
		GroupName: aws.String("k8s-elb-a123"), Description: aws.String("Security group for Kubernetes ELB a123"),
		VpcId: aws.String(demoVPC),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeSecurityGroup,
			Tags: []ec2types.Tag{{Key: aws.String("kubernetes.io/cluster/demo"), Value: aws.String("owned")}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(out.GroupId)
	if len(id) < 4 || id[:3] != "sg-" || aws.ToString(out.SecurityGroupArn) != "arn:aws:ec2:us-east-1:123456789012:security-group/"+id {
		t.Errorf("GroupId %q, ARN %q", id, aws.ToString(out.SecurityGroupArn))
	}
	if tagMap(out.Tags)["kubernetes.io/cluster/demo"] != "owned" {
		t.Errorf("create response tags = %v", tagMap(out.Tags))
	}
	sg := describeSG(t, client, id)
	if aws.ToString(sg.GroupName) != "k8s-elb-a123" || aws.ToString(sg.VpcId) != demoVPC ||
		aws.ToString(sg.Description) != "Security group for Kubernetes ELB a123" || tagMap(sg.Tags)["kubernetes.io/cluster/demo"] != "owned" {
		t.Errorf("described group = %+v", sg)
	}
	if len(sg.IpPermissions) != 0 || len(sg.IpPermissionsEgress) != 1 || aws.ToString(sg.IpPermissionsEgress[0].IpProtocol) != "-1" {
		t.Errorf("new group rules: ingress %v egress %v, want none and the default allow-all egress", sg.IpPermissions, sg.IpPermissionsEgress)
	}
	byFilter, err := client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: filters("tag:kubernetes.io/cluster/demo", "owned", "group-name", "k8s-elb-*")})
	if err != nil || len(byFilter.SecurityGroups) != 1 {
		t.Fatalf("filtered describe: %v, %d groups", err, len(byFilter.SecurityGroups))
	}

	t.Run("duplicate name in VPC", func(t *testing.T) {
		_, err := client.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("k8s-elb-a123"), Description: aws.String("x"), VpcId: aws.String(demoVPC)})
		wantCode(t, err, "InvalidGroup.Duplicate")
	})
	t.Run("unknown VPC", func(t *testing.T) {
		_, err := client.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("x"), Description: aws.String("x"), VpcId: aws.String("vpc-0nope")})
		wantCode(t, err, "InvalidVpcID.NotFound")
	})
	t.Run("no VPC and no default VPC", func(t *testing.T) {
		_, err := client.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("x"), Description: aws.String("x")})
		wantCode(t, err, "VPCIdNotSpecified")
	})
	t.Run("sg- name", func(t *testing.T) {
		_, err := client.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("sg-x"), Description: aws.String("x"), VpcId: aws.String(demoVPC)})
		wantCode(t, err, "InvalidParameterValue")
	})
	t.Run("delete unknown", func(t *testing.T) {
		_, err := client.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String("sg-0nope")})
		wantCode(t, err, "InvalidGroup.NotFound")
		_, err = client.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String("nope")})
		wantCode(t, err, "InvalidGroupId.Malformed")
	})
	t.Run("delete used by instance", func(t *testing.T) {
		_, err := client.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(demoNodeSG)})
		wantCode(t, err, "DependencyViolation")
	})
	t.Run("delete referenced by a rule of another group", func(t *testing.T) {
		_, err := client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(demoNodeSG),
			IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("-1"), UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String(id)}}}}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(id)})
		wantCode(t, err, "DependencyViolation")
		_, err = client.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String(demoNodeSG),
			IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("-1"), UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String(id)}}}}})
		if err != nil {
			t.Fatal(err)
		}
	})
	if _, err := client.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(id)}); err != nil {
		t.Fatal(err)
	}
	_, err = client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{id}})
	wantCode(t, err, "InvalidGroup.NotFound")
	_, err = client.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(id)})
	wantCode(t, err, "InvalidGroup.NotFound")
	if n := s.Calls("ec2", "CreateSecurityGroup"); n != 5 {
		t.Errorf("CreateSecurityGroup calls = %d, want 5", n)
	}
}

func TestAuthorizeRevokeIngress(t *testing.T) {
	_, url := demo(t)
	client := ec2Client(t, url)
	ctx := context.Background()
	id := createSG(t, client, "rules")
	perms := []ec2types.IpPermission{
		tcpFrom(80, "0.0.0.0/0", "kubernetes.io/rule/nlb/client=a123"),
		{IpProtocol: aws.String("udp"), FromPort: aws.Int32(30000), ToPort: aws.Int32(30100), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("10.0.0.0/16")}}},
		{IpProtocol: aws.String("icmp"), FromPort: aws.Int32(3), ToPort: aws.Int32(4), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0"), Description: aws.String("kubernetes.io/rule/nlb/mtu")}}},
		{IpProtocol: aws.String("-1"), UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String(demoNodeSG), Description: aws.String("from nodes")}}},
	}
	out, err := client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(id), IpPermissions: perms})
	if err != nil {
		t.Fatal(err)
	}
	if !aws.ToBool(out.Return) || len(out.SecurityGroupRules) != 4 || aws.ToString(out.SecurityGroupRules[0].CidrIpv4) != "0.0.0.0/0" ||
		aws.ToString(out.SecurityGroupRules[3].ReferencedGroupInfo.GroupId) != demoNodeSG {
		t.Errorf("authorize output = %+v", out)
	}
	sg := describeSG(t, client, id)
	got := fmt.Sprint(len(sg.IpPermissions))
	for _, p := range sg.IpPermissions {
		got += fmt.Sprintf(" %s/%d-%d", aws.ToString(p.IpProtocol), aws.ToInt32(p.FromPort), aws.ToInt32(p.ToPort))
		for _, r := range p.IpRanges {
			got += fmt.Sprintf(" %s(%s)", aws.ToString(r.CidrIp), aws.ToString(r.Description))
		}
		for _, g := range p.UserIdGroupPairs {
			got += fmt.Sprintf(" %s@%s(%s)", aws.ToString(g.GroupId), aws.ToString(g.UserId), aws.ToString(g.Description))
		}
	}
	want := "4 tcp/80-80 0.0.0.0/0(kubernetes.io/rule/nlb/client=a123) udp/30000-30100 10.0.0.0/16() icmp/3-4 0.0.0.0/0(kubernetes.io/rule/nlb/mtu) -1/0-0 " +
		demoNodeSG + "@123456789012(from nodes)"
	if got != want {
		t.Errorf("ingress =\n %s\nwant\n %s", got, want)
	}

	t.Run("duplicate", func(t *testing.T) {
		_, err := client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(id),
			IpPermissions: []ec2types.IpPermission{tcpFrom(80, "0.0.0.0/0", "other description")}})
		wantCode(t, err, "InvalidPermission.Duplicate")
	})
	t.Run("unknown group", func(t *testing.T) {
		_, err := client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String("sg-0nope"),
			IpPermissions: []ec2types.IpPermission{tcpFrom(80, "0.0.0.0/0", "")}})
		wantCode(t, err, "InvalidGroup.NotFound")
	})
	t.Run("bad CIDR", func(t *testing.T) {
		_, err := client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(id),
			IpPermissions: []ec2types.IpPermission{tcpFrom(80, "10.0.0.300/8", "")}})
		wantCode(t, err, "InvalidParameterValue")
	})
	t.Run("revoke missing", func(t *testing.T) {
		_, err := client.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String(id),
			IpPermissions: []ec2types.IpPermission{tcpFrom(81, "0.0.0.0/0", "")}})
		wantCode(t, err, "InvalidPermission.NotFound")
	})
	// Revoking ignores descriptions, as AWS does.
	if _, err := client.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String(id),
		IpPermissions: []ec2types.IpPermission{tcpFrom(80, "0.0.0.0/0", ""), perms[3]}}); err != nil {
		t.Fatal(err)
	}
	if sg := describeSG(t, client, id); len(sg.IpPermissions) != 2 || aws.ToString(sg.IpPermissions[0].IpProtocol) != "udp" {
		t.Errorf("after revoke: %+v", sg.IpPermissions)
	}
}

func TestSecurityGroupRuleLimit(t *testing.T) {
	f := lbFixture(t, 0)
	f.SecurityGroupRuleLimit = 3
	_, url := start(t, f)
	client := ec2Client(t, url)
	ctx := context.Background()
	id := createSG(t, client, "limited")
	// One permission with two CIDRs is two rules.
	two := tcpFrom(80, "10.0.0.0/8", "")
	two.IpRanges = append(two.IpRanges, ec2types.IpRange{CidrIp: aws.String("192.168.0.0/16")})
	if _, err := client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(id), IpPermissions: []ec2types.IpPermission{two}}); err != nil {
		t.Fatal(err)
	}
	_, err := client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(id),
		IpPermissions: []ec2types.IpPermission{tcpFrom(443, "10.0.0.0/8", ""), tcpFrom(444, "10.0.0.0/8", "")}})
	wantCode(t, err, "RulesPerSecurityGroupLimitExceeded")
	if sg := describeSG(t, client, id); len(sg.IpPermissions) != 1 {
		t.Errorf("a failed authorize changed the group: %+v", sg.IpPermissions)
	}
	if _, err := client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(id),
		IpPermissions: []ec2types.IpPermission{tcpFrom(443, "10.0.0.0/8", "")}}); err != nil {
		t.Fatalf("third rule within the limit: %v", err)
	}

	t.Run("IPv6 rules have their own quota", func(t *testing.T) {
		v6 := ec2types.IpPermission{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(80), ToPort: aws.Int32(80),
			Ipv6Ranges: []ec2types.Ipv6Range{{CidrIpv6: aws.String("::/0")}, {CidrIpv6: aws.String("2600::/16")}, {CidrIpv6: aws.String("2a00::/16")}}}
		if _, err := client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(id), IpPermissions: []ec2types.IpPermission{v6}}); err != nil {
			t.Fatalf("three IPv6 rules next to three IPv4 rules: %v", err)
		}
		// A group reference counts against both quotas, which are full.
		_, err := client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(id),
			IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("-1"), UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String(demoNodeSG)}}}}})
		wantCode(t, err, "RulesPerSecurityGroupLimitExceeded")
		if sg := describeSG(t, client, id); len(sg.IpPermissions[0].Ipv6Ranges) != 3 {
			t.Errorf("IPv6 ranges = %+v", sg.IpPermissions[0].Ipv6Ranges)
		}
	})
	t.Run("default limit is 60", func(t *testing.T) {
		_, url := demo(t)
		client := ec2Client(t, url)
		id := createSG(t, client, "big")
		var perms []ec2types.IpPermission
		for i := range 60 {
			perms = append(perms, tcpFrom(int32(30000+i), "0.0.0.0/0", ""))
		}
		if _, err := client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(id), IpPermissions: perms}); err != nil {
			t.Fatal(err)
		}
		_, err := client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(id),
			IpPermissions: []ec2types.IpPermission{tcpFrom(1, "0.0.0.0/0", "")}})
		wantCode(t, err, "RulesPerSecurityGroupLimitExceeded")
	})
}

func TestSecurityGroupFaults(t *testing.T) {
	s, url := demo(t)
	client := ec2Client(t, url)
	s.InjectFault(Fault{Service: "ec2", Action: "CreateSecurityGroup", Code: "UnauthorizedOperation", HTTPStatus: 403, Remaining: 1})
	_, err := client.CreateSecurityGroup(context.Background(), &ec2.CreateSecurityGroupInput{GroupName: aws.String("x"), Description: aws.String("x"), VpcId: aws.String(demoVPC)})
	wantCode(t, err, "UnauthorizedOperation")
	createSG(t, client, "x")
	if n := s.Calls("ec2", "CreateSecurityGroup"); n != 2 {
		t.Errorf("calls = %d, want 2", n)
	}
}
