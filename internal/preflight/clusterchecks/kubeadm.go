package clusterchecks

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/kubeadmapi"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// clusterConfigKey is the key of kubeadm-config that holds the
// ClusterConfiguration.
const clusterConfigKey = kubeadmapi.KindClusterConfiguration

// clusterConfiguration is the subset of kubeadm's ClusterConfiguration
// (kubeadm.k8s.io v1beta3 or v1beta4) that the drift check compares.
type clusterConfiguration struct {
	APIVersion        string       `json:"apiVersion"`
	Kind              string       `json:"kind"`
	KubernetesVersion string       `json:"kubernetesVersion"`
	APIServer         componentCfg `json:"apiServer"`
	ControllerManager componentCfg `json:"controllerManager"`
}

type componentCfg struct {
	ExtraArgs kubeadmapi.ExtraArgs `json:"extraArgs"`
}

// parseClusterConfiguration decodes the ClusterConfiguration of kubeadm-config.
func parseClusterConfiguration(data string) (*clusterConfiguration, error) {
	var cc clusterConfiguration
	if err := yaml.Unmarshal([]byte(data), &cc); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(cc.APIVersion, kubeadmapi.Group+"/") || cc.Kind != kubeadmapi.KindClusterConfiguration {
		return nil, fmt.Errorf("apiVersion %q kind %q, want kubeadm.k8s.io/v1beta3 or v1beta4 ClusterConfiguration", cc.APIVersion, cc.Kind)
	}
	return &cc, nil
}

// driftFlag is a flag whose live value kubeadm upgrade would replace.
type driftFlag struct {
	component, field, flag string
	// def is what kubeadm passes when extraArgs does not name the flag.
	def []string
	// list compares comma-separated values as sets.
	list bool
}

var driftFlags = []driftFlag{
	{component: apiServer, field: "apiServer.extraArgs", flag: "cloud-provider"},
	{component: apiServer, field: "apiServer.extraArgs", flag: "cloud-config"},
	{component: apiServer, field: "apiServer.extraArgs", flag: "enable-admission-plugins", def: []string{"NodeRestriction"}, list: true},
	{component: kcm, field: "controllerManager.extraArgs", flag: "cloud-provider"},
	{component: kcm, field: "controllerManager.extraArgs", flag: "cloud-config"},
}

// normalize renders a flag's values for comparison: the last value for a
// scalar flag, the sorted set of comma-separated items for a list flag.
func normalize(values []string, list bool) string {
	if !list {
		if len(values) == 0 {
			return ""
		}
		return values[len(values)-1]
	}
	var items []string
	for _, v := range values {
		for it := range strings.SplitSeq(v, ",") {
			if it = strings.TrimSpace(it); it != "" && !slices.Contains(items, it) {
				items = append(items, it)
			}
		}
	}
	sort.Strings(items)
	return strings.Join(items, ",")
}

func show(flag, v string) string {
	if v == "" {
		return "no --" + flag
	}
	return fmt.Sprintf("--%s=%s", flag, v)
}

func (r *runner) kubeadmDrift(ctx context.Context) preflight.Result {
	cm, err := r.snap.KubeadmConfig(ctx)
	if err != nil {
		return preflight.Fail(readFix(err), "%v", err)
	}
	if cm == nil {
		return preflight.Skip("no ConfigMap %s/%s: not a kubeadm cluster", kubeSystem, kubeadmConfigMap)
	}
	fixConfig := fmt.Sprintf("`kubectl -n %s edit configmap %s` (key %s)", kubeSystem, kubeadmConfigMap, clusterConfigKey)
	data, ok := cm.Data[clusterConfigKey]
	if !ok {
		return preflight.Fail("restore the ClusterConfiguration with `kubeadm init phase upload-config kubeadm --config <file>`",
			"ConfigMap %s/%s has no %s key: `kubeadm upgrade` cannot run", kubeSystem, kubeadmConfigMap, clusterConfigKey)
	}
	cc, err := parseClusterConfiguration(data)
	if err != nil {
		return preflight.Fail("fix the ClusterConfiguration with "+fixConfig+"; kubeadm does not validate edits",
			"%s in ConfigMap %s/%s does not parse: %v", clusterConfigKey, kubeSystem, kubeadmConfigMap, err)
	}
	nodes, err := r.controlPlane(ctx)
	if err != nil {
		return preflight.Fail(readFix(err), "%v", err)
	}
	var drifts []string
	nodesOf := map[string][]string{}
	seen := 0
	for _, n := range nodes {
		for _, d := range driftFlags {
			sp := n.pods[d.component]
			if sp == nil {
				continue
			}
			seen++
			args := cc.APIServer.ExtraArgs
			if d.component == kcm {
				args = cc.ControllerManager.ExtraArgs
			}
			want := args.Values(d.flag)
			if len(want) == 0 {
				want = d.def
			}
			w, live := normalize(want, d.list), normalize(sp.Flags.Values(d.flag), d.list)
			if w == live {
				continue
			}
			key := fmt.Sprintf("%s has %s but %s in kubeadm-config gives %s", d.component, show(d.flag, live), d.field, show(d.flag, w))
			if _, ok := nodesOf[key]; !ok {
				drifts = append(drifts, key)
			}
			nodesOf[key] = append(nodesOf[key], n.name)
		}
	}
	if seen == 0 {
		return skipNoMirror(apiServer + " or " + kcm)
	}
	if len(drifts) == 0 {
		return preflight.Pass("kubeadm-config (%s) agrees with the running control plane on --cloud-provider, --cloud-config and --enable-admission-plugins", cc.APIVersion)
	}
	parts := make([]string, len(drifts))
	for i, d := range drifts {
		parts[i] = fmt.Sprintf("%s (on %s)", d, strings.Join(nodesOf[d], ", "))
	}
	return preflight.Fail("make them agree before `kubeadm upgrade` does: put the value you want to keep in the ClusterConfiguration with "+fixConfig+
		", then regenerate each control-plane node's manifest from it with `kubeadm init phase control-plane <component> --config <file>`, one node at a time",
		"kubeadm upgrade would revert the live flags: %s", strings.Join(parts, "; "))
}
