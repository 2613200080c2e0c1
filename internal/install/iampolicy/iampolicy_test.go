package iampolicy

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
)

func TestDocuments(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want map[string]awsapi.PolicyDocument
	}{
		{"valid-default-is-control-plane-and-node", Options{},
			map[string]awsapi.PolicyDocument{RoleControlPlane: awsapi.Policy(awsapi.ComponentCCM), RoleNode: awsapi.NodePolicy()}},
		{"valid-control-plane", Options{Role: RoleControlPlane}, map[string]awsapi.PolicyDocument{RoleControlPlane: awsapi.Policy(awsapi.ComponentCCM)}},
		{"valid-node", Options{Role: RoleNode}, map[string]awsapi.PolicyDocument{RoleNode: awsapi.NodePolicy()}},
		{"valid-preflight", Options{Role: RolePreflight}, map[string]awsapi.PolicyDocument{RolePreflight: awsapi.Policy(awsapi.ComponentPreflight)}},
		{"valid-least-privilege", Options{Role: RoleControlPlane, LeastPrivilege: true, ClusterID: "prod"},
			map[string]awsapi.PolicyDocument{RoleControlPlane: awsapi.LeastPrivilegePolicy(awsapi.ComponentCCM, "prod")}},
		{"valid-least-privilege-default", Options{LeastPrivilege: true, ClusterID: "prod"},
			map[string]awsapi.PolicyDocument{RoleControlPlane: awsapi.LeastPrivilegePolicy(awsapi.ComponentCCM, "prod"), RoleNode: awsapi.NodePolicy()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Documents(tc.o); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Documents(%+v) = %+v, want %+v", tc.o, got, tc.want)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	one, unscoped, err := JSON(Options{Role: RoleNode})
	if err != nil || unscoped {
		t.Fatalf("unscoped %v, err %v", unscoped, err)
	}
	want, err := awsapi.NodePolicy().JSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(one) != string(want) {
		t.Errorf("one role is not the document's JSON:\n%s", one)
	}

	both, _, err := JSON(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var docs map[string]awsapi.PolicyDocument
	if err := json.Unmarshal(both, &docs); err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(maps.Keys(docs))
	if !slices.Equal(keys, []string{RoleControlPlane, RoleNode}) || !strings.HasSuffix(string(both), "}\n") {
		t.Errorf("default output keys %v:\n%s", keys, both)
	}

	// Scoped exactly when the least-privilege document has a condition.
	_, unscoped, err = JSON(Options{Role: RoleControlPlane, LeastPrivilege: true, ClusterID: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	if unscoped != !hasConditions(awsapi.LeastPrivilegePolicy(awsapi.ComponentCCM, "prod")) {
		t.Errorf("unscoped = %v", unscoped)
	}
}
