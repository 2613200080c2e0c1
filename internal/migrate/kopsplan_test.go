package migrate

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/awsccmctl/awsccmctl/internal/install"
)

// kopsCluster is a kops cluster of one control-plane node and two worker
// instance groups, on the in-tree provider.
func kopsCluster(t *testing.T, kcmFlags ...string) *Cluster {
	t.Helper()
	worker := func(name, ig string) runtime.Object {
		n := node(name, false)
		n.Labels[kopsInstanceGroupLabel] = ig
		return n
	}
	return discover(t, "v1.26.13",
		kopsLabelled(kcmPod("cp-1", append(append([]string{}, inTree...), kcmFlags...)...)), kopsLabelled(apiserverPod("cp-1")), node("cp-1", true),
		worker("w-1", "nodes-us-east-1a"), worker("w-2", "nodes-us-east-1b"))
}

// TestKopsEditsPerStep: every kops edit belongs to a step of the plan, in
// the plan's order; the commands carry exactly the edit's --set values;
// and the flat lists are the per-step ones. test/kops checks the values
// themselves with kops' code.
func TestKopsEditsPerStep(t *testing.T) {
	for _, mode := range []Mode{ModeLeaderMigration, ModeRestart} {
		t.Run(string(mode), func(t *testing.T) {
			p, err := BuildPlan(kopsCluster(t), PlanOptions{Mode: mode, Preflight: passingPreflight,
				Install: install.Configuration{Image: "example.com/ccm:v1"}})
			if err != nil {
				t.Fatal(err)
			}
			k := p.Spec.Kops
			if k == nil || k.ClusterName != "prod" {
				t.Fatalf("spec.kops: %+v", k)
			}
			var steps, commands []string
			for _, e := range k.Edits {
				steps = append(steps, e.Step)
				commands = append(commands, e.Commands...)
				if len(e.Set) == 0 {
					continue
				}
				if got := setValues(e.Commands[0]); !slices.Equal(got, e.Set) {
					t.Errorf("%s: the command sets %v, the edit says %v", e.Step, got, e.Set)
				}
				if !strings.HasPrefix(e.Commands[0], "kops edit cluster --name prod ") {
					t.Errorf("%s: first command %q", e.Step, e.Commands[0])
				}
			}
			want := map[Mode][]string{
				ModeLeaderMigration: {"kcm-leader-migration", "install-ccm", "cut-over", "kubelet-external/nodes-us-east-1a", "kubelet-external/nodes-us-east-1b", "finalize"},
				ModeRestart:         {"kcm-external", "install-ccm", "kubelet-external/nodes-us-east-1a", "kubelet-external/nodes-us-east-1b"},
			}[mode]
			if !slices.Equal(steps, want) {
				t.Errorf("edits for steps %v, want %v", steps, want)
			}
			if !slices.Equal(commands, k.Commands) {
				t.Errorf("spec.kops.commands %v, want the edits' %v", k.Commands, commands)
			}
			if err := p.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestKopsPlanValidateRejects: a plan file whose kops edits name a step
// the plan lacks, or carry a value with a space, is refused.
func TestKopsPlanValidateRejects(t *testing.T) {
	p, err := BuildPlan(kopsCluster(t), PlanOptions{Preflight: passingPreflight})
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.Kops.Edits[0].Step = "no-such-step"
	p.Spec.Kops.Edits[1].Set = append(p.Spec.Kops.Edits[1].Set, "spec.cloudControllerManager.image=a b")
	err = p.Validate()
	for _, w := range []string{`spec.kops.edits[0]: step "no-such-step"`, `spec.kops.edits[1].set "spec.cloudControllerManager.image=a b"`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Validate: %v; want %q", err, w)
		}
	}
}

// setValues returns the --set values of a kops command, as kops' flag
// parser reads them (--set=v or --set v).
func setValues(cmd string) []string {
	var out []string
	f := strings.Fields(cmd)
	for i := 0; i < len(f); i++ {
		switch {
		case strings.HasPrefix(f[i], "--set="):
			out = append(out, strings.TrimPrefix(f[i], "--set="))
		case f[i] == "--set" && i+1 < len(f):
			i++
			out = append(out, f[i])
		}
	}
	return out
}
