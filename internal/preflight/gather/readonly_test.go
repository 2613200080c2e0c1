package gather

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
)

// TestClientsAreReadOnly: the clients preflight builds refuse every call
// that could change AWS before sending it, naming the operation, and the
// emulator sees none of them; read calls on the same clients still go
// through.
func TestClientsAreReadOnly(t *testing.T) {
	srv := emulatorEnv(t)
	ctx := t.Context()
	c, iamClient, err := newReadOnlyClients(ctx, awsapi.Options{Region: "us-east-1", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	mutating := []struct {
		service, op string
		call        func(context.Context) error
	}{
		{"ec2", "CreateTags", func(ctx context.Context) error {
			_, err := c.EC2.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{"i-0a1b2c3d4e5f60001"},
				Tags: []ec2types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}})
			return err
		}},
		{"ec2", "TerminateInstances", func(ctx context.Context) error {
			_, err := c.EC2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{"i-0a1b2c3d4e5f60001"}})
			return err
		}},
		{"elasticloadbalancing", "DeleteLoadBalancer", func(ctx context.Context) error {
			_, err := c.ELB.DeleteLoadBalancer(ctx, &elb.DeleteLoadBalancerInput{LoadBalancerName: aws.String("a")})
			return err
		}},
		{"elasticloadbalancingv2", "DeleteLoadBalancer", func(ctx context.Context) error {
			_, err := c.ELBv2.DeleteLoadBalancer(ctx, &elbv2.DeleteLoadBalancerInput{LoadBalancerArn: aws.String("arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/net/a/1")})
			return err
		}},
		{"iam", "PutRolePolicy", func(ctx context.Context) error {
			_, err := iamClient.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String("control-plane"), PolicyName: aws.String("p"), PolicyDocument: aws.String("{}")})
			return err
		}},
		{"sts", "AssumeRole", func(ctx context.Context) error {
			_, err := c.STS.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::123456789012:role/control-plane"), RoleSessionName: aws.String("s")})
			return err
		}},
	}
	for _, m := range mutating {
		err := m.call(ctx)
		var ro *ReadOnlyError
		if !errors.As(err, &ro) || ro.Operation != m.op {
			t.Errorf("%s %s: error %v, want a *ReadOnlyError naming %s", m.service, m.op, err, m.op)
		}
		if n := srv.Calls(m.service, m.op); n != 0 {
			t.Errorf("%s %s reached the emulator %d times", m.service, m.op, n)
		}
	}
	for _, call := range srv.CallLog() {
		if call.Mutating() {
			t.Errorf("the emulator received %s %s", call.Service, call.Action)
		}
	}
	if _, err := c.EC2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{}); err != nil {
		t.Errorf("DescribeInstances through the read-only client: %v", err)
	}
	if _, err := c.STS.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}); err != nil {
		t.Errorf("GetCallerIdentity through the read-only client: %v", err)
	}
	if srv.Calls("ec2", "DescribeInstances") != 1 || srv.Calls("sts", "GetCallerIdentity") != 1 {
		t.Errorf("read calls did not reach the emulator: %v", srv.CallCounts())
	}
}
