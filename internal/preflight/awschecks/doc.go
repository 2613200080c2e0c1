// Package awschecks holds the AWS checks of `awsccmctl preflight`: who the
// caller is, whether the cluster ID is known and consistent, whether the
// cluster's instances exist, whether subnets and security groups carry the
// tags the CCM looks for, whether the control-plane instances' IMDS settings
// fit how the CCM will run, and whether the principal the CCM will run as is
// granted every AWS action the CCM calls (simulated by IAM, with the cluster's
// resource tag in the context so tag conditions are really evaluated), and
// what the CCM would do with the existing load balancers of the cluster's
// LoadBalancer Services (adopt, fight over, leak or replace them).
//
// Checks builds the list; every check is present in every run so reports
// have the same shape, and a check that has nothing to look at is skipped
// with the reason. AWS is reached through structs of the calls made here
// (API: EC2, STS, IAM, ELB, ELBv2), filled from the SDK clients' method
// values by NewAPI, and every call is batched: the instances are described
// once for all checks together, one DescribeInstances per 150 instance IDs,
// or past 150 one per 1,000 cluster-tagged instances then one per 150 IDs
// left over (internal/instances' way), one DescribeSubnets, one
// DescribeSecurityGroups per 200 groups, one paginated
// SimulatePrincipalPolicy per principal, one paginated
// DescribeLoadBalancers per load-balancing API (400 a page) and one
// DescribeTags per 20 load balancers named like a Service's. Every action is
// registered in internal/awsapi for the preflight component, so
// iam/preflight-policy.json grants exactly what these checks need. The
// checks only read.
package awschecks
