package nodefiles

import (
	"errors"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// UnitDirs are the systemd unit directories searched for kubelet.service, in
// systemd's order of precedence; "<dir>/kubelet.service.d/*.conf" are its
// drop-ins.
var UnitDirs = []string{"/etc/systemd/system", "/lib/systemd/system", "/usr/lib/systemd/system"}

// EnvFiles are the kubelet environment files kubeadm, the DEB/RPM packages
// and kops write, read even when no unit names them.
var EnvFiles = []string{"/var/lib/kubelet/kubeadm-flags.env", "/etc/default/kubelet", "/etc/sysconfig/kubelet"}

// DefaultKubeletConfig is kubeadm's kubelet configuration file, used when
// --config is not given.
const DefaultKubeletConfig = "/var/lib/kubelet/config.yaml"

// argsVarPattern matches the variables that carry kubelet flags.
var argsVarPattern = regexp.MustCompile(`^(KUBELET_[A-Z0-9_]*ARGS|DAEMON_ARGS)$`)

// preferredArgsVars are where node-local flags belong, best first.
var preferredArgsVars = []string{"KUBELET_KUBEADM_ARGS", "DAEMON_ARGS", "KUBELET_EXTRA_ARGS"}

type kubeletReader struct {
	r     fsRoot
	n     *Node
	k     *Kubelet
	units []string
	envs  map[string][]envVar // parsed environment files; nil slice: missing
}

// service is what the kubelet unit and its drop-ins say, in order.
type service struct {
	env      []envVar // Environment=
	envFiles []string // EnvironmentFile=, "-" prefix kept
	exec     unitEntry
	execUnit string // file of the effective ExecStart=; "" when none
}

func readKubelet(r fsRoot, n *Node) *Kubelet {
	kr := &kubeletReader{r: r, n: n, k: &Kubelet{}, envs: map[string][]envVar{}}
	kr.units = kr.unitFiles()
	svc := kr.readUnits()
	env := svc.env
	// Variables from EnvironmentFile= override Environment= (systemd.exec(5)).
	for _, f := range svc.envFiles {
		optional := strings.HasPrefix(f, "-")
		f = strings.TrimPrefix(f, "-")
		vars, ok := kr.envFile(f)
		if !ok && !optional {
			n.problem(f, "named by EnvironmentFile= but missing: systemd will not start kubelet.service (prefix the path with \"-\" if it is optional)")
		}
		if ok {
			kr.source(f)
		}
		env = append(env, vars...)
	}
	// Parse the well-known files even when unused, to report their problems;
	// without ExecStart= they are the only source of flags.
	for _, f := range EnvFiles {
		declared := slices.ContainsFunc(svc.envFiles, func(d string) bool { return strings.TrimPrefix(d, "-") == f })
		if vars, ok := kr.envFile(f); ok && svc.execUnit == "" && !declared {
			kr.source(f)
			env = append(env, vars...)
		}
	}
	byName := map[string]envVar{}
	for _, v := range env {
		byName[v.Name] = v
	}
	if svc.execUnit != "" {
		kr.fromExec(svc.exec, svc.execUnit, byName)
	} else {
		kr.fromEnv(env, byName)
	}
	kr.readConfig()
	if len(kr.k.Sources) == 0 {
		return nil
	}
	return kr.k
}

// readUnits applies the unit and drop-ins in order; an empty Environment=,
// EnvironmentFile= or ExecStart= resets the list, as in systemd.
func (kr *kubeletReader) readUnits() service {
	var svc service
	execs := 0
	for _, u := range kr.units {
		data, err := kr.r.readFile(u)
		if err != nil {
			kr.n.problem(u, "%v", err)
			continue
		}
		kr.source(u)
		entries, issues := parseUnit(string(data))
		for _, is := range issues {
			kr.n.problem(u, "%s", is)
		}
		for _, e := range entries {
			if e.Section != "Service" {
				continue
			}
			switch {
			case e.Key == "Environment":
				svc.env = kr.environment(svc.env, e, u)
			case e.Key == "EnvironmentFile" && e.Value == "":
				svc.envFiles = nil
			case e.Key == "EnvironmentFile":
				svc.envFiles = append(svc.envFiles, e.Value)
			case e.Key == "ExecStart" && e.Value == "":
				svc.exec, svc.execUnit, execs = unitEntry{}, "", 0
			case e.Key == "ExecStart":
				if execs++; execs > 1 {
					kr.n.problem(u, "line %d: a second ExecStart= without an empty ExecStart= before it: systemd refuses to start kubelet.service", e.Line)
				}
				svc.exec, svc.execUnit = e, u
			}
		}
	}
	return svc
}

// unitFiles returns the kubelet unit (the first found) and its drop-ins,
// merged by file name across the unit directories (the first directory wins)
// and sorted by name, as systemd applies them.
func (kr *kubeletReader) unitFiles() []string {
	var units []string
	for _, d := range UnitDirs {
		p := path.Join(d, "kubelet.service")
		if kr.r.masked(p) {
			kr.n.problem(p, "kubelet.service is masked (a link to /dev/null): systemd will not start the kubelet; run `systemctl unmask kubelet`")
			return nil
		}
		if kr.r.exists(p) {
			units = append(units, p)
			break
		}
	}
	dropins := map[string]string{}
	for _, d := range UnitDirs {
		dir := path.Join(d, "kubelet.service.d")
		names, err := kr.r.readDir(dir)
		if err != nil {
			kr.n.problem(dir, "%v", err)
		}
		for _, name := range names {
			if _, seen := dropins[name]; !seen && strings.HasSuffix(name, ".conf") {
				dropins[name] = path.Join(dir, name)
			}
		}
	}
	names := make([]string, 0, len(dropins))
	for name := range dropins {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		units = append(units, dropins[name])
	}
	return units
}

// environment applies one Environment= line; an empty one resets the list.
func (kr *kubeletReader) environment(env []envVar, e unitEntry, unit string) []envVar {
	if e.Value == "" {
		return nil
	}
	words, err := splitWords(e.Value, false)
	if err != nil {
		kr.n.problem(unit, "line %d: Environment=: %v", e.Line, err)
		return env
	}
	for _, w := range words {
		name, value, ok := strings.Cut(w, "=")
		if !ok || !envNamePattern.MatchString(name) {
			kr.n.problem(unit, "line %d: Environment=: %q is not NAME=VALUE", e.Line, truncate(w))
			continue
		}
		env = append(env, envVar{Name: name, Value: value, Source: unit})
	}
	return env
}

// envFile parses an environment file once; ok is false when it is missing
// or unreadable (the latter is a problem).
func (kr *kubeletReader) envFile(p string) ([]envVar, bool) {
	if vars, done := kr.envs[p]; done {
		return vars, vars != nil
	}
	data, err := kr.r.readFile(p)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			kr.n.problem(p, "%v", err)
		}
		kr.envs[p] = nil
		return nil, false
	}
	vars, issues := parseEnvFile(string(data))
	for _, is := range issues {
		kr.n.problem(p, "%s", is)
	}
	for i := range vars {
		vars[i].Source = p
	}
	if vars == nil {
		vars = []envVar{}
	}
	kr.envs[p] = vars
	return vars, true
}

