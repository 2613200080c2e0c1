package installcmd_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
)

// decodePolicy decodes one policy document strictly, as put-role-policy
// would need it.
func decodePolicy(t *testing.T, data string) awsapi.PolicyDocument {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	var d awsapi.PolicyDocument
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("not a policy document: %v\n%s", err, data)
	}
	if d.Version != "2012-10-17" || len(d.Statement) == 0 {
		t.Fatalf("policy document %+v", d)
	}
	return d
}

func TestIAMRoles(t *testing.T) {
	for _, tc := range []struct {
		role string
		want awsapi.PolicyDocument
	}{
		{"control-plane", awsapi.Policy(awsapi.ComponentCCM)},
		{"node", awsapi.NodePolicy()},
		{"preflight", awsapi.Policy(awsapi.ComponentPreflight)},
	} {
		t.Run("valid-"+tc.role, func(t *testing.T) {
			out, _, err := run(t, "install", "iam", "--role", tc.role)
			if err != nil {
				t.Fatal(err)
			}
			if got := decodePolicy(t, out); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("--role %s:\n%s", tc.role, out)
			}
		})
	}
}

func TestIAMDefaultIsControlPlaneAndNode(t *testing.T) {
	out, _, err := run(t, "install", "iam")
	if err != nil {
		t.Fatal(err)
	}
	var docs map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &docs); err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 {
		t.Fatalf("keys %v, want control-plane and node", docs)
	}
	if got := decodePolicy(t, string(docs["control-plane"])); !reflect.DeepEqual(got, awsapi.Policy(awsapi.ComponentCCM)) {
		t.Errorf("control-plane: %s", docs["control-plane"])
	}
	if got := decodePolicy(t, string(docs["node"])); !reflect.DeepEqual(got, awsapi.NodePolicy()) {
		t.Errorf("node: %s", docs["node"])
	}
}

func TestIAMLeastPrivilege(t *testing.T) {
	out, _, err := run(t, "install", "iam", "--role", "control-plane", "--least-privilege", "--cluster-id", "prod-eu")
	if err != nil {
		t.Fatal(err)
	}
	got := decodePolicy(t, out)
	if !reflect.DeepEqual(got, awsapi.LeastPrivilegePolicy(awsapi.ComponentCCM, "prod-eu")) {
		t.Errorf("not LeastPrivilegePolicy:\n%s", out)
	}
	if strings.Contains(out, awsapi.ClusterIDPlaceholder) {
		t.Errorf("placeholder left in:\n%s", out)
	}
	// The CCM makes no changes in AWS yet (no load balancers, no routes),
	// so the document has no tag condition until it does; from then on the
	// cluster ID must be where the placeholder is in iam/.
	template, err := awsapi.LeastPrivilegePolicy(awsapi.ComponentCCM, awsapi.ClusterIDPlaceholder).JSON()
	if err != nil {
		t.Fatal(err)
	}
	scoped := strings.Contains(string(template), awsapi.ClusterIDPlaceholder)
	if scoped != strings.Contains(out, "kubernetes.io/cluster/prod-eu") {
		t.Errorf("cluster ID not where the placeholder is:\n%s", out)
	}
	if _, log, _ := run(t, "install", "iam", "--role", "control-plane", "--least-privilege", "--cluster-id", "prod-eu"); !scoped && !strings.Contains(log, "no tag condition") {
		t.Errorf("no note that the policy has nothing to scope yet: %q", log)
	}
	// Without --role, the control-plane entry is the least-privilege one.
	out, _, err = run(t, "install", "iam", "--least-privilege", "--cluster-id", "prod-eu")
	if err != nil {
		t.Fatal(err)
	}
	var docs map[string]awsapi.PolicyDocument
	if err := json.Unmarshal([]byte(out), &docs); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(docs["control-plane"], got) || !reflect.DeepEqual(docs["node"], awsapi.NodePolicy()) {
		t.Errorf("default output with --least-privilege:\n%s", out)
	}
}

func TestIAMUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"invalid-role", []string{"--role", "worker"}, []string{"--role", "worker", "control-plane"}},
		{"invalid-least-privilege-without-cluster-id", []string{"--least-privilege"}, []string{"--least-privilege", "--cluster-id"}},
		{"invalid-placeholder-cluster-id", []string{"--least-privilege", "--cluster-id", awsapi.ClusterIDPlaceholder}, []string{"--cluster-id"}},
		{"invalid-cluster-id-chars", []string{"--least-privilege", "--cluster-id", `a"b`}, []string{"--cluster-id"}},
		{"invalid-cluster-id-without-least-privilege", []string{"--cluster-id", "prod"}, []string{"--cluster-id", "--least-privilege"}},
		{"invalid-least-privilege-for-node", []string{"--role", "node", "--least-privilege", "--cluster-id", "prod"}, []string{"--least-privilege", "node"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := run(t, append([]string{"install", "iam"}, tc.args...)...)
			if code := exitcode.Of(err); code != exitcode.Usage {
				t.Fatalf("exit code %d (%v), want %d", code, err, exitcode.Usage)
			}
			if out != "" {
				t.Errorf("wrote output despite the error:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not name %q:\n%v", w, err)
				}
			}
		})
	}
}
