package awsapi

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestIAMFilesMatchRegistry fails when iam/ was not regenerated after the
// registry changed (go run ./hack/gen-iam).
func TestIAMFilesMatchRegistry(t *testing.T) {
	for name, component := range map[string]string{"ccm-policy.json": ComponentCCM, "preflight-policy.json": ComponentPreflight} {
		want, err := PolicyJSON(component)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("..", "..", "iam", name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("iam/%s is stale: run go run ./hack/gen-iam\n got: %s\nwant: %s", name, got, want)
		}
	}
}

func TestRegistryIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range Actions("") {
		key := a.Service + ":" + a.Operation
		if seen[key] {
			t.Errorf("%s registered twice", key)
		}
		seen[key] = true
		if a.Why == "" || len(a.Components) == 0 {
			t.Errorf("%s needs a Why and at least one component", key)
		}
	}
	if !Registered(ServiceEC2, "DescribeInstances") || Registered(ServiceEC2, "TerminateInstances") {
		t.Fatal("Registered answers wrongly")
	}
}

// TestPreflightIsReadOnly: preflight changes nothing in AWS, so every action
// it may call is a read (and the guard refuses anything unregistered).
func TestPreflightIsReadOnly(t *testing.T) {
	reads := regexp.MustCompile(`^(Describe|Get|List|Simulate)[A-Z]`)
	for _, a := range Actions(ComponentPreflight) {
		if a.Mutating || !reads.MatchString(a.Operation) {
			t.Errorf("preflight may call %s, which is not a read", a.IAMAction())
		}
	}
}
