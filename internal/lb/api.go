package lb

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
)

// The AWS calls the reconciler makes, as function values rather than
// interfaces: converting an SDK client to an interface makes the linker
// keep every method of it (see internal/awsapi/calls.go). NewEC2 and
// friends fill them from real clients; unit tests fill only what they use.

// EC2 lists the EC2 operations the reconciler calls.
type EC2 struct {
	DescribeSubnets               func(context.Context, *ec2.DescribeSubnetsInput, ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error)
	DescribeRouteTables           func(context.Context, *ec2.DescribeRouteTablesInput, ...func(*ec2.Options)) (*ec2.DescribeRouteTablesOutput, error)
	DescribeAvailabilityZones     func(context.Context, *ec2.DescribeAvailabilityZonesInput, ...func(*ec2.Options)) (*ec2.DescribeAvailabilityZonesOutput, error)
	DescribeSecurityGroups        func(context.Context, *ec2.DescribeSecurityGroupsInput, ...func(*ec2.Options)) (*ec2.DescribeSecurityGroupsOutput, error)
	CreateSecurityGroup           func(context.Context, *ec2.CreateSecurityGroupInput, ...func(*ec2.Options)) (*ec2.CreateSecurityGroupOutput, error)
	DeleteSecurityGroup           func(context.Context, *ec2.DeleteSecurityGroupInput, ...func(*ec2.Options)) (*ec2.DeleteSecurityGroupOutput, error)
	AuthorizeSecurityGroupIngress func(context.Context, *ec2.AuthorizeSecurityGroupIngressInput, ...func(*ec2.Options)) (*ec2.AuthorizeSecurityGroupIngressOutput, error)
	RevokeSecurityGroupIngress    func(context.Context, *ec2.RevokeSecurityGroupIngressInput, ...func(*ec2.Options)) (*ec2.RevokeSecurityGroupIngressOutput, error)
	CreateTags                    func(context.Context, *ec2.CreateTagsInput, ...func(*ec2.Options)) (*ec2.CreateTagsOutput, error)
}

// NewEC2 takes the calls from a client.
func NewEC2(c *ec2.Client) EC2 {
	return EC2{
		DescribeSubnets: c.DescribeSubnets, DescribeRouteTables: c.DescribeRouteTables,
		DescribeAvailabilityZones: c.DescribeAvailabilityZones, DescribeSecurityGroups: c.DescribeSecurityGroups,
		CreateSecurityGroup: c.CreateSecurityGroup, DeleteSecurityGroup: c.DeleteSecurityGroup,
		AuthorizeSecurityGroupIngress: c.AuthorizeSecurityGroupIngress, RevokeSecurityGroupIngress: c.RevokeSecurityGroupIngress,
		CreateTags: c.CreateTags,
	}
}

