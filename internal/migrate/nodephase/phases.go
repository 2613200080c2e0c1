package nodephase

import (
	"fmt"
	"slices"
	"strings"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
)

// The static Pod changes of the control-plane phases.
var (
	kcmLeaderMigration = podEdit{
		component: componentKCM,
		ops: []flagOp{
			setFlag(flagEnableLeaderMigration, "true"),
			setFlag(flagLeaderMigrationConfig, LeaderMigrationConfigPath),
		},
		addLMVolume: true,
	}
	kcmExternal = podEdit{
		component: componentKCM,
		ops: []flagOp{
			setFlag(flagCloudProvider, providerExternal),
			removeFlag(flagCloudConfig),
			removeFlag(flagEnableLeaderMigration),
			removeFlag(flagLeaderMigrationConfig),
		},
		removeLMVolume: true,
	}
	apiServerExternal = podEdit{
		component: componentAPIServer,
		ops: []flagOp{
			removeFlag(flagCloudProvider),
			removeFlag(flagCloudConfig),
			removeItem(flagAdmissionPlugins, pluginPVL),
		},
	}
)

// controlPlane plans the kube-controller-manager and kube-apiserver
// manifests and the leader-migration file.
func (p *plan) controlPlane(fsys nodeFS, node *nodefiles.Node) error {
	kcm := node.StaticPods[componentKCM]
	if kcm == nil {
		msg := fmt.Sprintf("no %s static Pod in %s: phase %s runs on control-plane nodes only", componentKCM, nodefiles.ManifestsDir, p.o.Phase)
		var problems []string
		for _, pr := range node.Problems {
			if strings.HasPrefix(pr, nodefiles.ManifestsDir) {
				problems = append(problems, pr)
			}
		}
		if len(problems) > 0 {
			msg += " (unreadable manifests: " + strings.Join(problems, "; ") + ")"
		}
		return fmt.Errorf("%s", msg)
	}
	lm := p.o.Phase == PhaseControlPlaneLeaderMigration

	f, err := p.add(fsys, kcm.Path, ScopeControlPlane)
	if err != nil {
		return err
	}
	if !f.orig.exists {
		return fmt.Errorf("%s: the original is missing", kcm.Path)
	}
	f.report = true
	outs := map[bool][]byte{}
	for _, toLM := range []bool{true, false} {
		e := kcmExternal
		if toLM {
			e = kcmLeaderMigration
		}
		out, err := editManifest(kcm.Path, f.orig.data, e)
		if err != nil && toLM == lm {
			return err
		}
		if err == nil {
			outs[toLM] = out
			f.accept = append(f.accept, out)
		}
	}
	f.target = fileContent{data: outs[lm], mode: f.orig.mode, exists: true}

	if api := node.StaticPods[componentAPIServer]; api != nil {
		a, err := p.add(fsys, api.Path, ScopeControlPlane)
		if err != nil {
			return err
		}
		out, err := editManifest(api.Path, a.orig.data, apiServerExternal)
		switch {
		case err != nil && !lm:
			return err
		case err == nil:
			a.accept = append(a.accept, out)
		}
		if !lm {
			a.target = fileContent{data: out, mode: a.orig.mode, exists: true}
			a.report = true
		}
	}

	c, err := p.add(fsys, LeaderMigrationConfigPath, ScopeControlPlane)
	if err != nil {
		return err
	}
	c.acceptAbsent = true
	if len(p.o.LeaderMigrationConfig) > 0 {
		c.accept = append(c.accept, p.o.LeaderMigrationConfig)
	}
	if lm {
		c.target = fileContent{data: p.o.LeaderMigrationConfig, mode: 0o644, exists: true}
		c.report = true
	} else {
		c.target = fileContent{}
	}
	return p.others(fsys, ScopeControlPlane)
}

// kubeletFlags are the kubelet flags the kubelet phase reads or writes.
var kubeletFlags = []string{flagCloudProvider, flagCloudConfig, flagProviderID, flagHostnameOverride, flagNodeLabels}

