package nodechecks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

const (
	apiServer = "kube-apiserver"
	kcm       = "kube-controller-manager"
	pvlPlugin = "PersistentVolumeLabel"
)

// where names the places that hold a component's flags: the static Pod
// manifest and the config that regenerates it (kubeadm-config for kubeadm,
// the cluster spec for kops, which writes *.manifest files).
type where struct {
	pod          *nodefiles.StaticPod
	kubeadmField string // e.g. "apiServer.extraArgs"
	kopsField    string // e.g. "spec.kubeAPIServer"
}

func (w where) kops() bool { return strings.HasSuffix(w.pod.Path, ".manifest") }

// remove says how to drop a flag for good.
func (w where) remove(flag, kopsKey string) string {
	if w.kops() {
		return fmt.Sprintf("kops writes %s from the cluster spec: remove %s.%s with `kops edit cluster`, then `kops update cluster --yes` and `kops rolling-update cluster --yes`",
			w.pod.Path, w.kopsField, kopsKey)
	}
	return fmt.Sprintf("remove %s from %s AND from %s in the ClusterConfiguration of ConfigMap kube-system/kubeadm-config, so `kubeadm upgrade` does not restore it (the kubelet restarts the static Pod when the file changes)",
		flag, w.pod.Path, w.kubeadmField)
}

// set says how to set a flag for good.
func (w where) set(flag, value, kopsKey, kopsValue string) string {
	if w.kops() {
		return fmt.Sprintf("kops writes %s from the cluster spec: set %s.%s: %s with `kops edit cluster`, then `kops update cluster --yes` and `kops rolling-update cluster --yes`",
			w.pod.Path, w.kopsField, kopsKey, kopsValue)
	}
	return fmt.Sprintf("set %s=%s in %s AND in %s of the ClusterConfiguration in ConfigMap kube-system/kubeadm-config, so `kubeadm upgrade` keeps it",
		flag, value, w.pod.Path, w.kubeadmField)
}

// component is a control-plane static Pod with its version.
type component struct {
	where
	v     version
	known bool
}

// component returns the named static Pod; the KCM falls back on the
// apiserver's version when its own image has no version tag.
func (r runner) component(name string) (component, bool) {
	sp := r.in.Node.StaticPods[name]
	if sp == nil {
		return component{}, false
	}
	c := component{where: where{pod: sp}}
	c.v, c.known = podVersion(sp)
	switch name {
	case apiServer:
		c.kubeadmField, c.kopsField = "apiServer.extraArgs", "spec.kubeAPIServer"
	case kcm:
		c.kubeadmField, c.kopsField = "controllerManager.extraArgs", "spec.kubeControllerManager"
		if !c.known {
			c.v, c.known = podVersion(r.in.Node.StaticPods[apiServer])
		}
	}
	return c, true
}

func skipNoPod(name string) preflight.Result {
	if name == apiServer {
		return preflight.Skip("not a control-plane node: no kube-apiserver static Pod in %s", nodefiles.ManifestsDir)
	}
	return preflight.Skip("no %s static Pod in %s", name, nodefiles.ManifestsDir)
}

// inTreeExpected reports whether an in-tree setting is expected here: before
// a migration, on a version that still has the in-tree provider.
func (r runner) inTreeExpected(v version, known bool) bool {
	return r.in.Mode == preflight.ModePreMigrate && inTreePossible(v, known)
}

func (r runner) apiServerCloudProvider() preflight.Result {
	w, ok := r.component(apiServer)
	if !ok {
		return skipNoPod(apiServer)
	}
	v, known := w.v, w.known
	value, set := w.pod.Flags.Get("cloud-provider")
	fix := w.remove("--cloud-provider", "cloudProvider")
	switch {
	case !set || value == "":
		return preflight.Pass("kube-apiserver has no --cloud-provider")
	case known && v.atLeast(minorAPIServerFlagsGone):
		return preflight.Fail(fix, "kube-apiserver %s has --cloud-provider=%s: the flag was removed in 1.33 and the apiserver exits with \"unknown flag\"", v.raw, value)
	case value == "external":
		return preflight.Pass("kube-apiserver has --cloud-provider=external (allowed before 1.33)")
	case value == "aws" && known && v.atLeast(minorInTreeRemoved):
		return preflight.Fail(fix, "kube-apiserver %s has --cloud-provider=aws, but the in-tree AWS provider was removed in 1.27: the apiserver cannot start", v.raw)
	case value == "aws" && r.inTreeExpected(v, known):
		return preflight.Pass("kube-apiserver has --cloud-provider=aws: in-tree provider active; migrate-from-intree will remove it")
	case value == "aws":
		return preflight.Fail(fix, "kube-apiserver has --cloud-provider=aws: the in-tree provider is still active")
	}
	return preflight.Fail(fix, "kube-apiserver has --cloud-provider=%s, which is not an AWS setting", value)
}

