package awsapi

import (
	"os"
	"path/filepath"
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