// ELB lists the Classic Elastic Load Balancing operations the reconciler calls.
type ELB struct {
	DescribeLoadBalancers                   func(context.Context, *elb.DescribeLoadBalancersInput, ...func(*elb.Options)) (*elb.DescribeLoadBalancersOutput, error)
	DescribeTags                            func(context.Context, *elb.DescribeTagsInput, ...func(*elb.Options)) (*elb.DescribeTagsOutput, error)
	DescribeLoadBalancerAttributes          func(context.Context, *elb.DescribeLoadBalancerAttributesInput, ...func(*elb.Options)) (*elb.DescribeLoadBalancerAttributesOutput, error)
	CreateLoadBalancer                      func(context.Context, *elb.CreateLoadBalancerInput, ...func(*elb.Options)) (*elb.CreateLoadBalancerOutput, error)
	DeleteLoadBalancer                      func(context.Context, *elb.DeleteLoadBalancerInput, ...func(*elb.Options)) (*elb.DeleteLoadBalancerOutput, error)
	CreateLoadBalancerListeners             func(context.Context, *elb.CreateLoadBalancerListenersInput, ...func(*elb.Options)) (*elb.CreateLoadBalancerListenersOutput, error)
	DeleteLoadBalancerListeners             func(context.Context, *elb.DeleteLoadBalancerListenersInput, ...func(*elb.Options)) (*elb.DeleteLoadBalancerListenersOutput, error)
	AttachLoadBalancerToSubnets             func(context.Context, *elb.AttachLoadBalancerToSubnetsInput, ...func(*elb.Options)) (*elb.AttachLoadBalancerToSubnetsOutput, error)
	DetachLoadBalancerFromSubnets           func(context.Context, *elb.DetachLoadBalancerFromSubnetsInput, ...func(*elb.Options)) (*elb.DetachLoadBalancerFromSubnetsOutput, error)
	ApplySecurityGroupsToLoadBalancer       func(context.Context, *elb.ApplySecurityGroupsToLoadBalancerInput, ...func(*elb.Options)) (*elb.ApplySecurityGroupsToLoadBalancerOutput, error)
	ConfigureHealthCheck                    func(context.Context, *elb.ConfigureHealthCheckInput, ...func(*elb.Options)) (*elb.ConfigureHealthCheckOutput, error)
	ModifyLoadBalancerAttributes            func(context.Context, *elb.ModifyLoadBalancerAttributesInput, ...func(*elb.Options)) (*elb.ModifyLoadBalancerAttributesOutput, error)
	RegisterInstancesWithLoadBalancer       func(context.Context, *elb.RegisterInstancesWithLoadBalancerInput, ...func(*elb.Options)) (*elb.RegisterInstancesWithLoadBalancerOutput, error)
	DeregisterInstancesFromLoadBalancer     func(context.Context, *elb.DeregisterInstancesFromLoadBalancerInput, ...func(*elb.Options)) (*elb.DeregisterInstancesFromLoadBalancerOutput, error)
	CreateLoadBalancerPolicy                func(context.Context, *elb.CreateLoadBalancerPolicyInput, ...func(*elb.Options)) (*elb.CreateLoadBalancerPolicyOutput, error)
	SetLoadBalancerPoliciesForBackendServer func(context.Context, *elb.SetLoadBalancerPoliciesForBackendServerInput, ...func(*elb.Options)) (*elb.SetLoadBalancerPoliciesForBackendServerOutput, error)
	SetLoadBalancerPoliciesOfListener       func(context.Context, *elb.SetLoadBalancerPoliciesOfListenerInput, ...func(*elb.Options)) (*elb.SetLoadBalancerPoliciesOfListenerOutput, error)
	AddTags                                 func(context.Context, *elb.AddTagsInput, ...func(*elb.Options)) (*elb.AddTagsOutput, error)
}

// NewELB takes the calls from a client.
func NewELB(c *elb.Client) ELB {
	return ELB{
		DescribeLoadBalancers: c.DescribeLoadBalancers, DescribeTags: c.DescribeTags,
		DescribeLoadBalancerAttributes: c.DescribeLoadBalancerAttributes,
		CreateLoadBalancer:             c.CreateLoadBalancer, DeleteLoadBalancer: c.DeleteLoadBalancer,
		CreateLoadBalancerListeners: c.CreateLoadBalancerListeners, DeleteLoadBalancerListeners: c.DeleteLoadBalancerListeners,
		AttachLoadBalancerToSubnets: c.AttachLoadBalancerToSubnets, DetachLoadBalancerFromSubnets: c.DetachLoadBalancerFromSubnets,
		ApplySecurityGroupsToLoadBalancer: c.ApplySecurityGroupsToLoadBalancer, ConfigureHealthCheck: c.ConfigureHealthCheck,
		ModifyLoadBalancerAttributes:      c.ModifyLoadBalancerAttributes,
		RegisterInstancesWithLoadBalancer: c.RegisterInstancesWithLoadBalancer, DeregisterInstancesFromLoadBalancer: c.DeregisterInstancesFromLoadBalancer,
		CreateLoadBalancerPolicy: c.CreateLoadBalancerPolicy, SetLoadBalancerPoliciesForBackendServer: c.SetLoadBalancerPoliciesForBackendServer,
		SetLoadBalancerPoliciesOfListener: c.SetLoadBalancerPoliciesOfListener, AddTags: c.AddTags,
	}
}

