package nodechecks

import (
	"context"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// This file lends node mode's rules to cluster mode (package clusterchecks),
// which reads the same flags from the control plane's mirror Pods and the
// same versions from the API instead of from a node's files. The rules stay
// in one place; cluster mode never runs together with node mode, so the two
// may report a rule under the same check ID.

// ControlPlaneRule describes one control-plane rule of node mode.
type ControlPlaneRule struct {
	ID    string
	Title string
	// Description and Fix are the rule's reference text (preflight.Check).
	Description, Fix string
	Severity         preflight.Severity
	// Component is the static Pod the rule reads: "kube-apiserver" or
	// "kube-controller-manager".
	Component string
}

// ruleComponent maps each control-plane rule to the component it reads.
var ruleComponent = map[string]string{
	IDAPIServerCloudProvider: apiServer,
	IDAPIServerCloudConfig:   apiServer,
	IDAPIServerAdmission:     apiServer,
	IDKCMCloudProvider:       kcm,
	IDKCMLeaderElect:         kcm,
	IDKCMCloudRoutes:         kcm,
}

// ControlPlaneRules returns the control-plane rules, in node mode's report
// order, with node mode's titles and severities.
func ControlPlaneRules() []ControlPlaneRule {
	var out []ControlPlaneRule
	for _, c := range Checks(Input{}) {
		if comp, ok := ruleComponent[c.ID]; ok {
			out = append(out, ControlPlaneRule{ID: c.ID, Title: c.Title, Description: c.Description, Fix: c.Fix, Severity: c.Severity, Component: comp})
		}
	}
	return out
}

// RunControlPlaneRule applies the control-plane rule id to one control-plane
// node's static Pods, keyed by component (StaticPod.Path decides the
// remediation's wording: a ".manifest" suffix means kops, else kubeadm).
// The result is the rule's own: Fail even for a warning-severity rule.
func RunControlPlaneRule(ctx context.Context, id string, mode preflight.Mode, pods map[string]*nodefiles.StaticPod) preflight.Result {
	if _, ok := ruleComponent[id]; !ok {
		return preflight.Fail("report this as a bug in awsccmctl", "%s is not a control-plane rule", id)
	}
	in := Input{Node: &nodefiles.Node{Root: "/", StaticPods: pods}, Mode: mode}
	for _, c := range Checks(in) {
		if c.ID == id {
			return c.Run(ctx)
		}
	}
	return preflight.Fail("report this as a bug in awsccmctl", "rule %s not found", id)
}

// ControlPlaneVersion classifies a control-plane version ("v1.26.15") for
// mode, as the versions-control-plane check does.
func ControlPlaneVersion(mode preflight.Mode, gitVersion string) preflight.Result {
	if _, ok := parseVersion(gitVersion); !ok {
		return preflight.Fail("report the output of `kubectl version` as a bug in awsccmctl",
			"cannot parse the server version %q", gitVersion)
	}
	api := &nodefiles.StaticPod{Component: apiServer, Image: gitVersion, Version: gitVersion, Path: "/version"}
	r := runner{in: Input{Node: &nodefiles.Node{StaticPods: map[string]*nodefiles.StaticPod{apiServer: api}}, Mode: mode}}
	return r.versionsControlPlane()
}

// KubeletSkew judges a kubelet version against the kube-apiserver's, as the
// kubelet-skew check does; it returns Fail when the pair is outside the
// version skew policy or a version does not parse.
func KubeletSkew(kubeletVersion, apiServerVersion string) preflight.Result {
	if _, ok := parseVersion(apiServerVersion); !ok {
		return preflight.Fail("report the output of `kubectl version` as a bug in awsccmctl",
			"cannot parse the kube-apiserver version %q", apiServerVersion)
	}
	api := &nodefiles.StaticPod{Component: apiServer, Version: apiServerVersion}
	r := runner{in: Input{
		Node:           &nodefiles.Node{Kubelet: &nodefiles.Kubelet{}, StaticPods: map[string]*nodefiles.StaticPod{apiServer: api}},
		KubeletVersion: kubeletVersion,
	}}
	if kubeletVersion == "" {
		return preflight.Fail("check the kubelet on this node", "the kubelet reported no version")
	}
	return r.kubeletSkew()
}