// kubelet plans the environment files that hold the kubelet's flags: the
// variables that carry the flags the phase changes (nodefiles' Origin), and
// the flag file (Kubelet.FlagFile) where an absent flag is added. Each is
// edited from its original text.
func (p *plan) kubelet(fsys nodeFS, node *nodefiles.Node) error {
	k := node.Kubelet
	if k == nil {
		return fmt.Errorf("no kubelet found under %s: no kubelet.service, drop-in, environment or configuration file", p.o.Root)
	}
	flagFile := k.FlagFile()
	var vars []nodefiles.Origin
	addVar := func(o nodefiles.Origin) {
		if o.Variable != "" && !slices.Contains(vars, o) {
			vars = append(vars, o)
		}
	}
	// unitValues are flags on the ExecStart= line itself, which the tool
	// does not edit.
	unitValues := map[string]string{}
	for _, name := range kubeletFlags {
		o, ok := k.Origin(name)
		if !ok {
			continue
		}
		if o.Variable == "" {
			v, _ := k.Flags.Get(name)
			unitValues[name] = v
			continue
		}
		addVar(o)
	}
	addVar(flagFile)
	// Variables edited before stay edited, from their originals.
	if p.st != nil {
		for _, e := range p.st.Files {
			if e.Scope == ScopeKubelet {
				for _, v := range e.Variables {
					addVar(nodefiles.Origin{File: e.Path, Variable: v})
				}
			}
		}
	}
	if v, ok := unitValues[flagCloudProvider]; ok && v != providerExternal {
		return fmt.Errorf("the kubelet's --cloud-provider=%s is written on the ExecStart= line of %s: change it to --cloud-provider=external there (then `systemctl daemon-reload`) and run again", v, k.Unit)
	}
	if v, ok := unitValues[flagCloudConfig]; ok {
		return fmt.Errorf("the kubelet's --cloud-config=%s is written on the ExecStart= line of %s: remove it there (then `systemctl daemon-reload`) and run again", v, k.Unit)
	}

	// Read each variable from its file's original.
	type varWords struct {
		o     nodefiles.Origin
		f     *planned
		words []string
	}
	var vw []varWords
	for _, o := range vars {
		f, err := p.add(fsys, o.File, ScopeKubelet)
		if err != nil {
			return err
		}
		if !f.orig.exists {
			return fmt.Errorf("%s: the original is missing", o.File)
		}
		f.report = true
		f.variables = append(f.variables, o.Variable)
		ev, err := readEnvVar(string(f.orig.data), o.Variable)
		if err != nil {
			return fmt.Errorf("%s: %w", o.File, err)
		}
		vw = append(vw, varWords{o: o, f: f, words: ev.words})
	}
	// values returns every value of a flag in the original command line.
	values := func(name string) []string {
		var out []string
		if v, ok := unitValues[name]; ok {
			out = append(out, v)
		}
		for _, w := range vw {
			for _, occ := range nodefiles.ScanFlags(w.words, 0) {
				if occ.Name == name {
					out = append(out, occ.Value)
				}
			}
		}
		return out
	}
	has := func(name string) bool { return len(values(name)) > 0 }

	// Identity flags: added when absent, never changed.
	add := map[string]string{}
	if !has(flagCloudProvider) {
		add[flagCloudProvider] = providerExternal
	}
	for _, id := range []struct{ flag, want string }{{flagProviderID, p.o.ProviderID}, {flagHostnameOverride, p.o.HostnameOverride}} {
		if id.want == "" {
			continue
		}
		have := values(id.flag)
		for _, v := range have {
			if v != id.want {
				return fmt.Errorf("the kubelet already has --%s=%s, not %s: the tool does not change a Node's identity; fix the value by hand or leave the option out",
					id.flag, v, id.want)
			}
		}
		if id.flag == flagProviderID && k.Config != nil && k.Config.ProviderID != "" {
			if k.Config.ProviderID != id.want {
				return fmt.Errorf("the kubelet configuration %s has providerID %s, not %s: the tool does not change a Node's identity; fix the value by hand or leave the option out",
					k.ConfigPath, k.Config.ProviderID, id.want)
			}
			have = append(have, k.Config.ProviderID)
		}
		if len(have) == 0 {
			add[id.flag] = id.want
		}
	}
	// The hostname label: into the last --node-labels of an environment
	// file, else a new --node-labels in the flag file.
	labelVar := flagFile
	if p.o.HostnameLabel != "" {
		if v, ok := unitValues[flagNodeLabels]; ok {
			return fmt.Errorf("the kubelet's --node-labels=%s is written on the ExecStart= line of %s: add %s=%s there by hand (then `systemctl daemon-reload`) or leave the label out", v, k.Unit, labelHostname, p.o.HostnameLabel)
		}
		keep := true
		for _, v := range values(flagNodeLabels) {
			for _, item := range strings.Split(v, ",") {
				key, val, _ := strings.Cut(strings.TrimSpace(item), "=")
				if key != labelHostname {
					continue
				}
				if val != p.o.HostnameLabel {
					return fmt.Errorf("the kubelet already has --node-labels with %s=%s, not %s: the tool does not change a Node's labels; fix the value by hand or leave the option out", labelHostname, val, p.o.HostnameLabel)
				}
				keep = false
			}
		}
		if o, ok := k.Origin(flagNodeLabels); ok && o.Variable != "" {
			labelVar = o
		}
		if keep {
			add[flagNodeLabels] = labelHostname + "=" + p.o.HostnameLabel
		}
	}
	if len(add) > 0 && flagFile.Variable == "" {
		return fmt.Errorf("the kubelet takes no flags from an environment file (its ExecStart= is in %s): add %s there by hand", k.Unit, flagList(add))
	}

	// Edit each file's original, variable by variable.
	texts := map[*planned]string{}
	for _, w := range vw {
		if _, ok := texts[w.f]; !ok {
			texts[w.f] = string(w.f.orig.data)
		}
		var ops []flagOp
		if slices.ContainsFunc(nodefiles.ScanFlags(w.words, 0), func(o nodefiles.Occurrence) bool { return o.Name == flagCloudProvider }) {
			ops = append(ops, setFlag(flagCloudProvider, providerExternal))
		}
		ops = append(ops, removeFlag(flagCloudConfig))
		if w.o == flagFile {
			for _, name := range kubeletFlags {
				if v, ok := add[name]; ok && name != flagNodeLabels {
					ops = append(ops, setFlag(name, v))
				}
			}
		}
		if v, ok := add[flagNodeLabels]; ok && w.o == labelVar {
			ops = append(ops, addItem(flagNodeLabels, v))
		}
		out, err := editEnvVar(texts[w.f], w.o.Variable, ops)
		if err != nil {
			return fmt.Errorf("%s: %w", w.o.File, err)
		}
		texts[w.f] = out
	}
	for f, text := range texts {
		f.target = fileContent{data: []byte(text), mode: f.orig.mode, exists: true}
		f.accept = append(f.accept, f.target.data)
	}
	return p.others(fsys, ScopeKubelet)
}

func flagList(flags map[string]string) string {
	var out []string
	for _, name := range kubeletFlags {
		if v, ok := flags[name]; ok {
			out = append(out, "--"+name+"="+v)
		}
	}
	return strings.Join(out, " ")
}