func (r runner) apiServerCloudConfig() preflight.Result {
	w, ok := r.component(apiServer)
	if !ok {
		return skipNoPod(apiServer)
	}
	v, known := w.v, w.known
	value, set := w.pod.Flags.Get("cloud-config")
	fix := w.remove("--cloud-config", "cloudConfig")
	switch {
	case !set:
		return preflight.Pass("kube-apiserver has no --cloud-config")
	case known && v.atLeast(minorAPIServerFlagsGone):
		return preflight.Fail(fix, "kube-apiserver %s has --cloud-config=%s: the flag was removed in 1.33 and the apiserver exits with \"unknown flag\"", v.raw, value)
	case r.inTreeExpected(v, known):
		return preflight.Pass("kube-apiserver has --cloud-config=%s: in-tree provider active; migrate-from-intree will remove it", value)
	}
	return preflight.Fail(fix, "kube-apiserver has --cloud-config=%s: the cloud config belongs to the CCM", value)
}

func (r runner) apiServerAdmission() preflight.Result {
	w, ok := r.component(apiServer)
	if !ok {
		return skipNoPod(apiServer)
	}
	v, known := w.v, w.known
	var plugins []string
	for _, list := range w.pod.Flags.Values("enable-admission-plugins") {
		for p := range strings.SplitSeq(list, ",") {
			plugins = append(plugins, strings.TrimSpace(p))
		}
	}
	if !slices.Contains(plugins, pvlPlugin) {
		return preflight.Pass("%s not enabled (--enable-admission-plugins=%s)", pvlPlugin, strings.Join(plugins, ","))
	}
	var fix string
	if w.kops() {
		fix = fmt.Sprintf("remove %s from spec.kubeAPIServer.enableAdmissionPlugins with `kops edit cluster`, then `kops update cluster --yes` and `kops rolling-update cluster --yes`", pvlPlugin)
	} else {
		fix = fmt.Sprintf("remove %s from --enable-admission-plugins in %s AND from apiServer.extraArgs in the ClusterConfiguration of ConfigMap kube-system/kubeadm-config, so `kubeadm upgrade` does not restore it", pvlPlugin, w.pod.Path)
	}
	switch {
	case known && v.atLeast(minorPVLRemoved):
		return preflight.Fail(fix, "kube-apiserver %s enables %s, which was removed in 1.31: the apiserver will not start after its next restart", v.raw, pvlPlugin)
	case r.inTreeExpected(v, known):
		return preflight.Pass("kube-apiserver enables %s: in-tree provider active; migrate-from-intree will remove it", pvlPlugin)
	}
	return preflight.Fail(fix, "kube-apiserver enables %s, which needs the in-tree cloud provider (cloud-pv-admission-labeler replaces it)", pvlPlugin)
}

