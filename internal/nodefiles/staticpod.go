package nodefiles

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
	"sigs.k8s.io/yaml"
)

// ManifestsDir is where kubeadm and kops write the static Pods.
const ManifestsDir = "/etc/kubernetes/manifests"

// Components are the control-plane components recognised in static Pods.
var Components = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"}

func readStaticPods(r fsRoot, n *Node) {
	names, err := r.readDir(ManifestsDir)
	if err != nil {
		n.problem(ManifestsDir, "%v", err)
		return
	}
	for _, name := range names {
		if strings.HasPrefix(name, ".") || (!strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".manifest")) {
			continue
		}
		p := path.Join(ManifestsDir, name)
		data, err := r.readFile(p)
		if err != nil {
			n.problem(p, "%v", err)
			continue
		}
		sp, err := parseStaticPod(data)
		if err != nil {
			n.problem(p, "%v", err)
			continue
		}
		n.read(p)
		if sp == nil {
			continue // a static Pod of something else (etcd-manager, a proxy...)
		}
		sp.Path = p
		if prev, dup := n.StaticPods[sp.Component]; dup {
			n.problem(p, "a second static Pod for %s (the first is %s); the kubelet runs both: move the copy out of %s", sp.Component, prev.Path, ManifestsDir)
			continue
		}
		n.StaticPods[sp.Component] = sp
	}
}

// parseStaticPod decodes a manifest as a Pod and finds the component it
// runs. It returns nil, nil for a valid Pod of another component.
func parseStaticPod(data []byte) (*StaticPod, error) {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	var pod corev1.Pod
	if err := json.Unmarshal(j, &pod); err != nil {
		return nil, fmt.Errorf("not a Pod: %w", err)
	}
	if pod.Kind != "Pod" || pod.APIVersion != "v1" {
		return nil, fmt.Errorf("apiVersion %q kind %q, want v1 Pod", pod.APIVersion, pod.Kind)
	}
	if len(pod.Spec.Containers) == 0 {
		return nil, fmt.Errorf("the Pod has no containers")
	}
	return FromPod(&pod), nil
}

// FromPod finds the control-plane component a Pod runs (a static Pod
// manifest, or its mirror Pod read from the API) and its command line; nil
// for a Pod of another component.
func FromPod(pod *corev1.Pod) *StaticPod {
	if len(pod.Spec.Containers) == 0 {
		return nil
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if comp, argv := ContainerCommand(c, isComponent); comp != "" {
			return newStaticPod(comp, c, argv)
		}
	}
	// No container names a component binary: fall back on the Pod's name or
	// labels, and the container named like it (else the first).
	for _, name := range []string{pod.Labels["component"], pod.Labels["k8s-app"], pod.Name} {
		if !slices.Contains(Components, name) {
			continue
		}
		c := &pod.Spec.Containers[0]
		for i := range pod.Spec.Containers {
			if pod.Spec.Containers[i].Name == name {
				c = &pod.Spec.Containers[i]
			}
		}
		return newStaticPod(name, c, append(slices.Clone(c.Command), c.Args...))
	}
	return nil
}

func newStaticPod(comp string, c *corev1.Container, argv []string) *StaticPod {
	return &StaticPod{Component: comp, Image: c.Image, Version: ImageVersion(c.Image), Flags: ParseFlags(argv)}
}

// isComponent reports whether a binary's base name is a control-plane
// component preflight and the migration read.
func isComponent(base string) bool { return slices.Contains(Components, base) }

// ContainerCommand finds the binary a container runs, by its base name as
// isBinary accepts it, in the container's command and args: possibly after
// a wrapper (kops's /go-runner) or inside `sh -c "..."`. It returns the
// binary's base name and the command line from the binary on; "" when the
// container runs something else. Preflight and the migration read static
// Pods with it, and the test bed's kubelet stand-in runs them with it.
func ContainerCommand(c *corev1.Container, isBinary func(base string) bool) (string, []string) {
	toks := append(slices.Clone(c.Command), c.Args...)
	if i, ok := ShellScript(toks); ok {
		return scriptCommand(toks[i], isBinary)
	}
	return findBinary(toks, isBinary)
}

// findBinary returns the binary that toks runs and the command line from
// it on.
func findBinary(toks []string, isBinary func(base string) bool) (string, []string) {
	i := BinaryIndex(toks, isBinary)
	if i < 0 {
		return "", nil
	}
	return path.Base(toks[i]), toks[i:]
}

// wrappers are commands that run the next word as the program.
var wrappers = []string{"exec", "env", "nice", "nohup", "ionice", "setsid", "go-runner", "tini", "dumb-init"}

