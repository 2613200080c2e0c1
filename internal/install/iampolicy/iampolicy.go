package iampolicy

import (
	"encoding/json"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
)

// Roles a policy is printed for. They are the keys of the JSON object
// printed without a role.
const (
	RoleControlPlane = "control-plane"
	RoleNode         = "node"
	RolePreflight    = "preflight"
)

// Roles lists the roles in the order help text names them.
var Roles = []string{RoleControlPlane, RoleNode, RolePreflight}

// Options choose the documents.
type Options struct {
	// Role is RoleControlPlane, RoleNode or RolePreflight; empty means the
	// control-plane and node documents together.
	Role string
	// LeastPrivilege scopes the control-plane policy's mutating actions to
	// resources tagged kubernetes.io/cluster/<ClusterID>.
	LeastPrivilege bool
	ClusterID      string
}

// Documents returns the documents o asks for, by role.
func Documents(o Options) map[string]awsapi.PolicyDocument {
	cp := awsapi.Policy(awsapi.ComponentCCM)
	if o.LeastPrivilege {
		cp = awsapi.LeastPrivilegePolicy(awsapi.ComponentCCM, o.ClusterID)
	}
	all := map[string]awsapi.PolicyDocument{
		RoleControlPlane: cp,
		RoleNode:         awsapi.NodePolicy(),
		RolePreflight:    awsapi.Policy(awsapi.ComponentPreflight),
	}
	if o.Role != "" {
		return map[string]awsapi.PolicyDocument{o.Role: all[o.Role]}
	}
	return map[string]awsapi.PolicyDocument{RoleControlPlane: all[RoleControlPlane], RoleNode: all[RoleNode]}
}

// JSON renders the document of o.Role, or without a role the object of the
// control-plane and node documents, as indented JSON. unscoped reports a
// least-privilege control-plane policy without any tag condition (the CCM
// changes nothing in AWS yet, so there is nothing to scope).
func JSON(o Options) (data []byte, unscoped bool, err error) {
	docs := Documents(o)
	if o.Role != "" {
		data, err = docs[o.Role].JSON()
	} else {
		// encoding/json sorts map keys: control-plane, then node.
		data, err = json.MarshalIndent(docs, "", "  ")
		data = append(data, '\n')
	}
	if err != nil {
		return nil, false, err
	}
	if cp, ok := docs[RoleControlPlane]; ok && o.LeastPrivilege {
		unscoped = !hasConditions(cp)
	}
	return data, unscoped, nil
}

// hasConditions reports whether any statement of d has a condition.
func hasConditions(d awsapi.PolicyDocument) bool {
	for _, s := range d.Statement {
		if len(s.Condition) > 0 {
			return true
		}
	}
	return false
}
