package awsapi

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
)

// PolicyDocument is an IAM policy document.
type PolicyDocument struct {
	Version   string      `json:"Version"`
	Statement []Statement `json:"Statement"`
}

// Statement is one IAM policy statement.
type Statement struct {
	Sid       string     `json:"Sid,omitempty"`
	Effect    string     `json:"Effect"`
	Action    []string   `json:"Action"`
	Resource  string     `json:"Resource"`
	Condition Conditions `json:"Condition,omitempty"`
}

// Conditions maps a condition operator to its keys and values.
type Conditions map[string]map[string]string

// ClusterIDPlaceholder stands for the cluster ID in the least-privilege
// policy committed to iam/; `awsccmctl install iam` fills in the real one.
const ClusterIDPlaceholder = "CLUSTER_ID"

// Policy returns the broad IAM policy: exactly the actions component
// calls, sorted, with Resource "*".
func Policy(component string) PolicyDocument {
	return PolicyDocument{
		Version:   "2012-10-17",
		Statement: []Statement{{Sid: "AWSCloudControllerManager", Effect: "Allow", Action: iamActions(Actions(component)), Resource: "*"}},
	}
}

// LeastPrivilegePolicy grants the same actions as Policy, but the mutating
// ones only on the cluster's resources: creations must tag what they create
// kubernetes.io/cluster/<clusterID>=owned, changes (tagging included) need
// a resource carrying that tag (or, for the actions with LegacyTagOn, a
// resource of that pattern tagged KubernetesCluster=<clusterID>). Mutating
// actions IAM cannot scope keep Resource "*" in a statement of their own.
func LeastPrivilegePolicy(component, clusterID string) PolicyDocument {
	return leastPrivilege(Actions(component), clusterID)
}

func leastPrivilege(actions []Action, clusterID string) PolicyDocument {
	var reads, creates, changes, unscoped []Action
	for _, a := range actions {
		switch {
		case !a.Mutating:
			reads = append(reads, a)
		case a.Scope == ScopeRequestTag:
			creates = append(creates, a)
		case a.Scope == ScopeResourceTag:
			changes = append(changes, a)
		default:
			unscoped = append(unscoped, a)
		}
	}
	tag := clustertag.Key(clusterID)
	doc := PolicyDocument{Version: "2012-10-17"}
	add := func(sid string, as []Action, c Conditions) {
		if len(as) > 0 {
			doc.Statement = append(doc.Statement, Statement{Sid: sid, Effect: "Allow", Action: iamActions(as), Resource: "*", Condition: c})
		}
	}
	add("Read", reads, nil)
	add("CreateTaggedForTheCluster", creates, Conditions{"StringEquals": {"aws:RequestTag/" + tag: string(clustertag.Owned)}})
	// A creation also authorized on its parent (the VPC of a new security
	// group) is granted there without conditions: the request's tags are
	// not evaluated on the parent, and the new resource still needs them.
	parents := map[string][]Action{}
	for _, a := range creates {
		if a.CreatesIn != "" {
			parents[a.CreatesIn] = append(parents[a.CreatesIn], a)
		}
	}
	for _, res := range slices.Sorted(maps.Keys(parents)) {
		doc.Statement = append(doc.Statement, Statement{Sid: "CreateInTheirParent", Effect: "Allow", Action: iamActions(parents[res]), Resource: res})
	}
	// Tagging actions also change what is already the cluster's: adding
	// or changing a Service's additional tags sends only those tags.
	for _, a := range creates {
		if a.Retags {
			changes = append(changes, a)
		}
	}
	// Tag removals get a statement of their own: EC2's DeleteTags without
	// keys removes every tag, the cluster tag included, so the request
	// must name its keys and none may be a cluster tag. (Resource stays
	// "*" like the others': preflight's IAM simulation, which names no
	// resource, must see the grant.)
	var untags []Action
	changes = slices.DeleteFunc(changes, func(a Action) bool {
		if a.Untags {
			untags = append(untags, a)
		}
		return a.Untags
	})
	add("ChangeTheClustersResources", changes, Conditions{"Null": {"aws:ResourceTag/" + tag: "false"}})
	add("UntagTheClustersResources", untags, Conditions{
		"Null":                         {"aws:ResourceTag/" + tag: "false", "aws:TagKeys": "false"},
		"ForAllValues:StringNotLike":   {"aws:TagKeys": clustertag.Prefix + "*"},
		"ForAllValues:StringNotEquals": {"aws:TagKeys": clustertag.LegacyKey},
	})
	// Resources the code also changes when only the legacy tag
	// KubernetesCluster=<id> makes them the cluster's (a route table the
	// in-tree provider found by it): granted on those resources when they
	// carry it. Not Resource "*": the legacy tag on other resources grants
	// nothing.
	legacy := map[string][]Action{}
	for _, a := range changes {
		if a.LegacyTagOn != "" {
			legacy[a.LegacyTagOn] = append(legacy[a.LegacyTagOn], a)
		}
	}
	for _, res := range slices.Sorted(maps.Keys(legacy)) {
		doc.Statement = append(doc.Statement, Statement{Sid: "ChangeTheClustersLegacyTaggedResources", Effect: "Allow", Action: iamActions(legacy[res]),
			Resource: res, Condition: Conditions{"StringEquals": {"aws:ResourceTag/" + clustertag.LegacyKey: clusterID}}})
	}
	add("CannotBeScopedByTag", unscoped, nil)
	return doc
}

