package awsapi

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestIAMFilesMatchRegistry fails when iam/ was not regenerated after the
// registry changed (go run ./hack/gen-iam).
func TestIAMFilesMatchRegistry(t *testing.T) {
	for name, doc := range GeneratedPolicies() {
		want, err := doc.JSON()
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
		switch {
		case !a.Mutating && (a.Scope != ScopeNone || a.Unscoped != ""):
			t.Errorf("%s reads, so it takes no Scope and no Unscoped", key)
		case a.Mutating && a.Scope == ScopeNone && a.Unscoped == "":
			t.Errorf("%s changes AWS: give it a Scope, or say in Unscoped why IAM cannot limit it to the cluster", key)
		case a.LegacyTagOn != "" && a.Scope != ScopeResourceTag:
			t.Errorf("%s: LegacyTagOn grants changes of legacy-tagged resources, so it needs Scope ScopeResourceTag", key)
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

// TestEveryRegisteredActionIsCalled is the other half of least privilege:
// the guard refuses calls missing from the registry, and this test fails
// for a registered action that no code calls any more (so iam/ would grant
// it for nothing). A call is the SDK method or its paginator, in a file
// that imports the service's client package.
func TestEveryRegisteredActionIsCalled(t *testing.T) {
	imports := map[string]string{
		ServiceEC2: `"github.com/aws/aws-sdk-go-v2/service/ec2"`, ServiceSTS: `"github.com/aws/aws-sdk-go-v2/service/sts"`,
		ServiceELB:       `"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"`,
		ServiceELBv2:     `"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"`,
		ServiceIAM:       `"github.com/aws/aws-sdk-go-v2/service/iam"`,
		ServiceECR:       `"github.com/aws/aws-sdk-go-v2/service/ecr"`,
		ServiceECRPublic: `"github.com/aws/aws-sdk-go-v2/service/ecrpublic"`,
	}
	// Calls the SDK makes for us: AssumeRole through the credentials provider.
	indirect := map[string]string{"sts:AssumeRole": "stscreds.NewAssumeRoleProvider("}
	var sources []string
	for _, dir := range []string{"cmd", "pkg", "internal"} {
		err := filepath.WalkDir(filepath.Join("..", "..", dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			sources = append(sources, string(b))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range Actions("") {
		if a.CalledBy != "" {
			continue // granted for another program (the container runtime)
		}
		tokens := []string{"." + a.Operation + "(", "New" + a.Operation + "Paginator("}
		needImport := imports[a.Service]
		if tok, ok := indirect[a.IAMAction()]; ok {
			tokens, needImport = []string{tok}, ""
		}
		called := slices.ContainsFunc(sources, func(src string) bool {
			return (needImport == "" || strings.Contains(src, needImport)) &&
				slices.ContainsFunc(tokens, func(tok string) bool { return strings.Contains(src, tok) })
		})
		if !called {
			t.Errorf("%s (%s) is registered but no code calls it: remove it from the registry", a.IAMAction(), a.Service)
		}
	}
}