// BinaryIndex returns the index of the binary in toks that isBinary accepts
// (it is given the token's base name): the first word, or the first word
// after wrappers, their flags, VAR=value assignments and numbers (kops's
// `/go-runner --log-file=... --also-stdout /usr/local/bin/kube-apiserver`,
// `nice -n 10`). -1 when toks runs something else: a path that is only an
// argument (`mkdir -p /var/lib/etcd`) is not a binary.
func BinaryIndex(toks []string, isBinary func(base string) bool) int {
	for i, t := range toks {
		if !strings.HasPrefix(t, "-") && isBinary(path.Base(t)) {
			return i
		}
		skip := slices.Contains(wrappers, path.Base(t)) || strings.HasPrefix(t, "-") ||
			strings.Contains(t, "=") || strings.Trim(t, "0123456789") == ""
		if !skip {
			return -1
		}
	}
	return -1
}

var shells = []string{"sh", "bash", "dash", "ash"}

// ShellScript returns the index of the script in `sh [options] -c script`
// (the older kops manifests' form); false when toks is not a shell given a
// script.
func ShellScript(toks []string) (int, bool) {
	if len(toks) < 2 || !slices.Contains(shells, path.Base(toks[0])) {
		return 0, false
	}
	for j := 1; j < len(toks); j++ {
		t := toks[j]
		if !strings.HasPrefix(t, "-") || t == "--" {
			return 0, false
		}
		if t == "-o" {
			j++
			continue
		}
		if strings.Contains(t[1:], "c") && j+1 < len(toks) {
			return j + 1, true
		}
	}
	return 0, false
}

// scriptCommand parses a shell script and returns the first simple command
// that runs a component, from the binary on, with quotes removed. Shell
// redirections are not part of a command's arguments, so "> /var/log/x 2>&1"
// is left out. Parameter expansions keep their text ("$HOST_IP").
func scriptCommand(script string, isBinary func(base string) bool) (comp string, argv []string) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		return "", nil
	}
	syntax.Walk(f, func(node syntax.Node) bool {
		call, ok := node.(*syntax.CallExpr)
		if !ok || comp != "" {
			return comp == ""
		}
		var toks []string
		for _, w := range call.Args {
			toks = append(toks, wordFields(w)...)
		}
		comp, argv = findBinary(toks, isBinary)
		return comp == ""
	})
	return comp, argv
}

// wordFields expands a word without an environment: quotes are removed and
// $NAME stays as written. A word that cannot be expanded statically (command
// substitution, arithmetic) is kept as written.
func wordFields(w *syntax.Word) (fields []string) {
	defer func() {
		if recover() != nil {
			fields = []string{printWord(w)}
		}
	}()
	cfg := &expand.Config{Env: literalEnv{}}
	out, err := expand.Fields(cfg, w)
	if err != nil {
		return []string{printWord(w)}
	}
	return out
}

func printWord(w *syntax.Word) string {
	var b bytes.Buffer
	if err := syntax.NewPrinter().Print(&b, w); err != nil {
		return ""
	}
	return b.String()
}

// literalEnv answers every variable with its own reference, so expansion
// keeps "$NAME" and "~" as text and never consults the host.
type literalEnv struct{}

// Get returns "$NAME" for NAME, "~" for the home directories, and leaves IFS
// unset.
func (literalEnv) Get(name string) expand.Variable {
	if name == "IFS" {
		return expand.Variable{} // unset: the default blanks
	}
	s := "$" + name
	if name == "HOME" || strings.HasPrefix(name, "HOME ") {
		s = "~" + strings.TrimPrefix(strings.TrimPrefix(name, "HOME"), " ")
	}
	return expand.Variable{Set: true, Kind: expand.String, Str: s}
}

// Each lists no variables.
func (literalEnv) Each(func(string, expand.Variable) bool) {}

var versionTag = regexp.MustCompile(`^v?[0-9]+\.[0-9]+(\.[0-9]+)?([-+][0-9A-Za-z.+-]*)?$`)

// ImageVersion returns an image's tag when it is a version ("v1.26.15" of
// "registry.k8s.io/kube-apiserver:v1.26.15@sha256:..."), else "".
func ImageVersion(image string) string {
	ref, _, _ := strings.Cut(image, "@")
	slash, colon := strings.LastIndex(ref, "/"), strings.LastIndex(ref, ":")
	if colon <= slash {
		return ""
	}
	if tag := ref[colon+1:]; versionTag.MatchString(tag) {
		return tag
	}
	return ""
}
