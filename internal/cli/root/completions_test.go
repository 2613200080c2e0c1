package root

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/clusterchecks"
	"github.com/awsccmctl/awsccmctl/internal/preflight/nodechecks"
)

// complete asks cobra's hidden __complete command, as the shell scripts
// do, and returns the values (without descriptions) and the directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	out, _, err := runAll(t, append([]string{"__complete"}, args...)...)
	if err != nil {
		t.Fatalf("__complete %v: %v", args, err)
	}
	var values []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, ":") {
			return values, line
		}
		values = append(values, strings.SplitN(line, "\t", 2)[0])
	}
	t.Fatalf("__complete %v: no directive in\n%s", args, out)
	return nil, ""
}

// writeKubeconfig writes a kubeconfig with the given context names.
func writeKubeconfig(t *testing.T, contexts ...string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	for _, c := range contexts {
		cfg.Clusters["cl-"+c] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
		cfg.AuthInfos["u-"+c] = &clientcmdapi.AuthInfo{Token: "x"}
		cfg.Contexts[c] = &clientcmdapi.Context{Cluster: "cl-" + c, AuthInfo: "u-" + c}
	}
	cfg.CurrentContext = contexts[0]
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFlagCompletion(t *testing.T) {
	kc := writeKubeconfig(t, "prod", "dev")
	other := writeKubeconfig(t, "staging")
	for _, tc := range []struct {
		name string
		env  string // KUBECONFIG
		args []string
		want []string
	}{
		{"-o of version", "", []string{"version", "-o", ""}, []string{"text", "json"}},
		{"-o of preflight", "", []string{"preflight", "--output", ""}, []string{"text", "json", preflight.FormatJUnit}},
		{"-o of install kubeadm", "", []string{"install", "kubeadm", "-o", ""}, []string{"text"}},
		{"-o of migrate apply", "", []string{"migrate-from-intree", "apply", "-o", ""}, []string{"text"}},
		{"-o with a prefix", "", []string{"install", "manifests", "-o", "j"}, []string{"json"}},
		{"--mode of preflight", "", []string{"preflight", "--mode", ""}, []string{"pre-install", "pre-migrate", "post-install"}},
		{"--mode of migrate plan", "", []string{"migrate-from-intree", "plan", "--mode", ""}, []string{"leader-migration", "restart"}},
		{"--context from --kubeconfig", "", []string{"preflight", "--kubeconfig", kc, "--context", ""}, []string{"dev", "prod"}},
		{"--context from KUBECONFIG", other, []string{"install", "apply", "--context", ""}, []string{"staging"}},
		{"--kubeconfig beats KUBECONFIG", other, []string{"migrate-from-intree", "status", "--kubeconfig", kc, "--context", "p"}, []string{"prod"}},
		{"--cluster", "", []string{"preflight", "--kubeconfig", kc, "--cluster", ""}, []string{"cl-dev", "cl-prod"}},
		{"--context of an unreadable kubeconfig", "", []string{"preflight", "--kubeconfig", "/nonexistent", "--context", ""}, nil},
		{"--workload", "", []string{"install", "manifests", "--workload", ""}, []string{"daemonset", "deployment"}},
		{"--role", "", []string{"install", "iam", "--role", ""}, []string{"control-plane", "node", "preflight"}},
		{"--dry-run of install apply", "", []string{"install", "apply", "--dry-run", ""}, []string{"client", "server"}},
		{"--fail-on", "", []string{"preflight", "--fail-on", "w"}, []string{"warning"}},
		{"--cloud-routes", "", []string{"preflight", "--cloud-routes", ""}, []string{"auto", "on", "off"}},
		{"--phase", "", []string{"migrate-from-intree", "node", "--phase", "c"}, []string{"control-plane-leader-migration", "control-plane-external"}},
		{"--scope", "", []string{"migrate-from-intree", "node", "--scope", ""}, []string{"control-plane", "kubelet"}},
		{"--node-runner", "", []string{"migrate-from-intree", "resume", "--node-runner", ""}, []string{"operator", "pods"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.env)
			got, directive := complete(t, tc.args...)
			if !slices.Equal(got, tc.want) {
				t.Errorf("completions = %q, want %q", got, tc.want)
			}
			if directive != ":4" { // ShellCompDirectiveNoFileComp: values, not file names
				t.Errorf("directive %s, want :4", directive)
			}
		})
	}
}

// TestCategoryCompletion: --category offers the categories of the checks
// themselves, and completes the last element of a list.
func TestCategoryCompletion(t *testing.T) {
	got, _ := complete(t, "preflight", "--category", "")
	for _, want := range []string{"aws", clusterchecks.CategoryCluster, clusterchecks.CategoryNodes, nodechecks.CategoryKubelet, nodechecks.CategoryControlPlane} {
		if !slices.Contains(got, want) {
			t.Errorf("--category completions %q lack %q", got, want)
		}
	}
	got, _ = complete(t, "preflight", "--category", "aws,ku")
	if !slices.Equal(got, []string{"aws,kubelet"}) {
		t.Errorf("--category aws,ku completes to %q, want [aws,kubelet]", got)
	}
	got, _ = complete(t, "preflight", "--ignore-checks", "")
	if !slices.Contains(got, "all") || !slices.Contains(got, clusterchecks.IDClusterReachable) {
		t.Errorf("--ignore-checks completions %q lack all and %s", got, clusterchecks.IDClusterReachable)
	}
}
