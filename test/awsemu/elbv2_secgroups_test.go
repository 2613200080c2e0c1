package awsemu

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
)

// TestNLBSetSecurityGroups: an NLB created with a security group can
// change its groups (and DescribeLoadBalancers shows the new ones, which
// are then held against deletion while the old one is free); one created
// without can never get any (AWS's InvalidConfigurationRequest); unknown
// groups and unknown load balancers get AWS's error codes.
func TestNLBSetSecurityGroups(t *testing.T) {
	_, url := demo(t)
	client, ec2c := elbv2Client(t, url), ec2Client(t, url)
	ctx := context.Background()
	first, second := createSG(t, ec2c, "nlb-first"), createSG(t, ec2c, "nlb-second")
	subnets := []string{demoSubnetA}
	with := createNLB(t, client, &elbv2.CreateLoadBalancerInput{Name: aws.String("with-sg"), Subnets: subnets, SecurityGroups: []string{first}})
	without := createNLB(t, client, &elbv2.CreateLoadBalancerInput{Name: aws.String("without-sg"), Subnets: subnets})

	out, err := client.SetSecurityGroups(ctx, &elbv2.SetSecurityGroupsInput{LoadBalancerArn: with.LoadBalancerArn, SecurityGroups: []string{second}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.SecurityGroupIds, []string{second}) {
		t.Errorf("SetSecurityGroups returned %v, want [%s]", out.SecurityGroupIds, second)
	}
	d, err := client.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{LoadBalancerArns: []string{aws.ToString(with.LoadBalancerArn)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.LoadBalancers[0].SecurityGroups; !slices.Equal(got, []string{second}) {
		t.Errorf("described security groups %v, want [%s]", got, second)
	}
	_, err = ec2c.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(second)})
	wantCode(t, err, "DependencyViolation")
	if _, err := ec2c.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(first)}); err != nil {
		t.Errorf("deleting the group the NLB no longer uses: %v", err)
	}

	_, err = client.SetSecurityGroups(ctx, &elbv2.SetSecurityGroupsInput{LoadBalancerArn: without.LoadBalancerArn, SecurityGroups: []string{second}})
	wantCode(t, err, "InvalidConfigurationRequest")
	var ic *elbv2types.InvalidConfigurationRequestException
	if !errors.As(err, &ic) {
		t.Errorf("error %v is not the SDK's InvalidConfigurationRequestException", err)
	}
	_, err = client.SetSecurityGroups(ctx, &elbv2.SetSecurityGroupsInput{LoadBalancerArn: with.LoadBalancerArn, SecurityGroups: []string{"sg-0000000000000dead"}})
	wantCode(t, err, "InvalidSecurityGroup")
	_, err = client.SetSecurityGroups(ctx, &elbv2.SetSecurityGroupsInput{LoadBalancerArn: aws.String("arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/net/gone/0123456789abcdef"), SecurityGroups: []string{second}})
	wantCode(t, err, "LoadBalancerNotFound")
}
