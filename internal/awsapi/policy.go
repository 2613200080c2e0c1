package awsapi

import (
	"encoding/json"
	"slices"
)

// PolicyDocument is an IAM policy document.
type PolicyDocument struct {
	Version   string      `json:"Version"`
	Statement []Statement `json:"Statement"`
}

// Statement is one IAM policy statement.
type Statement struct {
	Sid      string   `json:"Sid,omitempty"`
	Effect   string   `json:"Effect"`
	Action   []string `json:"Action"`
	Resource string   `json:"Resource"`
}

// Policy returns the IAM policy granting exactly the actions component
// calls, sorted, with Resource "*". (The tag-scoped least-privilege variant
// is generated alongside once mutating actions exist.)
func Policy(component string) PolicyDocument {
	var actions []string
	for _, a := range Actions(component) {
		if !slices.Contains(actions, a.IAMAction()) {
			actions = append(actions, a.IAMAction())
		}
	}
	slices.Sort(actions)
	return PolicyDocument{
		Version:   "2012-10-17",
		Statement: []Statement{{Sid: "AWSCloudControllerManager", Effect: "Allow", Action: actions, Resource: "*"}},
	}
}

// PolicyJSON renders Policy(component) as indented JSON with a final newline.
func PolicyJSON(component string) ([]byte, error) {
	b, err := json.MarshalIndent(Policy(component), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
