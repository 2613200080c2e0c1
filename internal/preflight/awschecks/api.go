package awschecks

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
)

// The AWS operations these checks call, as structs of function fields
// filled from the SDK clients' method values (NewAPI); tests fill only the
// fields they use. internal/awsapi's calls.go says why not interfaces. The
// paginated operations have awsapi's func types, which serve the SDK
// paginators directly.

// EC2 lists the EC2 calls of these checks.
type EC2 struct {
	DescribeInstances      awsapi.DescribeInstancesFunc
	DescribeSubnets        awsapi.DescribeSubnetsFunc
	DescribeSecurityGroups awsapi.DescribeSecurityGroupsFunc
	DescribeRouteTables    awsapi.DescribeRouteTablesFunc
}

// STS lists the STS call of these checks.
type STS struct {
	GetCallerIdentity func(context.Context, *sts.GetCallerIdentityInput, ...func(*sts.Options)) (*sts.GetCallerIdentityOutput, error)
}

// IAM lists the IAM calls of these checks.
type IAM struct {
	GetInstanceProfile      func(context.Context, *iam.GetInstanceProfileInput, ...func(*iam.Options)) (*iam.GetInstanceProfileOutput, error)
	GetRole                 func(context.Context, *iam.GetRoleInput, ...func(*iam.Options)) (*iam.GetRoleOutput, error)
	SimulatePrincipalPolicy awsapi.SimulatePrincipalPolicyFunc
}

// ELB lists the Classic Elastic Load Balancing calls of these checks.
type ELB struct {
	DescribeLoadBalancers awsapi.DescribeClassicLoadBalancersFunc
	DescribeTags          func(context.Context, *elb.DescribeTagsInput, ...func(*elb.Options)) (*elb.DescribeTagsOutput, error)
}

// ELBv2 lists the ELBv2 calls of these checks.
type ELBv2 struct {
	DescribeLoadBalancers awsapi.DescribeLoadBalancersV2Func
	DescribeTags          func(context.Context, *elbv2.DescribeTagsInput, ...func(*elbv2.Options)) (*elbv2.DescribeTagsOutput, error)
}

// API is every AWS call of these checks. A service whose calls are nil is
// not there: without STS aws-identity fails and every other check is
// skipped, without IAM aws-iam-permissions is skipped, without ELB and
// ELBv2 aws-load-balancers is skipped.
type API struct {
	EC2   EC2
	STS   STS
	IAM   IAM
	ELB   ELB
	ELBv2 ELBv2
}

// NewAPI takes the calls from the regional clients (awsapi.NewClients) and
// the IAM client (awsapi.NewIAM); a nil client leaves its calls nil.
func NewAPI(c *awsapi.Clients, iamClient *iam.Client) API {
	var a API
	if c != nil {
		if c.EC2 != nil {
			a.EC2 = NewEC2(c.EC2)
		}
		if c.STS != nil {
			a.STS = STS{GetCallerIdentity: c.STS.GetCallerIdentity}
		}
		if c.ELB != nil {
			a.ELB = ELB{DescribeLoadBalancers: c.ELB.DescribeLoadBalancers, DescribeTags: c.ELB.DescribeTags}
		}
		if c.ELBv2 != nil {
			a.ELBv2 = ELBv2{DescribeLoadBalancers: c.ELBv2.DescribeLoadBalancers, DescribeTags: c.ELBv2.DescribeTags}
		}
	}
	if iamClient != nil {
		a.IAM = IAM{GetInstanceProfile: iamClient.GetInstanceProfile, GetRole: iamClient.GetRole,
			SimulatePrincipalPolicy: iamClient.SimulatePrincipalPolicy}
	}
	return a
}

// NewEC2 takes the EC2 calls from a client.
func NewEC2(c *ec2.Client) EC2 {
	return EC2{DescribeInstances: c.DescribeInstances, DescribeSubnets: c.DescribeSubnets,
		DescribeSecurityGroups: c.DescribeSecurityGroups, DescribeRouteTables: c.DescribeRouteTables}
}
