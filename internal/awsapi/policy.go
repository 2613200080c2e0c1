package awsapi

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

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
// a resource carrying that tag. Mutating actions IAM cannot scope keep Resource "*" in a
// statement of their own.
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
	// A change limited to one resource type gets a statement of its own.
	narrow := map[string][]Action{}
	changes = slices.DeleteFunc(changes, func(a Action) bool {
		if a.Resource != "" {
			narrow[a.Resource] = append(narrow[a.Resource], a)
		}
		return a.Resource != ""
	})
	add("ChangeTheClustersResources", changes, Conditions{"Null": {"aws:ResourceTag/" + tag: "false"}})
	for _, res := range slices.Sorted(maps.Keys(narrow)) {
		doc.Statement = append(doc.Statement, narrowChange(res, narrow[res], tag))
	}
	add("CannotBeScopedByTag", unscoped, nil)
	return doc
}

// narrowChange grants changes on the cluster's resources of one type
// (res, an ARN pattern such as arn:*:ec2:*:*:instance/*). Tag removals
// must name their keys (EC2's DeleteTags without keys removes every tag)
// and none may be a cluster tag.
func narrowChange(res string, as []Action, tag string) Statement {
	typ := res[strings.LastIndex(res, ":")+1:]
	typ, _, _ = strings.Cut(typ, "/")
	sid := "ChangeTheClusters"
	for word := range strings.SplitSeq(typ, "-") {
		if word != "" {
			sid += strings.ToUpper(word[:1]) + word[1:]
		}
	}
	c := Conditions{"Null": {"aws:ResourceTag/" + tag: "false"}}
	if slices.ContainsFunc(as, func(a Action) bool { return a.Untags }) {
		c["Null"]["aws:TagKeys"] = "false"
		c["ForAllValues:StringNotLike"] = map[string]string{"aws:TagKeys": clustertag.Prefix + "*"}
		c["ForAllValues:StringNotEquals"] = map[string]string{"aws:TagKeys": clustertag.LegacyKey}
	}
	return Statement{Sid: sid + "s", Effect: "Allow", Action: iamActions(as), Resource: res, Condition: c}
}

// iamActions returns the actions' IAM names, sorted, without repeats.
func iamActions(as []Action) []string {
	var out []string
	for _, a := range as {
		if !slices.Contains(out, a.IAMAction()) {
			out = append(out, a.IAMAction())
		}
	}
	slices.Sort(out)
	return out
}

// PolicyJSON renders Policy(component) as indented JSON with a final newline.
func PolicyJSON(component string) ([]byte, error) {
	return Policy(component).JSON()
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
// the ComponentNode actions, for pulling images from private ECR. The
// kubelet's ecr-credential-provider calls GetAuthorizationToken, and the
// container runtime pulls image layers with the token. The in-tree kubelet's
// ec2:DescribeInstances / DescribeRegions (still in upstream's node policy)
// are not needed: an external kubelet never calls EC2.
func NodePolicy() PolicyDocument {
	return PolicyDocument{Version: "2012-10-17", Statement: []Statement{{
		Sid: "PullImagesFromECR", Effect: "Allow", Action: iamActions(Actions(ComponentNode)), Resource: "*",
	}}}
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