func (kr *kubeletReader) source(p string) {
	if !slices.Contains(kr.k.Sources, p) {
		kr.k.Sources = append(kr.k.Sources, p)
	}
	kr.n.read(p)
}

// fromExec builds the command line from the effective ExecStart=.
func (kr *kubeletReader) fromExec(exec unitEntry, unit string, env map[string]envVar) {
	k := kr.k
	k.Unit = unit
	argv, origins, refs, err := expandExec(exec.Value, unit, env)
	if err != nil {
		kr.n.problem(unit, "line %d: ExecStart=: %v", exec.Line, err)
		return
	}
	for i, a := range argv {
		if path.Base(a) == "kubelet" {
			argv, origins = argv[i:], origins[i:]
			break
		}
	}
	k.Flags, k.origins = ParseFlags(argv), origins
	// Node-local flags belong in the environment file behind a referenced
	// flag variable; variables set by Environment= live in package-owned
	// units, so the fallback is the unit holding ExecStart=.
	k.flagFile = Origin{File: unit}
	for _, name := range append(slices.Clone(preferredArgsVars), refs...) {
		v, ok := env[name]
		if ok && slices.Contains(refs, name) && argsVarPattern.MatchString(name) && !slices.Contains(kr.units, v.Source) {
			k.flagFile = Origin{File: v.Source, Variable: name}
			return
		}
	}
}

// fromEnv builds the command line from the flag variables of the environment
// files when no ExecStart= was found.
func (kr *kubeletReader) fromEnv(env []envVar, byName map[string]envVar) {
	argv, origins := []string{"kubelet"}, []Origin{{}}
	var seen []string
	for _, v := range env {
		if !argsVarPattern.MatchString(v.Name) || slices.Contains(seen, v.Name) {
			continue
		}
		seen = append(seen, v.Name)
		last := byName[v.Name]
		parts, _ := splitWords(last.Value, true)
		for _, p := range parts {
			argv = append(argv, p)
			origins = append(origins, Origin{File: last.Source, Variable: v.Name})
		}
	}
	kr.k.Flags, kr.k.origins = ParseFlags(argv), origins
	for _, name := range append(slices.Clone(preferredArgsVars), seen...) {
		if v, ok := byName[name]; ok && slices.Contains(seen, name) {
			kr.k.flagFile = Origin{File: v.Source, Variable: name}
			return
		}
	}
}

// readConfig reads the kubelet configuration file's subset.
func (kr *kubeletReader) readConfig() {
	k := kr.k
	p, given := k.Flags.Get("config")
	if !given {
		if !kr.r.exists(DefaultKubeletConfig) {
			return
		}
		p = DefaultKubeletConfig
	}
	k.ConfigPath = p
	data, err := kr.r.readFile(p)
	if err != nil {
		reason := err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			reason = "named by the kubelet's --config but missing: the kubelet will not start"
		}
		kr.n.problem(p, "%s", reason)
		return
	}
	var cfg KubeletConfig
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		kr.n.problem(p, "not valid YAML: %v", err)
		return
	}
	if cfg.Kind != "KubeletConfiguration" {
		kr.n.problem(p, "kind %q, want KubeletConfiguration", cfg.Kind)
		return
	}
	k.Config = &cfg
	kr.source(p)
}
