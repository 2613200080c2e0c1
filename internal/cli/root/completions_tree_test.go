package root

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/awsccmctl/awsccmctl/internal/migrate"
)

// freeForm are the flags whose values are not a fixed set: paths, names,
// addresses, versions, quantities. Every other flag that takes a value
// must complete its values, so a new enumerated flag cannot be added
// without its completion: list it here only if its value is free.
var freeForm = map[string]string{
	// Files and folders: the shell completes file names.
	"config": "a file", "kubeconfig": "a file", "cloud-config": "a file", "install-config": "a file",
	"plan": "a file", "journal-file": "a file", "file": "a file", "merge": "a file", "output-dir": "a folder",
	"root": "a folder", "cache-dir": "a folder", "certificate-authority": "a file", "client-certificate": "a file",
	"client-key": "a file", "credential-provider-config": "a path on the node", "credential-provider-bin-dir": "a path on the node",
	"ecr-credential-provider-config": "a path on the node", "ecr-credential-provider-bin-dir": "a path on the node",
	// Names and identities of the user's own things.
	"cluster-name": "a name", "cluster-id": "a name", "name": "a name", "namespace": "a name", "node-name": "a name",
	"hostname-override": "a name", "as": "a user", "as-group": "groups", "as-uid": "a UID", "as-user-extra": "key=value",
	"username": "a user", "password": "a secret", "token": "a secret", "region": "an AWS region", "image": "an image reference",
	"node-image": "an image reference", "provider-id": "aws:///zone/instance", "tls-server-name": "a host name",
	"credential-provider-service-account-token-audience": "an audience",
	// Addresses, versions and quantities.
	"server": "a URL", "proxy-url": "a URL", "bind-address": "an IP address", "cluster-cidr": "CIDRs",
	"kubernetes-version": "a version", "cpu-request": "a quantity", "memory-request": "a quantity",
	"max-unavailable": "a number or percentage", "request-timeout": "a duration",
	"extra-args": "any CCM flag", "ecr-image-patterns": "image patterns",
}

// valueTypes are the flag types whose values are a quantity, never a
// choice.
var valueTypes = []string{"int", "int32", "int64", "uint", "float64", "duration", "count"}

// TestEveryEnumeratedFlagCompletes walks the command tree: every flag that
// takes a value is either free-form (freeForm, or a number or duration) or
// has a completion function, and that function offers values, never file
// names (ShellCompDirectiveNoFileComp).
func TestEveryEnumeratedFlagCompletes(t *testing.T) {
	plan := writePlan(t)
	checked := 0
	for _, c := range commands(t) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Value.Type() == "bool" || slices.Contains(valueTypes, f.Value.Type()) {
				return
			}
			_, completes := c.GetFlagCompletionFunc(f.Name)
			_, free := freeForm[f.Name]
			switch {
			case free && completes:
				t.Errorf("%s --%s completes values but is listed free-form (%s): remove it from freeForm", c.CommandPath(), f.Name, freeForm[f.Name])
			case !free && !completes:
				t.Errorf("%s --%s (%s: %q) has no completion: complete its values in flagCompleters, or, if any value goes, list it in freeForm", c.CommandPath(), f.Name, f.Value.Type(), f.Usage)
			case completes:
				checked++
				args := append(argv(c), "--"+f.Name, "")
				if f.Name == "until" || f.Name == "to" {
					args = append(argv(c), "--plan", plan, "--"+f.Name, "")
				}
				got, directive := complete(t, args...)
				if directive != ":4" {
					t.Errorf("%s --%s: directive %s, want :4 (no file names)", c.CommandPath(), f.Name, directive)
				}
				if len(got) == 0 && !slices.Contains([]string{"context", "cluster", "user"}, f.Name) {
					t.Errorf("%s --%s completes nothing", c.CommandPath(), f.Name)
				}
			}
		})
	}
	if checked < 20 {
		t.Errorf("only %d completing flags checked: the walk missed the tree", checked)
	}
}

// writePlan returns a plan file (written by migrate.BuildPlan for a
// one-control-plane kubeadm cluster) whose steps --until and --to complete.
func writePlan(t *testing.T) string {
	t.Helper()
	path := filepath.Join("testdata", "valid-plan.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.DecodePlan(data); err != nil {
		t.Fatalf("%s is no longer a plan apply reads (regenerate it with migrate-from-intree plan): %v", path, err)
	}
	return path
}

// TestPlanStepCompletion: --until and --to offer the plan's steps, and
// nothing without a readable plan.
func TestPlanStepCompletion(t *testing.T) {
	plan := writePlan(t)
	got, _ := complete(t, "migrate-from-intree", "apply", "--plan", plan, "--until", "c")
	if !slices.Equal(got, []string{"cut-over"}) {
		t.Errorf("--until c: %q", got)
	}
	got, _ = complete(t, "migrate-from-intree", "rollback", "--plan", plan, "--to", "")
	if want := []string{"verify-cluster", "migration-rbac", "kcm-leader-migration", "install-ccm", "cut-over", "kubeadm-config",
		"kubelet-external/control-plane", "kubelet-external/workers", "finalize"}; !slices.Equal(got, want) {
		t.Errorf("--to: %q", got)
	}
	if got, _ := complete(t, "migrate-from-intree", "apply", "--until", ""); len(got) != 0 {
		t.Errorf("--until without --plan: %q", got)
	}
	got, _ = complete(t, "install", "manifests", "--controllers", "*,clo")
	if len(got) == 0 || !strings.HasPrefix(got[0], "*,cloud-node") {
		t.Errorf("--controllers *,clo: %q", got)
	}
}