func (r runner) kcmCloudProvider() preflight.Result {
	w, ok := r.component(kcm)
	if !ok {
		return skipNoPod(kcm)
	}
	v, known := w.v, w.known
	value, _ := w.pod.Flags.Get("cloud-provider")
	toExternal := w.set("--cloud-provider", "external", "cloudProvider", "external")
	if r.in.Mode == preflight.ModePreMigrate {
		switch {
		case value == "aws" && inTreePossible(v, known):
			return preflight.Pass("kube-controller-manager has --cloud-provider=aws: in-tree provider active; migrate-from-intree will hand its cloud controllers to the CCM")
		case value == "aws":
			return preflight.Fail(toExternal, "kube-controller-manager %s has --cloud-provider=aws, but the in-tree AWS provider was removed in 1.27: it cannot start", v.raw)
		case value == "" || value == "external":
			return preflight.Warn("nothing to migrate: run `awsccmctl preflight --mode=post-install` (or pre-install) instead",
				"kube-controller-manager has %s: no in-tree provider runs here; already migrated?", flagValue(w.pod.Flags, "cloud-provider"))
		}
		return preflight.Fail(toExternal, "kube-controller-manager has --cloud-provider=%s, which is not an AWS setting", value)
	}
	switch value {
	case "", "external":
		return preflight.Pass("kube-controller-manager has %s: no in-tree cloud controllers", flagValue(w.pod.Flags, "cloud-provider"))
	case "aws":
		return preflight.Fail(toExternal+"; on a live in-tree cluster use `awsccmctl migrate-from-intree`, which moves the controllers without a gap",
			"kube-controller-manager has --cloud-provider=aws: its in-tree cloud controllers would fight the CCM over Nodes, routes and load balancers")
	}
	return preflight.Fail(toExternal, "kube-controller-manager has --cloud-provider=%s, which is not an AWS setting", value)
}

func (r runner) kcmLeaderElect() preflight.Result {
	w, ok := r.component(kcm)
	if !ok {
		return skipNoPod(kcm)
	}
	on, err := w.pod.Flags.Bool("leader-elect", true)
	fix := w.set("--leader-elect", "true", "leaderElection.leaderElect", "true")
	if err != nil {
		return preflight.Fail(fix, "kube-controller-manager %v", err)
	}
	if !on {
		return preflight.Fail(fix, "kube-controller-manager has --leader-elect=false: leader migration and a safe hand-over to the CCM need leader election")
	}
	if !w.pod.Flags.Has("leader-elect") {
		return preflight.Pass("kube-controller-manager elects a leader (no --leader-elect: the default is true)")
	}
	return preflight.Pass("kube-controller-manager elects a leader (--leader-elect=true)")
}

func (r runner) kcmCloudRoutes() preflight.Result {
	w, ok := r.component(kcm)
	if !ok {
		return skipNoPod(kcm)
	}
	f := w.pod.Flags
	if p, _ := f.Get("cloud-provider"); p != "" && p != "external" && p != "aws" {
		return preflight.Skip("kube-controller-manager has --cloud-provider=%s, not an AWS setting", p)
	}
	alloc, err1 := f.Bool("allocate-node-cidrs", false)
	routes, err2 := f.Bool("configure-cloud-routes", true)
	if err := cmpErr(err1, err2); err != nil {
		return preflight.Fail("give the flag true or false", "kube-controller-manager %v", err)
	}
	if !alloc || !routes {
		return preflight.Pass("no cloud routes to move (--allocate-node-cidrs=%t, --configure-cloud-routes=%t)", alloc, routes)
	}
	cidr, _ := f.Get("cluster-cidr")
	return preflight.Fail(fmt.Sprintf("run the CCM with --configure-cloud-routes=true --cluster-cidr=%s (VPC route tables tagged for the cluster); if the CNI does not need VPC routes, set --configure-cloud-routes=false instead", orUnset(cidr)),
		"kube-controller-manager allocates node CIDRs with cloud routes on (--allocate-node-cidrs=true, %s, --cluster-cidr=%s): the route controller moves to the CCM", flagValue(f, "configure-cloud-routes"), orUnset(cidr))
}

// KCMCloudRoutes tells from a kube-controller-manager static Pod whether
// cloud routes are on (--allocate-node-cidrs=true with
// --configure-cloud-routes not false); known is false without a usable
// manifest.
func KCMCloudRoutes(node *nodefiles.Node) (on, known bool) {
	if node == nil || node.StaticPods[kcm] == nil {
		return false, false
	}
	f := node.StaticPods[kcm].Flags
	alloc, err1 := f.Bool("allocate-node-cidrs", false)
	routes, err2 := f.Bool("configure-cloud-routes", true)
	if err1 != nil || err2 != nil {
		return false, false
	}
	return alloc && routes, true
}

func orUnset(s string) string {
	if s == "" {
		return "<unset>"
	}
	return s
}

func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
