// Package awsemu is a wire-level AWS emulator for integration tests,
// benchmarks and demos of the cloud controller manager.
//
// A Server is one http.Handler that speaks the real AWS protocols, so the
// real aws-sdk-go-v2 clients run unchanged against it: SigV4 signing,
// retries, pagination and error decoding are all exercised.
//
//   - EC2 (ec2query, Version 2016-11-15): DescribeInstances,
//     DescribeAvailabilityZones, DescribeSubnets, DescribeSecurityGroups,
//     DescribeRouteTables, DescribeVpcs, DescribeInstanceTopology (network
//     nodes of the topology instance types, ec2_topology.go), CreateTags,
//     DeleteTags, and the
//     security group calls of the load-balancer code (ec2_sg.go):
//     CreateSecurityGroup, DeleteSecurityGroup (DependencyViolation while a
//     rule of another group, an instance or a load balancer uses the
//     group), AuthorizeSecurityGroupIngress and RevokeSecurityGroupIngress
//     (per-group quota of ingress rules, Fixture.SecurityGroupRuleLimit;
//     revoking a missing rule fails with InvalidPermission.NotFound except
//     in the default VPC, where it succeeds with UnknownIpPermissions), and
//     the route calls of the route controller (ec2_routes.go): CreateRoute,
//     ReplaceRoute and DeleteRoute (IPv4 or IPv6 destinations to a gateway,
//     an instance or a network interface; per-table quota of routes,
//     Fixture.RouteLimit; routes to a terminated or removed instance turn
//     blackhole) and ModifyInstanceAttribute (SourceDestCheck only; refused
//     with InvalidInstanceID on an instance with several network
//     interfaces, as EC2 does), and ModifyNetworkInterfaceAttribute
//     (SourceDestCheck of one interface, ec2_network_attr.go; an
//     instance's check is its primary interface's) with
//     DescribeNetworkInterfaces (each interface's check, tags and
//     attachment, ec2_network_describe.go).
//   - STS (awsQuery, Version 2011-06-15): GetCallerIdentity, AssumeRole,
//     and AssumeRoleWithWebIdentity, served unsigned as AWS does: the token
//     (a JWT, signature not verified) must satisfy the role's trust policy,
//     and the credentials act as the role (sts_webidentity.go).
//   - IAM (awsQuery, Version 2010-05-08): GetInstanceProfile, GetRole,
//     ListAttachedRolePolicies, ListRolePolicies, GetRolePolicy, GetPolicy,
//     GetPolicyVersion and SimulatePrincipalPolicy, which really evaluates
//     the seeded policies (Allow/Deny, wildcards, tag conditions). Clients
//     find it through AWS_ENDPOINT_URL or AWS_ENDPOINT_URL_IAM.
//   - Classic ELB (awsQuery, Version 2012-06-01): DescribeLoadBalancers,
//     DescribeTags, and (elb_mutate.go) CreateLoadBalancer,
//     DeleteLoadBalancer, AddTags, RemoveTags, CreateLoadBalancerListeners,
//     DeleteLoadBalancerListeners, ConfigureHealthCheck,
//     RegisterInstancesWithLoadBalancer,
//     DeregisterInstancesFromLoadBalancer, DescribeInstanceHealth,
//     DescribeLoadBalancerAttributes, ModifyLoadBalancerAttributes,
//     ApplySecurityGroupsToLoadBalancer, AttachLoadBalancerToSubnets,
//     DetachLoadBalancerFromSubnets, CreateLoadBalancerPolicy,
//     DeleteLoadBalancerPolicy, DescribeLoadBalancerPolicies,
//     SetLoadBalancerPoliciesOfListener and
//     SetLoadBalancerPoliciesForBackendServer. VPC load balancers only
//     (Subnets, not AvailabilityZones).
//   - ELBv2 (awsQuery, Version 2015-12-01): DescribeLoadBalancers,
//     DescribeTags, DescribeTargetGroups, DescribeListeners, and for
//     Network load balancers with instance targets (elbv2_mutate.go)
//     CreateLoadBalancer, DeleteLoadBalancer,
//     DescribeLoadBalancerAttributes, ModifyLoadBalancerAttributes,
//     CreateTargetGroup, DeleteTargetGroup, ModifyTargetGroup,
//     DescribeTargetGroupAttributes, ModifyTargetGroupAttributes,
//     RegisterTargets, DeregisterTargets, DescribeTargetHealth,
//     CreateListener, DeleteListener, ModifyListener, SetSecurityGroups
//     (elbv2_secgroups.go: refused for an NLB created without groups),
//     AddTags and RemoveTags. Targets are healthy while their instance
//     runs; health checks are not simulated.
//   - ECR (JSON 1.1, X-Amz-Target AmazonEC2ContainerRegistry_V20150921.*):
//     GetAuthorizationToken (ecr.go), a base64 AWS:<password> token valid
//     for ECRTokenLifetime. JSON requests are routed by X-Amz-Target
//     (server_json.go); errors are {"__type", "message"}.
//   - ECR Public (JSON 1.1, X-Amz-Target SpencerFrontendService.*):
//     GetAuthorizationToken (ecr_public.go), the same kind of token; IAM
//     enforcement requires ecr-public:GetAuthorizationToken and
//     sts:GetServiceBearerToken as AWS does.
//   - IMDSv2 under /latest/: token flow and the metadata paths the CCM and
//     the SDK read (instance-id, placement, local-ipv4, macs, the instance
//     identity document, ...).
//
// API requests are form POSTs to "/". The service is taken from the SigV4
// credential scope of the Authorization header (signatures are not
// verified) and the operation from the Action parameter. Service names used
// by call accounting and fault injection are those signing names ("ec2",
// "sts") and "iam", "elasticloadbalancing" for Classic ELB and
// "elasticloadbalancingv2" for ELBv2 (both are signed as
// "elasticloadbalancing"), "ecr" for ECR, "ecr-public" for ECR Public,
// plus "imds" for the metadata service, whose action is the path below
// /latest/ (for example "api/token" or "meta-data/instance-id").
//
// State is an in-memory model seeded from a Fixture (Go literal or YAML file
// via LoadFixture) and changed through the Go API (AddInstance,
// SetInstanceState, ...) or through mutating API calls (CreateTags,
// CreateSecurityGroup, CreateLoadBalancer, ...). Load balancer DNS names and
// ARNs use the aws-cn partition (amazonaws.com.cn, arn:aws-cn:) in cn-
// regions.
// Tests inspect the load-balancing model directly (inventory.go):
// ClassicLoadBalancers, NetworkLoadBalancers, TargetGroups, SecurityGroups,
// SecurityGroupsNamed and Inventory return deep copies.
// Faults (throttling, 5xx, latency) are injected with InjectFault, EC2
// eventual consistency is modelled with SetVisibilityDelay, and every
// request is counted (Calls, CallCounts).
//
// Pointing a client at the emulator needs no code in the client:
//
//	srv, url, stop, err := awsemu.Start(fixture)
//	defer stop()
//	cfg, _ := config.LoadDefaultConfig(ctx,
//		config.WithRegion("us-east-1"),
//		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")))
//	client := ec2.NewFromConfig(cfg, func(o *ec2.Options) {
//		o.BaseEndpoint = aws.String(url)
//		o.HTTPClient = awsemu.HTTPClient() // exact call counts, see SetResponseDelay
//	})
//	meta := imds.New(imds.Options{Endpoint: url})
//
// Out of process, the same endpoints are reached through AWS_ENDPOINT_URL_EC2,
// AWS_ENDPOINT_URL_STS and AWS_EC2_METADATA_SERVICE_ENDPOINT; the
// cmd/aws-emulator command serves a fixture file on 127.0.0.1.
//
// Tests start one with StartT, which stops it at the test's cleanup, and
// point the SDK at it through the environment (Emulator.Env, or IMDSEnv as
// on an EC2 instance); a TestMain uses Serve or Start. DemoFixture is the
// demo cluster most tests seed it with.
//
// Every service is the same shape (server.go): its state in its own struct
// behind its own lock, and an action table from Action to handler. Adding
// a service is one file: the state, a constructor returning its *service,
// and one line in New. Services read each other's state only through
// small methods that take the other's lock (ec2_state.go); ELB's lock is
// always taken before EC2's. ELB classic (2012-06-01) and ELBv2
// (2015-12-01) share the signing name "elasticloadbalancing"; the router
// tells them apart by the Version parameter, and they share the tag calls
// (elb_tags.go).
package awsemu
