package root

import (
	"maps"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/cloud-provider/names"

	"github.com/awsccmctl/awsccmctl/internal/cli/installcmd"
	"github.com/awsccmctl/awsccmctl/internal/cli/migratecmd"
	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
	"github.com/awsccmctl/awsccmctl/internal/install/iampolicy"
	"github.com/awsccmctl/awsccmctl/internal/kubeadmapi"
	"github.com/awsccmctl/awsccmctl/internal/migrate"
	"github.com/awsccmctl/awsccmctl/internal/migrate/nodephase"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/gather"
	"github.com/awsccmctl/awsccmctl/internal/tagging"
)

// completer returns the values of a flag for the command being completed.
type completer func(cmd *cobra.Command) []string

// flagCompleters complete flags by name, wherever they are defined: the
// command packages define the flags and need not know about completion.
// A flag of the same name means the same thing on every command (the
// kubeconfig flags are kubectl's), or the completer asks which command.
func flagCompleters() map[string]completer {
	kubeconfig := func(pick func(*kubeconfigNames) []string) completer {
		return func(cmd *cobra.Command) []string { return pick(readKubeconfig(cmd)) }
	}
	return map[string]completer{
		"output":        outputCompletions,
		"mode":          modeCompletions,
		"category":      func(*cobra.Command) []string { return checkCategories() },
		"ignore-checks": func(*cobra.Command) []string { return append(checkIDs(), "all") },
		"context":       kubeconfig(func(k *kubeconfigNames) []string { return k.contexts }),
		"cluster":       kubeconfig(func(k *kubeconfigNames) []string { return k.clusters }),
		"user":          kubeconfig(func(k *kubeconfigNames) []string { return k.users }),
		"workload": func(*cobra.Command) []string {
			return []string{string(install.WorkloadDaemonSet), string(install.WorkloadDeployment)}
		},
		"role":    func(*cobra.Command) []string { return iampolicy.Roles },
		"dry-run": func(*cobra.Command) []string { return []string{apply.DryRunClient, apply.DryRunServer} },
		"fail-on": func(*cobra.Command) []string {
			return []string{string(preflight.SeverityError), string(preflight.SeverityWarning)}
		},
		"phase": phaseCompletions,
		"scope": func(*cobra.Command) []string {
			return []string{string(nodephase.ScopeControlPlane), string(nodephase.ScopeKubelet)}
		},
		"node-runner": func(*cobra.Command) []string { return migratecmd.NodeRunners },
		"format":      func(*cobra.Command) []string { return installcmd.ManifestsFormats() },
		"cloud-routes": func(*cobra.Command) []string {
			return []string{gather.CloudRoutesAuto, gather.CloudRoutesOn, gather.CloudRoutesOff}
		},
		"api-version": func(*cobra.Command) []string { return []string{kubeadmapi.V1beta3, kubeadmapi.V1beta4} },
		"controllers": func(*cobra.Command) []string { return controllerCompletions() },
		// apply --until and rollback --to name a step of the plan.
		"until": planSteps,
		"to":    planSteps,
	}
}

// controllerCompletions are the --controllers values install accepts: *
// and the CCM's controllers by name and alias (a name prefixed with - turns
// it off; the shell completes the name after the dash as typed).
func controllerCompletions() []string {
	known := []string{tagging.ControllerName}
	for alias, name := range names.CCMControllerAliases() {
		known = append(known, alias, name)
	}
	sort.Strings(known)
	return append([]string{"*"}, slices.Compact(known)...)
}

// planSteps are the step names of the plan file the command's --plan
// names; none without a readable plan.
func planSteps(cmd *cobra.Command) []string {
	f := cmd.Flags().Lookup("plan")
	if f == nil || f.Value.String() == "" {
		return nil
	}
	data, err := os.ReadFile(f.Value.String())
	if err != nil {
		return nil
	}
	p, err := migrate.DecodePlan(data)
	if err != nil {
		return nil
	}
	return p.StepNames()
}

// phaseCompletions are the node command's --phase values.
func phaseCompletions(*cobra.Command) []string {
	var out []string
	for _, p := range nodephase.Phases {
		out = append(out, string(p))
	}
	return out
}

// registerCompletions registers the completers on every flag of the tree
// that has one, by name. cobra keys completions by flag, so a persistent
// flag is registered once, on the command that defines it.
func registerCompletions(root *cobra.Command) {
	completers := flagCompleters()
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			complete, ok := completers[f.Name]
			// A bool flag (the node command's --dry-run) takes no value to
			// complete.
			if !ok || f.Value.Type() == "bool" {
				return
			}
			// The error only says the flag is already registered (a
			// flag shared between commands): it completes already.
			_ = cmd.RegisterFlagCompletionFunc(f.Name, func(c *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
				var out []cobra.Completion
				for _, v := range complete(c) {
					// Comma-separated lists (--category a,b) complete
					// their last element.
					prefix, last := "", toComplete
					if f.Value.Type() == "stringSlice" {
						if i := strings.LastIndex(toComplete, ","); i >= 0 {
							prefix, last = toComplete[:i+1], toComplete[i+1:]
						}
					}
					if strings.HasPrefix(v, last) {
						out = append(out, prefix+v)
					}
				}
				return out, cobra.ShellCompDirectiveNoFileComp
			})
		})
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// outputCompletions are the -o values the command writes; a command that
// writes no document (the root, a group) offers the flag's own text and
// json.
func outputCompletions(cmd *cobra.Command) []string {
	if formats, ok := outputFormats()[commandPath(cmd)]; ok {
		return formats
	}
	return []string{OutputText, OutputJSON}
}

// modeCompletions are the --mode values of preflight and of
// migrate-from-intree plan.
func modeCompletions(cmd *cobra.Command) []string {
	var modes []string
	switch commandPath(cmd) {
	case "preflight":
		for _, m := range preflight.Modes {
			modes = append(modes, string(m))
		}
	case "migrate-from-intree plan":
		modes = []string{string(migrate.ModeLeaderMigration), string(migrate.ModeRestart)}
	}
	return modes
}

// allChecks are every preflight check, as the reference docs list them
// (gather.ReferenceChecks): the modes change severities, not the set of
// checks. Building them reads nothing.
func allChecks() []preflight.Check {
	node, cluster, aws := gather.ReferenceChecks()
	return slices.Concat(node, cluster, aws)
}

func checkCategories() []string {
	return uniqueSorted(allChecks(), func(c preflight.Check) string { return c.Category })
}

func checkIDs() []string {
	return uniqueSorted(allChecks(), func(c preflight.Check) string { return c.ID })
}

func uniqueSorted(checks []preflight.Check, key func(preflight.Check) string) []string {
	var out []string
	for _, c := range checks {
		if k := key(c); k != "" && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// kubeconfigNames are the names a kubeconfig defines.
type kubeconfigNames struct {
	contexts, clusters, users []string
}

// readKubeconfig reads the kubeconfig the command would use: its
// --kubeconfig flag, else KUBECONFIG, else ~/.kube/config, merged as
// kubectl merges them. An unreadable one completes nothing.
func readKubeconfig(cmd *cobra.Command) *kubeconfigNames {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f := cmd.Flags().Lookup("kubeconfig"); f != nil {
		rules.ExplicitPath = f.Value.String()
	}
	cfg, err := rules.Load()
	if err != nil {
		return &kubeconfigNames{}
	}
	return &kubeconfigNames{
		contexts: slices.Sorted(maps.Keys(cfg.Contexts)),
		clusters: slices.Sorted(maps.Keys(cfg.Clusters)),
		users:    slices.Sorted(maps.Keys(cfg.AuthInfos)),
	}
}
