package awsapi

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
)

// How the code reaches AWS: every package that calls AWS declares a struct
// of function fields listing only the operations it calls, filled from the
// SDK client's method values (lb.EC2, instances.EC2, ...); tests fill only
// the fields they use.
//
// Why not small interfaces satisfied by *ec2.Client: converting an SDK
// client to any interface makes the linker keep every exported method of the
// client, because the Kubernetes libraries use reflect's Method; EC2 alone
// has 812. Measured (docs/design.md, "How the code reaches AWS"): awsccmctl
// went from 131 MB to 83 MB when preflight's interfaces became method
// values. A method value keeps only that method.
//
// The SDK's paginators want an interface with the one operation; the func
// types below provide it, so a field of type DescribeInstancesFunc can be
// handed to ec2.NewDescribeInstancesPaginator directly.

// DescribeInstancesFunc is ec2.Client.DescribeInstances as a value.
type DescribeInstancesFunc func(context.Context, *ec2.DescribeInstancesInput, ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error)

// DescribeInstances lets f serve as ec2.DescribeInstancesAPIClient.
func (f DescribeInstancesFunc) DescribeInstances(ctx context.Context, in *ec2.DescribeInstancesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error) {
	return f(ctx, in, optFns...)
}

// DescribeSubnetsFunc is ec2.Client.DescribeSubnets as a value.
type DescribeSubnetsFunc func(context.Context, *ec2.DescribeSubnetsInput, ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error)

// DescribeSubnets lets f serve as ec2.DescribeSubnetsAPIClient.
func (f DescribeSubnetsFunc) DescribeSubnets(ctx context.Context, in *ec2.DescribeSubnetsInput, optFns ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error) {
	return f(ctx, in, optFns...)
}

// DescribeSecurityGroupsFunc is ec2.Client.DescribeSecurityGroups as a value.
type DescribeSecurityGroupsFunc func(context.Context, *ec2.DescribeSecurityGroupsInput, ...func(*ec2.Options)) (*ec2.DescribeSecurityGroupsOutput, error)

// DescribeSecurityGroups lets f serve as ec2.DescribeSecurityGroupsAPIClient.
func (f DescribeSecurityGroupsFunc) DescribeSecurityGroups(ctx context.Context, in *ec2.DescribeSecurityGroupsInput, optFns ...func(*ec2.Options)) (*ec2.DescribeSecurityGroupsOutput, error) {
	return f(ctx, in, optFns...)
}

// DescribeRouteTablesFunc is ec2.Client.DescribeRouteTables as a value.
type DescribeRouteTablesFunc func(context.Context, *ec2.DescribeRouteTablesInput, ...func(*ec2.Options)) (*ec2.DescribeRouteTablesOutput, error)

// DescribeRouteTables lets f serve as ec2.DescribeRouteTablesAPIClient.
func (f DescribeRouteTablesFunc) DescribeRouteTables(ctx context.Context, in *ec2.DescribeRouteTablesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeRouteTablesOutput, error) {
	return f(ctx, in, optFns...)
}

// DescribeClassicLoadBalancersFunc is elasticloadbalancing.Client.DescribeLoadBalancers as a value.
type DescribeClassicLoadBalancersFunc func(context.Context, *elb.DescribeLoadBalancersInput, ...func(*elb.Options)) (*elb.DescribeLoadBalancersOutput, error)

// DescribeLoadBalancers lets f serve as elasticloadbalancing.DescribeLoadBalancersAPIClient.
func (f DescribeClassicLoadBalancersFunc) DescribeLoadBalancers(ctx context.Context, in *elb.DescribeLoadBalancersInput, optFns ...func(*elb.Options)) (*elb.DescribeLoadBalancersOutput, error) {
	return f(ctx, in, optFns...)
}

// DescribeLoadBalancersV2Func is elasticloadbalancingv2.Client.DescribeLoadBalancers as a value.
type DescribeLoadBalancersV2Func func(context.Context, *elbv2.DescribeLoadBalancersInput, ...func(*elbv2.Options)) (*elbv2.DescribeLoadBalancersOutput, error)

// DescribeLoadBalancers lets f serve as elasticloadbalancingv2.DescribeLoadBalancersAPIClient.
func (f DescribeLoadBalancersV2Func) DescribeLoadBalancers(ctx context.Context, in *elbv2.DescribeLoadBalancersInput, optFns ...func(*elbv2.Options)) (*elbv2.DescribeLoadBalancersOutput, error) {
	return f(ctx, in, optFns...)
}

// SimulatePrincipalPolicyFunc is iam.Client.SimulatePrincipalPolicy as a value.
type SimulatePrincipalPolicyFunc func(context.Context, *iam.SimulatePrincipalPolicyInput, ...func(*iam.Options)) (*iam.SimulatePrincipalPolicyOutput, error)

// SimulatePrincipalPolicy lets f serve as iam.SimulatePrincipalPolicyAPIClient.
func (f SimulatePrincipalPolicyFunc) SimulatePrincipalPolicy(ctx context.Context, in *iam.SimulatePrincipalPolicyInput, optFns ...func(*iam.Options)) (*iam.SimulatePrincipalPolicyOutput, error) {
	return f(ctx, in, optFns...)
}
