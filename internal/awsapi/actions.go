package awsapi

import (
	"fmt"
	"slices"
	"strings"
)

// Service IDs as the SDK reports them (smithy service IDs). These are the
// keys the guard middleware sees at run time.
const (
	ServiceEC2   = "EC2"
	ServiceSTS   = "STS"
	ServiceELB   = "Elastic Load Balancing"
	ServiceELBv2 = "Elastic Load Balancing v2"
	ServiceIAM   = "IAM"
	ServiceECR   = "ECR"
	// ServiceECRPublic is ECR Public (IAM prefix ecr-public).
	ServiceECRPublic = "ECR PUBLIC"
)

// Component names who calls an action; iam/ has one policy per component.
const (
	ComponentCCM       = "ccm"
	ComponentPreflight = "preflight"
	// ComponentNode is every node's instance role: the kubelet runs
	// ecr-credential-provider with it, and the container runtime pulls
	// with the token.
	ComponentNode = "node"
)

// Action is one AWS API operation the code calls.
type Action struct {
	// Service is the SDK service ID (ServiceEC2, ...).
	Service string
	// Operation is the API operation name, e.g. DescribeInstances.
	Operation string
	// Mutating is true when the call changes AWS state; least-privilege
	// policies scope these with tag conditions (Scope).
	Mutating bool
	// Scope says how the least-privilege policy limits a mutating action to
	// the cluster's resources; reads are ScopeNone.
	Scope Scope
	// Unscoped explains, for a mutating action with ScopeNone, why IAM
	// cannot limit it to the cluster (it is then granted on "*").
	Unscoped string
	// CreatesIn is, for a ScopeRequestTag creation that IAM also authorizes
	// on an existing parent resource, that resource's ARN pattern. EC2
	// evaluates aws:RequestTag only on the resources being created, so the
	// parent needs a grant without the request-tag condition.
	CreatesIn string
	// Retags is true for the tagging actions of a ScopeRequestTag create:
	// they also change resources that already carry the cluster tag,
	// with requests that need not carry it (the Service's additional
	// tags are added alone, changed ones too).
	Retags bool
	// LegacyTagOn is, for a ScopeResourceTag change the code also makes on
	// resources identified by the legacy tag KubernetesCluster=<id> alone
	// (the in-tree provider accepted it), the ARN pattern of those
	// resources: the least-privilege policy also grants the action there
	// when the resource carries that tag, in a statement of its own.
	LegacyTagOn string
	// Untags is true for an action that removes tags: the least-privilege
	// grant requires the request to name the keys and none may be a
	// cluster tag, so the grant cannot strip a resource of what makes it
	// the cluster's.
	Untags bool
	// Components lists who calls it.
	Components []string
	// CalledBy names who calls an action this project's code never calls
	// but a component's role needs (the container runtime pulling image
	// layers with an ECR token); empty: our code calls it.
	CalledBy string
	// Why says which code path needs it; it is printed in the IAM reference.
	Why string
	// Unsigned says why a call needs no permission of the caller: it is
	// sent unsigned (STS AssumeRoleWithWebIdentity, which the target
	// role's trust policy authorizes). The guard lets it through; no
	// policy of iam/ grants it.
	Unsigned string
	// Condition is the condition a grant of the action carries in the
	// node policy (sts:GetServiceBearerToken for ECR Public only).
	Condition Conditions
}

// Scope is how a least-privilege policy limits a mutating action to the
// cluster's own resources.
type Scope int

const (
	// ScopeNone is not limited (reads, and mutating actions with Unscoped).
	ScopeNone Scope = iota
	// ScopeRequestTag limits creations to those whose request tags the new resource with
	// kubernetes.io/cluster/<id>=owned (aws:RequestTag).
	ScopeRequestTag
	// ScopeResourceTag limits changes to resources that carry the cluster tag,
	// owned or shared (aws:ResourceTag, any value: the CCM's own notion of
	// "the cluster's").
	ScopeResourceTag
)

// IAMAction is the action's name in IAM policies, e.g. "ec2:DescribeInstances".
func (a Action) IAMAction() string { return iamPrefix(a.Service) + ":" + a.Operation }

