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
)

// Component names who calls an action; iam/ has one policy per component.
const (
	ComponentCCM       = "ccm"
	ComponentPreflight = "preflight"
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
	// Components lists who calls it.
	Components []string
	// Why says which code path needs it; it is printed in the IAM reference.
	Why string
}

// Scope is how a least-privilege policy limits a mutating action to the
// cluster's own resources.
type Scope int

const (
	// ScopeNone: not limited (reads, and mutating actions with Unscoped).
	ScopeNone Scope = iota
	// ScopeRequestTag: creations whose request tags the new resource with
	// kubernetes.io/cluster/<id>=owned (aws:RequestTag).
	ScopeRequestTag
	// ScopeResourceTag: changes to resources that carry the cluster tag,
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
	default:
		return strings.ToLower(service)
	}
}

// registry lists every AWS action the code can call. Adding a call to the
// code without adding it here makes the call fail (guard middleware) and the
// registry test fail; the IAM policies in iam/ are generated from this list.
var registry = []Action{
	{Service: ServiceEC2, Operation: "DescribeInstances", Components: []string{ComponentCCM, ComponentPreflight},
		Why: "resolve nodes to instances: providerID, addresses, type, zone, existence and shutdown state"},
	{Service: ServiceEC2, Operation: "DescribeAvailabilityZones", Components: []string{ComponentCCM, ComponentPreflight},
		Why: "map zone names to zone IDs for the topology.k8s.aws/zone-id label"},
	{Service: ServiceSTS, Operation: "GetCallerIdentity", Components: []string{ComponentPreflight},
		Why: "show which principal the CCM runs as"},
	{Service: ServiceSTS, Operation: "AssumeRole", Components: []string{ComponentCCM},
		Why: "cloud config RoleARN: act as another role (granted on the target role's trust policy)"},
	{Service: ServiceEC2, Operation: "DescribeSubnets", Components: []string{ComponentPreflight},
		Why: "preflight aws-subnets-tagged: per zone a cluster-tagged subnet with a kubernetes.io/role/elb or internal-elb tag"},
	{Service: ServiceEC2, Operation: "DescribeSecurityGroups", Components: []string{ComponentPreflight},
		Why: "preflight aws-security-groups: exactly one cluster-tagged security group per instance"},
	{Service: ServiceEC2, Operation: "DescribeRouteTables", Components: []string{ComponentPreflight},
		Why: "preflight aws-route-tables: the route table the route controller will use (RouteTableID, else the one cluster-tagged table)"},
	{Service: ServiceELB, Operation: "DescribeLoadBalancers", Components: []string{ComponentPreflight},
		Why: "preflight aws-load-balancers: list the region's Classic load balancers to find those the CCM would adopt by name"},
	{Service: ServiceELB, Operation: "DescribeTags", Components: []string{ComponentPreflight},
		Why: "preflight aws-load-balancers: the cluster and service-name tags of Classic load balancers named like a Service's"},
	{Service: ServiceELBv2, Operation: "DescribeLoadBalancers", Components: []string{ComponentPreflight},
		Why: "preflight aws-load-balancers: list the region's Network and Application load balancers to find those the CCM would adopt by name"},
	{Service: ServiceELBv2, Operation: "DescribeTags", Components: []string{ComponentPreflight},
		Why: "preflight aws-load-balancers: the cluster and service-name tags of Network load balancers named like a Service's"},
	{Service: ServiceIAM, Operation: "GetInstanceProfile", Components: []string{ComponentPreflight},
		Why: "preflight aws-iam-permissions: the role of the control-plane instances' instance profile"},
	{Service: ServiceIAM, Operation: "GetRole", Components: []string{ComponentPreflight},
		Why: "preflight aws-iam-permissions: the role ARN (with its path) behind an assumed-role caller"},
	{Service: ServiceIAM, Operation: "SimulatePrincipalPolicy", Components: []string{ComponentPreflight},
		Why: "preflight aws-iam-permissions: simulate the CCM's actions for the role the CCM will run as"},
}

// Registered reports whether service/operation is in the registry.
func Registered(service, operation string) bool {
	return slices.ContainsFunc(registry, func(a Action) bool {
		return a.Service == service && a.Operation == operation
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
