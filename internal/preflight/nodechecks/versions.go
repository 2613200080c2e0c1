package nodechecks

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// Kubernetes minors that change what the CCM move involves
// (installer-anchors §0.1).
const (
	minorInTreeRemoved      = 27 // in-tree AWS provider and EBS plugin deleted
	minorPVLRemoved         = 31 // PersistentVolumeLabel admission plugin deleted
	minorAPIServerFlagsGone = 33 // kube-apiserver --cloud-provider/--cloud-config deleted
	maxKubeletMinorsBehind  = 3  // version skew policy since 1.28
)

// version is a Kubernetes major.minor.
type version struct {
	major, minor int
	raw          string
}

var versionPattern = regexp.MustCompile(`^v?([0-9]+)\.([0-9]+)`)

// parseVersion reads "v1.26.15", "1.26" or `kubelet --version` output
// ("Kubernetes v1.26.15").
func parseVersion(s string) (version, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "Kubernetes ")
	m := versionPattern.FindStringSubmatch(s)
	if m == nil {
		return version{}, false
	}
	major, err1 := strconv.Atoi(m[1])
	minor, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil {
		return version{}, false
	}
	return version{major: major, minor: minor, raw: s}, true
}

// atLeast reports whether v is 1.minor or later.
func (v version) atLeast(minor int) bool { return v.major > 1 || v.major == 1 && v.minor >= minor }

func (v version) minors() int { return v.major*1000 + v.minor }

// podVersion returns the version of a static Pod's image.
func podVersion(sp *nodefiles.StaticPod) (version, bool) {
	if sp == nil {
		return version{}, false
	}
	return parseVersion(sp.Version)
}

// inTreePossible reports whether an in-tree AWS provider can still run: the
// version is unknown or before 1.27.
func inTreePossible(v version, known bool) bool { return !known || !v.atLeast(minorInTreeRemoved) }

// regime describes what the control-plane version means for the CCM.
func regime(v version) string {
	if !v.atLeast(minorInTreeRemoved) {
		return "in-tree AWS provider still present (migration with migrate-from-intree possible)"
	}
	parts := []string{"no in-tree AWS provider (removed in 1.27)"}
	if v.atLeast(minorPVLRemoved) {
		parts = append(parts, "no PersistentVolumeLabel admission plugin (removed in 1.31)")
	}
	if v.atLeast(minorAPIServerFlagsGone) {
		parts = append(parts, "no kube-apiserver --cloud-provider/--cloud-config flags (removed in 1.33)")
	}
	return strings.Join(parts, "; ")
}

func (r runner) versionsControlPlane() preflight.Result {
	api := r.in.Node.StaticPods["kube-apiserver"]
	if api == nil {
		return preflight.Skip("not a control-plane node: no kube-apiserver static Pod in %s", nodefiles.ManifestsDir)
	}
	v, ok := podVersion(api)
	if !ok {
		return preflight.Fail("run preflight in cluster mode, which reads the server version",
			"cannot tell the control-plane version: image %q in %s has no version tag", api.Image, api.Path)
	}
	if r.in.Mode == preflight.ModePreMigrate && v.atLeast(minorInTreeRemoved) {
		return preflight.Fail("use `awsccmctl install` to adopt or repair the cluster and `awsccmctl preflight --mode=post-install`; migrate-from-intree applies to control planes up to 1.26",
			"control plane %s: %s; there is no in-tree provider to migrate from", v.raw, regime(v))
	}
	return preflight.Pass("control plane %s: %s", v.raw, regime(v))
}

func (r runner) kubeletSkew() preflight.Result {
	if r.in.Node.Kubelet == nil {
		return preflight.Skip("no kubelet configuration found on this node")
	}
	if r.in.KubeletVersion == "" {
		return preflight.Skip("kubelet version unknown in node mode (the kubelet's files do not record it); cluster mode compares the Nodes' reported versions")
	}
	kv, ok := parseVersion(r.in.KubeletVersion)
	if !ok {
		return preflight.Fail("pass the output of `kubelet --version`", "cannot parse kubelet version %q", r.in.KubeletVersion)
	}
	av, ok := podVersion(r.in.Node.StaticPods["kube-apiserver"])
	if !ok {
		return preflight.Skip("kube-apiserver version unknown on this node (no static Pod with a version tag); cluster mode compares against the server version")
	}
	switch {
	case kv.minors() > av.minors():
		return preflight.Fail("upgrade the control plane first, or downgrade this kubelet to "+av.raw+" or older",
			"kubelet %s is newer than kube-apiserver %s: the version skew policy does not allow it", kv.raw, av.raw)
	case av.major == kv.major && av.minor-kv.minor > maxKubeletMinorsBehind || av.major != kv.major:
		return preflight.Fail("upgrade this kubelet to within 3 minor versions of the control plane before moving to the CCM",
			"kubelet %s is more than %d minor versions older than kube-apiserver %s", kv.raw, maxKubeletMinorsBehind, av.raw)
	}
	return preflight.Pass("kubelet %s and kube-apiserver %s are within the skew policy", kv.raw, av.raw)
}