// ELBv2 lists the Elastic Load Balancing v2 operations the reconciler calls.
type ELBv2 struct {
	DescribeLoadBalancers          func(context.Context, *elbv2.DescribeLoadBalancersInput, ...func(*elbv2.Options)) (*elbv2.DescribeLoadBalancersOutput, error)
	DescribeTags                   func(context.Context, *elbv2.DescribeTagsInput, ...func(*elbv2.Options)) (*elbv2.DescribeTagsOutput, error)
	DescribeListeners              func(context.Context, *elbv2.DescribeListenersInput, ...func(*elbv2.Options)) (*elbv2.DescribeListenersOutput, error)
	DescribeTargetGroups           func(context.Context, *elbv2.DescribeTargetGroupsInput, ...func(*elbv2.Options)) (*elbv2.DescribeTargetGroupsOutput, error)
	DescribeTargetHealth           func(context.Context, *elbv2.DescribeTargetHealthInput, ...func(*elbv2.Options)) (*elbv2.DescribeTargetHealthOutput, error)
	DescribeLoadBalancerAttributes func(context.Context, *elbv2.DescribeLoadBalancerAttributesInput, ...func(*elbv2.Options)) (*elbv2.DescribeLoadBalancerAttributesOutput, error)
	DescribeTargetGroupAttributes  func(context.Context, *elbv2.DescribeTargetGroupAttributesInput, ...func(*elbv2.Options)) (*elbv2.DescribeTargetGroupAttributesOutput, error)
	CreateLoadBalancer             func(context.Context, *elbv2.CreateLoadBalancerInput, ...func(*elbv2.Options)) (*elbv2.CreateLoadBalancerOutput, error)
	DeleteLoadBalancer             func(context.Context, *elbv2.DeleteLoadBalancerInput, ...func(*elbv2.Options)) (*elbv2.DeleteLoadBalancerOutput, error)
	CreateListener                 func(context.Context, *elbv2.CreateListenerInput, ...func(*elbv2.Options)) (*elbv2.CreateListenerOutput, error)
	ModifyListener                 func(context.Context, *elbv2.ModifyListenerInput, ...func(*elbv2.Options)) (*elbv2.ModifyListenerOutput, error)
	DeleteListener                 func(context.Context, *elbv2.DeleteListenerInput, ...func(*elbv2.Options)) (*elbv2.DeleteListenerOutput, error)
	CreateTargetGroup              func(context.Context, *elbv2.CreateTargetGroupInput, ...func(*elbv2.Options)) (*elbv2.CreateTargetGroupOutput, error)
	ModifyTargetGroup              func(context.Context, *elbv2.ModifyTargetGroupInput, ...func(*elbv2.Options)) (*elbv2.ModifyTargetGroupOutput, error)
	DeleteTargetGroup              func(context.Context, *elbv2.DeleteTargetGroupInput, ...func(*elbv2.Options)) (*elbv2.DeleteTargetGroupOutput, error)
	RegisterTargets                func(context.Context, *elbv2.RegisterTargetsInput, ...func(*elbv2.Options)) (*elbv2.RegisterTargetsOutput, error)
	DeregisterTargets              func(context.Context, *elbv2.DeregisterTargetsInput, ...func(*elbv2.Options)) (*elbv2.DeregisterTargetsOutput, error)
	ModifyLoadBalancerAttributes   func(context.Context, *elbv2.ModifyLoadBalancerAttributesInput, ...func(*elbv2.Options)) (*elbv2.ModifyLoadBalancerAttributesOutput, error)
	ModifyTargetGroupAttributes    func(context.Context, *elbv2.ModifyTargetGroupAttributesInput, ...func(*elbv2.Options)) (*elbv2.ModifyTargetGroupAttributesOutput, error)
	AddTags                        func(context.Context, *elbv2.AddTagsInput, ...func(*elbv2.Options)) (*elbv2.AddTagsOutput, error)
}

// NewELBv2 takes the calls from a client.
func NewELBv2(c *elbv2.Client) ELBv2 {
	return ELBv2{
		DescribeLoadBalancers: c.DescribeLoadBalancers, DescribeTags: c.DescribeTags, DescribeListeners: c.DescribeListeners,
		DescribeTargetGroups: c.DescribeTargetGroups, DescribeTargetHealth: c.DescribeTargetHealth,
		DescribeLoadBalancerAttributes: c.DescribeLoadBalancerAttributes, DescribeTargetGroupAttributes: c.DescribeTargetGroupAttributes,
		CreateLoadBalancer: c.CreateLoadBalancer, DeleteLoadBalancer: c.DeleteLoadBalancer,
		CreateListener: c.CreateListener, ModifyListener: c.ModifyListener, DeleteListener: c.DeleteListener,
		CreateTargetGroup: c.CreateTargetGroup, ModifyTargetGroup: c.ModifyTargetGroup, DeleteTargetGroup: c.DeleteTargetGroup,
		RegisterTargets: c.RegisterTargets, DeregisterTargets: c.DeregisterTargets,
		ModifyLoadBalancerAttributes: c.ModifyLoadBalancerAttributes, ModifyTargetGroupAttributes: c.ModifyTargetGroupAttributes,
		AddTags: c.AddTags,
	}
}