// iamActions returns the actions' IAM names, sorted, without repeats,
// leaving out those that need no permission (Unsigned).
func iamActions(as []Action) []string {
	var out []string
	for _, a := range as {
		if a.Unsigned == "" && !slices.Contains(out, a.IAMAction()) {
			out = append(out, a.IAMAction())
		}
	}
	slices.Sort(out)
	return out
}

// JSON renders the document indented, with a final newline.
func (d PolicyDocument) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// NodePolicy is the policy for the worker and control-plane nodes' role:
// the ComponentNode actions, for pulling images from private ECR and
// ECR Public. The
// kubelet's ecr-credential-provider calls GetAuthorizationToken, and the
// container runtime pulls image layers with the token. The in-tree kubelet's
// ec2:DescribeInstances / DescribeRegions (still in upstream's node policy)
// are not needed: an external kubelet never calls EC2.
//
// An action with a Condition gets a statement of its own:
// sts:GetServiceBearerToken only for ECR Public (ecr-credential-provider
// gets public.ecr.aws tokens with it).
func NodePolicy() PolicyDocument {
	var plain []Action
	var conditional []Statement
	for _, a := range Actions(ComponentNode) {
		switch {
		case a.Unsigned != "":
		case a.Condition != nil:
			conditional = append(conditional, Statement{Sid: nodeSid(a), Effect: "Allow", Action: []string{a.IAMAction()}, Resource: "*", Condition: a.Condition})
		default:
			plain = append(plain, a)
		}
	}
	return PolicyDocument{Version: "2012-10-17", Statement: append([]Statement{{
		Sid: "PullImagesFromECR", Effect: "Allow", Action: iamActions(plain), Resource: "*",
	}}, conditional...)}
}

// nodeSid names the node policy's statement of a conditional grant.
func nodeSid(a Action) string {
	if a.IAMAction() == "sts:GetServiceBearerToken" {
		return "ServiceBearerTokenForECRPublic"
	}
	return "Allow" + a.Operation
}

// GeneratedPolicies are the files of iam/, by name: what hack/gen-iam
// writes and what the freshness test compares.
func GeneratedPolicies() map[string]PolicyDocument {
	return map[string]PolicyDocument{
		"ccm-policy.json":                 Policy(ComponentCCM),
		"ccm-policy-least-privilege.json": LeastPrivilegePolicy(ComponentCCM, ClusterIDPlaceholder),
		"preflight-policy.json":           Policy(ComponentPreflight),
		"node-policy.json":                NodePolicy(),
	}
}
