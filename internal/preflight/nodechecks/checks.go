package nodechecks

import (
	"context"
	"fmt"
	"strings"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// Categories of the node checks.
const (
	CategoryNodeFiles    = "node-files"
	CategoryControlPlane = "control-plane"
	CategoryKubelet      = "kubelet"
	CategoryVersions     = "versions"
)

// Check IDs. They are stable: documented and used by --ignore-checks; never
// rename one.
const (
	IDNodeFilesReadable      = "node-files-readable"
	IDVersionsControlPlane   = "versions-control-plane"
	IDAPIServerCloudProvider = "control-plane-apiserver-cloud-provider"
	IDAPIServerCloudConfig   = "control-plane-apiserver-cloud-config"
	IDAPIServerAdmission     = "control-plane-apiserver-admission"
	IDKCMCloudProvider       = "control-plane-kcm-cloud-provider"
	IDKCMLeaderElect         = "control-plane-kcm-leader-elect"
	IDKCMCloudRoutes         = "control-plane-kcm-cloud-routes"
	IDKubeletCloudProvider   = "kubelet-cloud-provider"
	IDKubeletNodeIdentity    = "kubelet-node-identity"
	IDKubeletSkew            = "kubelet-skew"
	IDKubeletECRProvider     = "kubelet-ecr-credential-provider"
)

// Input is what the node checks look at.
type Input struct {
	// Node is what nodefiles.Read found.
	Node *nodefiles.Node
	// Mode is the moment preflight runs at.
	Mode preflight.Mode
	// KubeletVersion is the kubelet's version when the caller knows it
	// (from `kubelet --version`); "" when unknown.
	KubeletVersion string
}

// Checks returns the node checks, in report order. Every check but
// node-files-readable requires it: conclusions drawn from a file that could
// not be parsed would be wrong.
func Checks(in Input) []preflight.Check {
	r := runner{in: in}
	needFiles := []string{IDNodeFilesReadable}
	c := func(id, category, title string, sev preflight.Severity, run func() preflight.Result) preflight.Check {
		var req []string
		if id != IDNodeFilesReadable {
			req = needFiles
		}
		d := checkDocs[id]
		return preflight.Check{ID: id, Category: category, Title: title, Description: d.description, Fix: d.fix, Severity: sev, Requires: req,
			Run: func(context.Context) preflight.Result { return run() }}
	}
	const errSev, warnSev = preflight.SeverityError, preflight.SeverityWarning
	return []preflight.Check{
		c(IDNodeFilesReadable, CategoryNodeFiles, "Node files parse", errSev, r.filesReadable),
		c(IDVersionsControlPlane, CategoryVersions, "Control-plane version", warnSev, r.versionsControlPlane),
		c(IDAPIServerCloudProvider, CategoryControlPlane, "kube-apiserver has no in-tree --cloud-provider", errSev, r.apiServerCloudProvider),
		c(IDAPIServerCloudConfig, CategoryControlPlane, "kube-apiserver has no --cloud-config", errSev, r.apiServerCloudConfig),
		c(IDAPIServerAdmission, CategoryControlPlane, "kube-apiserver does not enable PersistentVolumeLabel", errSev, r.apiServerAdmission),
		c(IDKCMCloudProvider, CategoryControlPlane, "kube-controller-manager --cloud-provider fits the mode", errSev, r.kcmCloudProvider),
		c(IDKCMLeaderElect, CategoryControlPlane, "kube-controller-manager elects a leader", errSev, r.kcmLeaderElect),
		c(IDKCMCloudRoutes, CategoryControlPlane, "Cloud routes move to the CCM", warnSev, r.kcmCloudRoutes),
		c(IDKubeletCloudProvider, CategoryKubelet, "kubelet runs with --cloud-provider=external", errSev, r.kubeletCloudProvider),
		c(IDKubeletNodeIdentity, CategoryKubelet, "kubelet gives the CCM a way to find the instance", warnSev, r.kubeletNodeIdentity),
		c(IDKubeletSkew, CategoryKubelet, "kubelet version within the supported skew", warnSev, r.kubeletSkew),
		c(IDKubeletECRProvider, CategoryKubelet, "kubelet has a credential provider for private ECR images", warnSev, r.kubeletECRCredentialProvider),
	}
}

// runner holds the input the check functions share.
type runner struct{ in Input }

func (r runner) filesReadable() preflight.Result {
	n := r.in.Node
	if len(n.Problems) > 0 {
		return preflight.Fail("fix or remove each file listed: the kubelet and systemd read the same files and would fail or ignore them too",
			"%d file(s) under %s could not be used: %s", len(n.Problems), n.Root, strings.Join(n.Problems, "; "))
	}
	if n.Kubelet == nil && len(n.StaticPods) == 0 {
		// Nothing to check is not a pass: this is not a node (or --root is
		// wrong), and "all checks passed" would say otherwise.
		return preflight.Fail(fmt.Sprintf("run preflight --node on a Kubernetes node (it looks for static Pod manifests in %s and the kubelet's "+
			"systemd unit, environment and configuration files), or pass --root the node's root file system", nodefiles.ManifestsDir),
			"no kubelet or control-plane files found under %s", n.Root)
	}
	var pods []string
	for _, comp := range nodefiles.Components {
		if sp, ok := n.StaticPods[comp]; ok {
			pods = append(pods, sp.Path)
		}
	}
	kubelet := "no kubelet files"
	if n.Kubelet != nil {
		kubelet = "kubelet from " + strings.Join(n.Kubelet.Sources, ", ")
	}
	return preflight.Pass("read %d file(s): static Pods %s; %s", len(n.Files), orNone(pods), kubelet)
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// flagValue renders a flag for messages: "--name=value" or "no --name".
func flagValue(f nodefiles.Flags, name string) string {
	if v, ok := f.Get(name); ok {
		return fmt.Sprintf("--%s=%s", name, v)
	}
	return "no --" + name
}