func iamPrefix(service string) string {
	switch service {
	case ServiceELB, ServiceELBv2:
		return "elasticloadbalancing"
	case ServiceECRPublic:
		return "ecr-public"
	default:
		return strings.ToLower(service)
	}
}

// routeTableARNs are every route table, in every partition.
const routeTableARNs = "arn:*:ec2:*:*:route-table/*"

// registry lists every AWS action the code can call. Adding a call to the
// code without adding it here makes the call fail (guard middleware) and the
// registry test fail; the IAM policies in iam/ are generated from this list.
var registry = []Action{
	{Service: ServiceEC2, Operation: "DescribeInstances", Components: []string{ComponentCCM, ComponentPreflight},
		Why: "resolve nodes to instances: providerID, addresses, type, zone, existence and shutdown state"},
	{Service: ServiceEC2, Operation: "DescribeAvailabilityZones", Components: []string{ComponentCCM, ComponentPreflight},
		Why: "map zone names to zone IDs for the topology.k8s.aws/zone-id label"},
	{Service: ServiceEC2, Operation: "DescribeInstanceTopology", Components: []string{ComponentCCM},
		Why: "topology.k8s.aws/network-node-layer-N labels of joining Nodes (100 instances a call); required for SupportedTopologyInstanceTypePattern types"},
	{Service: ServiceSTS, Operation: "GetCallerIdentity", Components: []string{ComponentPreflight},
		Why: "show which principal the CCM runs as"},
	{Service: ServiceSTS, Operation: "AssumeRole", Components: []string{ComponentCCM},
		Why: "cloud config RoleARN: act as another role (granted on the target role's trust policy)"},
	{Service: ServiceEC2, Operation: "DescribeSubnets", Components: []string{ComponentCCM, ComponentPreflight},
		Why: "load balancers: subnet discovery in the cluster's VPC (cached); preflight aws-subnets-tagged"},
	{Service: ServiceEC2, Operation: "DescribeSecurityGroups", Components: []string{ComponentCCM, ComponentPreflight},
		Why: "load balancers: the managed group, node groups and their rules (filtered by ID, name or tag, never region-wide); preflight aws-security-groups"},
	{Service: ServiceEC2, Operation: "DescribeRouteTables", Components: []string{ComponentCCM, ComponentPreflight},
		Why: "load balancers: which subnets are public (cached); routes: read the cluster's route table once per route sync; preflight aws-route-tables"},
	{Service: ServiceELB, Operation: "DescribeLoadBalancers", Components: []string{ComponentCCM, ComponentPreflight},
		Why: "Classic load balancers: read one by name on every sync; preflight aws-load-balancers lists the region's"},
	{Service: ServiceELB, Operation: "DescribeTags", Components: []string{ComponentCCM, ComponentPreflight},
		Why: "Classic load balancers: check the cluster and service-name tags before adopting one; preflight aws-load-balancers"},
	{Service: ServiceELBv2, Operation: "DescribeLoadBalancers", Components: []string{ComponentCCM, ComponentPreflight},
		Why: "NLBs: read one by name on every sync; preflight aws-load-balancers lists the region's"},
	{Service: ServiceELBv2, Operation: "DescribeTags", Components: []string{ComponentCCM, ComponentPreflight},
		Why: "NLBs and target groups: check the cluster and service-name tags before adopting one; preflight aws-load-balancers"},
	{Service: ServiceIAM, Operation: "GetInstanceProfile", Components: []string{ComponentPreflight},
		Why: "preflight aws-iam-permissions: the role of the control-plane instances' instance profile"},
	{Service: ServiceIAM, Operation: "GetRole", Components: []string{ComponentPreflight},
		Why: "preflight aws-iam-permissions: the role ARN (with its path) behind an assumed-role caller"},
	{Service: ServiceIAM, Operation: "SimulatePrincipalPolicy", Components: []string{ComponentPreflight},
		Why: "preflight aws-iam-permissions: simulate the CCM's actions for the role the CCM will run as"},
	// Load balancers (internal/lb). Creations tag what they create with the
	// cluster tag (RequestTag); changes touch only cluster-tagged resources.
	{Service: ServiceEC2, Operation: "CreateSecurityGroup", Mutating: true, Scope: ScopeRequestTag, CreatesIn: "arn:*:ec2:*:*:vpc/*", Components: []string{ComponentCCM},
		Why: "load balancers: create the Classic k8s-elb-<name> group, and the managed NLB group under NLBSecurityGroupMode = Managed"},
	{Service: ServiceEC2, Operation: "CreateTags", Mutating: true, Scope: ScopeRequestTag, Retags: true, Components: []string{ComponentCCM},
		Why: "tag the security group at creation (TagSpecifications needs it); the tagging controller puts --tags on Nodes' instances (cluster-tagged under the least-privilege policy)"},
	{Service: ServiceEC2, Operation: "DeleteTags", Mutating: true, Scope: ScopeResourceTag, Untags: true, Components: []string{ComponentCCM},
		Why: "the tagging controller removes --tags from the instance of a deleted Node (never a cluster tag)"},
	{Service: ServiceEC2, Operation: "DeleteSecurityGroup", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "load balancers: delete the Classic k8s-elb-<name> group, and the managed NLB group, after the load balancer"},
	{Service: ServiceEC2, Operation: "AuthorizeSecurityGroupIngress", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "open the load balancer's group to clients, and node groups to the load balancer (node groups must carry the cluster tag under the least-privilege policy)"},
	{Service: ServiceEC2, Operation: "RevokeSecurityGroupIngress", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "remove rules a load balancer no longer needs, and all of its rules when it is deleted"},
	{Service: ServiceELB, Operation: "DescribeLoadBalancerAttributes", Components: []string{ComponentCCM},
		Why: "Classic load balancers: compare cross-zone, draining, idle timeout and access logs with the Service"},
	{Service: ServiceELB, Operation: "CreateLoadBalancer", Mutating: true, Scope: ScopeRequestTag, Components: []string{ComponentCCM},
		Why: "create a Classic load balancer for a Service"},
	{Service: ServiceELB, Operation: "AddTags", Mutating: true, Scope: ScopeRequestTag, Retags: true, Components: []string{ComponentCCM},
		Why: "tag a Classic load balancer at creation (AWS requires it for tags on create), add the Service's additional tags, and record on it the node rules it still owes a revocation after a security-group switch (awsccmctl.io/node-rules-to-revoke)"},
	{Service: ServiceELB, Operation: "DeleteLoadBalancer", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "delete a Service's Classic load balancer"},
	{Service: ServiceELB, Operation: "CreateLoadBalancerListeners", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "add listeners for new Service ports"},
	{Service: ServiceELB, Operation: "DeleteLoadBalancerListeners", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "remove listeners of removed Service ports"},
	{Service: ServiceELB, Operation: "AttachLoadBalancerToSubnets", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "follow the Service's subnets annotation or newly tagged subnets"},
	{Service: ServiceELB, Operation: "DetachLoadBalancerFromSubnets", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "follow the Service's subnets annotation or removed subnets"},
	{Service: ServiceELB, Operation: "ApplySecurityGroupsToLoadBalancer", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "follow the security-groups and extra-security-groups annotations"},
	{Service: ServiceELB, Operation: "ConfigureHealthCheck", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "set the health check the Service asks for"},
	{Service: ServiceELB, Operation: "ModifyLoadBalancerAttributes", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "set cross-zone, connection draining, idle timeout and access logs when they differ"},
	{Service: ServiceELB, Operation: "RegisterInstancesWithLoadBalancer", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "add new nodes' instances to Classic load balancers"},
	{Service: ServiceELB, Operation: "DeregisterInstancesFromLoadBalancer", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "remove departed nodes' instances from Classic load balancers"},
	{Service: ServiceELB, Operation: "CreateLoadBalancerPolicy", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "create the proxy-protocol and SSL negotiation policies"},
	{Service: ServiceELB, Operation: "SetLoadBalancerPoliciesForBackendServer", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "turn proxy protocol on or off for backend ports"},
	{Service: ServiceELB, Operation: "SetLoadBalancerPoliciesOfListener", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "put the SSL negotiation policy on SSL and HTTPS listeners"},
	{Service: ServiceELBv2, Operation: "DescribeListeners", Components: []string{ComponentCCM},
		Why: "NLBs: compare listeners with the Service's ports"},
	{Service: ServiceELBv2, Operation: "DescribeTargetGroups", Components: []string{ComponentCCM},
		Why: "NLBs: the target groups of a load balancer, and leftovers found by name"},
	{Service: ServiceELBv2, Operation: "DescribeTargetHealth", Components: []string{ComponentCCM},
		Why: "NLBs: the registered targets, to register and deregister by difference"},
	{Service: ServiceELBv2, Operation: "DescribeLoadBalancerAttributes", Components: []string{ComponentCCM},
		Why: "NLBs: compare cross-zone and access logs with the Service"},
	{Service: ServiceELBv2, Operation: "DescribeTargetGroupAttributes", Components: []string{ComponentCCM},
		Why: "NLBs: compare the target-group-attributes annotation with AWS (only when it is set)"},
	{Service: ServiceELBv2, Operation: "CreateLoadBalancer", Mutating: true, Scope: ScopeRequestTag, Components: []string{ComponentCCM},
		Why: "create an NLB for a Service"},
	{Service: ServiceELBv2, Operation: "CreateTargetGroup", Mutating: true, Scope: ScopeRequestTag, Components: []string{ComponentCCM},
		Why: "create the target group of each NLB listener"},
	{Service: ServiceELBv2, Operation: "CreateListener", Mutating: true, Scope: ScopeRequestTag, Components: []string{ComponentCCM},
		Why: "create NLB listeners (tagged as the NLB: cluster, Service name, additional tags)"},
	{Service: ServiceELBv2, Operation: "AddTags", Mutating: true, Scope: ScopeRequestTag, Retags: true, Components: []string{ComponentCCM},
		Why: "tag NLBs, listeners and target groups at creation (AWS requires it for tags on create), add the Service's additional tags, and the tags an adopted NLB's listeners lack"},
	{Service: ServiceELBv2, Operation: "DeleteLoadBalancer", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "delete a Service's NLB"},
	{Service: ServiceELBv2, Operation: "ModifyListener", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "point a listener at a new target group, or change its certificate or TLS policy"},
	{Service: ServiceELBv2, Operation: "DeleteListener", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "remove listeners of removed Service ports"},
	{Service: ServiceELBv2, Operation: "ModifyTargetGroup", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "change health-check port, path, thresholds or timeout when they differ"},
	{Service: ServiceELBv2, Operation: "DeleteTargetGroup", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "delete replaced target groups and those of deleted NLBs"},
	{Service: ServiceELBv2, Operation: "RegisterTargets", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "add new nodes' instances to NLB target groups"},
	{Service: ServiceELBv2, Operation: "DeregisterTargets", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "remove departed nodes' instances from NLB target groups"},
	{Service: ServiceELBv2, Operation: "ModifyLoadBalancerAttributes", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "set cross-zone and access logs on NLBs when they differ"},
	{Service: ServiceELBv2, Operation: "ModifyTargetGroupAttributes", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "set preserve_client_ip and proxy_protocol_v2 when they differ"},
	// Routes (internal/routes): the route controller's routes to Nodes' pod
	// CIDRs. IAM authorizes the route calls on the route table only, so the
	// least-privilege policy needs the table to carry a cluster tag: the
	// one found by tag does, with either key (the legacy
	// KubernetesCluster=<id> is granted on route tables, LegacyTagOn); a
	// table named by RouteTableID must be tagged too. Instances carry the
	// tag already (nodes are found by it).
	{Service: ServiceEC2, Operation: "CreateRoute", Mutating: true, Scope: ScopeResourceTag, LegacyTagOn: routeTableARNs, Components: []string{ComponentCCM},
		Why: "routes: route a Node's pod CIDR to its instance (the route table must carry the cluster tag, or the legacy KubernetesCluster=<id>, under the least-privilege policy, also when RouteTableID names it)"},
	{Service: ServiceEC2, Operation: "ReplaceRoute", Mutating: true, Scope: ScopeResourceTag, LegacyTagOn: routeTableARNs, Components: []string{ComponentCCM},
		Why: "routes: point a Node's pod CIDR route that targets something else (or a blackhole) at the Node's instance"},
	{Service: ServiceEC2, Operation: "DeleteRoute", Mutating: true, Scope: ScopeResourceTag, LegacyTagOn: routeTableARNs, Components: []string{ComponentCCM},
		Why: "routes: remove the route of a deleted Node or a changed pod CIDR"},
	{Service: ServiceEC2, Operation: "ModifyInstanceAttribute", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "routes: turn the source/destination check off on a route's target instance with one network interface, so it accepts traffic for its pods (only SourceDestCheck is changed)"},
	// EC2 keeps the check per interface and refuses the instance call on
	// an instance with several. IAM authorizes this action on the
	// network-interface resource, with the interface's own tags
	// (aws:ResourceTag), not its instance's.
	{Service: ServiceEC2, Operation: "ModifyNetworkInterfaceAttribute", Mutating: true, Scope: ScopeResourceTag, Components: []string{ComponentCCM},
		Why: "routes: turn the source/destination check off on the primary network interface (device index 0) of a Node's instance with several interfaces, which the route targets; EC2 refuses ModifyInstanceAttribute there (only SourceDestCheck is changed; under the least-privilege policy the interface must carry the cluster tag, e.g. from a network-interface TagSpecification of the launch template)"},
	// Nodes pulling from private ECR (cmd/ecr-credential-provider).
	{Service: ServiceECR, Operation: "GetAuthorizationToken", Components: []string{ComponentNode},
		Why: "ecr-credential-provider: the registry token the kubelet pulls private ECR images with"},
	// ECR Public (public.ecr.aws): an authenticated pull gets the account's
	// rate limit instead of the anonymous one. AWS requires
	// sts:GetServiceBearerToken for ECR Public's token as well.
	{Service: ServiceECRPublic, Operation: "GetAuthorizationToken", Components: []string{ComponentNode},
		Why: "ecr-credential-provider: the token the kubelet pulls public.ecr.aws images with (in us-east-1)"},
	{Service: ServiceSTS, Operation: "GetServiceBearerToken", Components: []string{ComponentNode}, CalledBy: "ECR Public's GetAuthorizationToken (a permission it requires, not a call)",
		Condition: Conditions{"StringEquals": {"sts:AWSServiceName": "ecr-public.amazonaws.com"}},
		Why:       "ecr-credential-provider: ECR Public's GetAuthorizationToken requires it, for the service ecr-public.amazonaws.com only"},
	// Service-account tokens (KEP-4412): the role a Pod's service account
	// names is assumed with the Pod's token.
	{Service: ServiceSTS, Operation: "AssumeRoleWithWebIdentity", Components: []string{ComponentNode},
		Unsigned: "sent unsigned with the Pod's service-account token; the target role's trust policy authorizes it",
		Why:      "ecr-credential-provider: with a service-account token from the kubelet, pull with the role named by the service account's eks.amazonaws.com/ecr-role-arn annotation (or AWS_ECR_ROLE_ARN)"},
	{Service: ServiceECR, Operation: "BatchCheckLayerAvailability", Components: []string{ComponentNode}, CalledBy: "the container runtime",
		Why: "pulling from private ECR with the token: the container runtime checks layers (not this project's code)"},
	{Service: ServiceECR, Operation: "BatchGetImage", Components: []string{ComponentNode}, CalledBy: "the container runtime",
		Why: "pulling from private ECR with the token: the container runtime reads the manifest (not this project's code)"},
	{Service: ServiceECR, Operation: "GetDownloadUrlForLayer", Components: []string{ComponentNode}, CalledBy: "the container runtime",
		Why: "pulling from private ECR with the token: the container runtime downloads layers (not this project's code)"},
}

// Registered reports whether the code may call service/operation: it is in
// the registry, and not as an action only another program calls (CalledBy).
func Registered(service, operation string) bool {
	return slices.ContainsFunc(registry, func(a Action) bool {
		return a.Service == service && a.Operation == operation && a.CalledBy == ""
	})
}

// Actions returns a copy of the registry, optionally only the actions used by
// component (empty = all).
func Actions(component string) []Action {
	var out []Action
	for _, a := range registry {
		if component == "" || slices.Contains(a.Components, component) {
			a.Components = slices.Clone(a.Components)
			out = append(out, a)
		}
	}
	return out
}

// UnregisteredActionError is returned by the guard middleware.
type UnregisteredActionError struct{ Service, Operation string }

func (e *UnregisteredActionError) Error() string {
	return fmt.Sprintf("AWS action %s:%s is not in the action registry (internal/awsapi/actions.go); register it so iam/ grants it", iamPrefix(e.Service), e.Operation)
}
