package clusterchecks

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/nodechecks"
)

const (
	apiServer = "kube-apiserver"
	kcm       = "kube-controller-manager"
)

// Labels that name a control-plane component on its mirror Pod: kubeadm
// writes component=<name>, kops k8s-app=<name>.
const (
	labelKubeadm = "component"
	labelKops    = "k8s-app"
)

// cpNode is one control-plane node as its mirror Pods show it.
type cpNode struct {
	name string
	// pods holds the static Pods by component, their flags read from the
	// mirror Pods' command lines.
	pods map[string]*nodefiles.StaticPod
}

// controlPlane returns the nodes that run a kube-apiserver or
// kube-controller-manager mirror Pod, by node name.
func (r *runner) controlPlane(ctx context.Context) ([]cpNode, error) {
	pods, err := r.snap.Pods(ctx)
	if err != nil {
		return nil, err
	}
	v, err := r.snap.serverVersion(ctx)
	if err != nil {
		return nil, err
	}
	byNode := map[string]*cpNode{}
	for i := range pods {
		p := &pods[i]
		comp, kops := mirrorComponent(p)
		if comp == "" {
			continue
		}
		node := p.Spec.NodeName
		if node == "" {
			node = p.Name
		}
		n := byNode[node]
		if n == nil {
			n = &cpNode{name: node, pods: map[string]*nodefiles.StaticPod{}}
			byNode[node] = n
		}
		if _, dup := n.pods[comp]; !dup {
			n.pods[comp] = staticPodOf(p, comp, node, kops, v.GitVersion)
		}
	}
	out := make([]cpNode, 0, len(byNode))
	for _, n := range byNode {
		out = append(out, *n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// mirrorComponent returns the control-plane component a running Pod in
// kube-system is labelled with, and whether the label is kops's.
func mirrorComponent(p *corev1.Pod) (comp string, kops bool) {
	if p.Namespace != kubeSystem || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return "", false
	}
	for _, c := range []string{apiServer, kcm} {
		switch c {
		case p.Labels[labelKubeadm]:
			return c, false
		case p.Labels[labelKops]:
			return c, true
		}
	}
	return "", false
}

// staticPodOf reads a mirror Pod the way nodefiles reads a manifest. The
// manifest's path is not in the API; it is named after the tool that wrote
// it ("<node>:/etc/kubernetes/manifests/kube-apiserver.yaml" for kubeadm,
// ".manifest" for kops), which is also how the rules word their fix. An
// image without a version tag takes the server's version.
func staticPodOf(p *corev1.Pod, comp, node string, kops bool, serverVersion string) *nodefiles.StaticPod {
	c := containerOf(p, comp)
	ext := ".yaml"
	if kops {
		ext = ".manifest"
	}
	sp := &nodefiles.StaticPod{
		Path:      fmt.Sprintf("%s:%s/%s%s", node, nodefiles.ManifestsDir, comp, ext),
		Component: comp,
		Image:     c.Image,
		Version:   nodefiles.ImageVersion(c.Image),
		Flags:     nodefiles.ParseFlags(commandLine(comp, append(slices.Clone(c.Command), c.Args...))),
	}
	if sp.Version == "" {
		sp.Version = serverVersion
	}
	return sp
}

// containerOf returns the container that runs comp: the one named like it,
// else the first whose command line names its binary, else the first.
func containerOf(p *corev1.Pod, comp string) *corev1.Container {
	cs := p.Spec.Containers
	if len(cs) == 0 {
		return &corev1.Container{}
	}
	for i := range cs {
		if cs[i].Name == comp {
			return &cs[i]
		}
	}
	for i := range cs {
		for _, t := range append(slices.Clone(cs[i].Command), cs[i].Args...) {
			if path.Base(t) == comp || strings.Contains(t, "/"+comp+" ") {
				return &cs[i]
			}
		}
	}
	return &cs[0]
}

// commandLine returns comp's command line from its binary on: after a
// wrapper (kops's `/go-runner --log-file=... /usr/local/bin/kube-apiserver`)
// or inside `sh -c "... exec /usr/local/bin/kube-apiserver ... > /pipe 2>&1"`
// (older kops). Args without the binary run under the image's entrypoint,
// which is the binary.
func commandLine(comp string, toks []string) []string {
	script := false
	if len(toks) >= 3 && slices.Contains([]string{"sh", "bash", "ash", "dash"}, path.Base(toks[0])) && toks[1] == "-c" {
		toks, script = strings.Fields(toks[2]), true
	}
	for i, t := range toks {
		if strings.HasPrefix(t, "-") || path.Base(strings.Trim(t, `"'`)) != comp {
			continue
		}
		argv := toks[i:]
		if !script {
			return argv
		}
		var out []string
		for _, w := range argv {
			if isShellOperator(w) {
				break
			}
			end := strings.HasSuffix(w, ";")
			out = append(out, strings.Trim(strings.TrimSuffix(w, ";"), `"'`))
			if end {
				break
			}
		}
		return out
	}
	if script {
		return []string{comp}
	}
	return append([]string{comp}, toks...)
}

// isShellOperator reports whether a word of a script ends a simple command
// or starts a redirection.
func isShellOperator(w string) bool {
	switch w {
	case ";", "&", "&&", "|", "||":
		return true
	}
	return strings.HasPrefix(w, ">") || strings.HasPrefix(w, "<") || strings.HasPrefix(w, "2>") || strings.HasPrefix(w, "1>")
}

// skipNoMirror is the result when no control-plane node shows comp.
func skipNoMirror(comp string) preflight.Result {
	return preflight.Skip("no %s mirror Pod in %s (label %s=%s or %s=%s): the control plane is managed (EKS) or does not run as static Pods; check its flags where it is configured",
		comp, kubeSystem, labelKubeadm, comp, labelKops, comp)
}

// controlPlaneRule applies a node-mode rule to every control-plane node and
// reports the worst outcome.
func (r *runner) controlPlaneRule(rule nodechecks.ControlPlaneRule) func(context.Context) preflight.Result {
	return func(ctx context.Context) preflight.Result {
		nodes, err := r.controlPlane(ctx)
		if err != nil {
			return preflight.Fail(readFix(err), "%v", err)
		}
		var results []nodeResult
		for _, n := range nodes {
			if n.pods[rule.Component] == nil {
				continue
			}
			results = append(results, nodeResult{node: n.name, res: nodechecks.RunControlPlaneRule(ctx, rule.ID, r.in.Mode, n.pods)})
		}
		if len(results) == 0 {
			return skipNoMirror(rule.Component)
		}
		return merge(results)
	}
}

// nodeResult is one control-plane node's outcome of a rule.
type nodeResult struct {
	node string
	res  preflight.Result
}

// rank orders statuses from best to worst.
var rank = map[preflight.Status]int{preflight.StatusPass: 0, preflight.StatusSkip: 1, preflight.StatusWarn: 2, preflight.StatusFail: 3}

// merge reports the worst outcome across control-plane nodes: each distinct
// message of that status with the nodes it holds on, and the remediation of
// the first.
func merge(results []nodeResult) preflight.Result {
	worst := results[0].res.Status
	for _, nr := range results {
		if rank[nr.res.Status] > rank[worst] {
			worst = nr.res.Status
		}
	}
	var msgs, others []string
	nodesOf := map[string][]string{}
	fix := ""
	for _, nr := range results {
		if nr.res.Status != worst {
			others = append(others, fmt.Sprintf("%s %s", nr.node, nr.res.Status))
			continue
		}
		if fix == "" {
			fix = nr.res.Remediation
		}
		if _, seen := nodesOf[nr.res.Message]; !seen {
			msgs = append(msgs, nr.res.Message)
		}
		nodesOf[nr.res.Message] = append(nodesOf[nr.res.Message], nr.node)
	}
	parts := make([]string, len(msgs))
	for i, m := range msgs {
		parts[i] = fmt.Sprintf("%s (on %s)", m, strings.Join(nodesOf[m], ", "))
	}
	msg := strings.Join(parts, "; ")
	if len(others) > 0 {
		msg += "; other control-plane nodes: " + strings.Join(others, ", ")
	}
	if len(results)-len(others) > 1 && fix != "" {
		fix += "; do it on every control-plane node listed, one at a time"
	}
	return preflight.Result{Status: worst, Message: msg, Remediation: fix}
}
