package clusterchecks

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/nodechecks"
)

// Categories of the cluster checks.
const (
	CategoryCluster      = "cluster"
	CategoryControlPlane = nodechecks.CategoryControlPlane
	CategoryNodes        = "nodes"
	CategoryConflicts    = "conflicts"
	CategoryStorage      = "storage"
	CategoryImages       = "images"
)

// Check IDs. They are stable: documented and used by --ignore-checks; never
// rename one. The control-plane rules shared with node mode keep node mode's
// IDs (nodechecks.IDAPIServerCloudProvider ...); the two modes never run
// together.
const (
	IDClusterReachable       = "cluster-reachable"
	IDClusterVersion         = "cluster-version"
	IDAPIServerCloudProvider = nodechecks.IDAPIServerCloudProvider
	IDAPIServerCloudConfig   = nodechecks.IDAPIServerCloudConfig
	IDAPIServerAdmission     = nodechecks.IDAPIServerAdmission
	IDKCMCloudProvider       = nodechecks.IDKCMCloudProvider
	IDKCMLeaderElect         = nodechecks.IDKCMLeaderElect
	IDKCMCloudRoutes         = nodechecks.IDKCMCloudRoutes
	IDKubeadmDrift           = "control-plane-kubeadm-drift"
	IDNodesKubeletSkew       = "nodes-kubelet-skew"
	IDNodesProviderID        = "nodes-provider-id"
	IDNodesUninitialized     = "nodes-uninitialized"
	IDNodesHostnameLabel     = "nodes-hostname-label"
	IDNodesKubeletConfig     = "nodes-kubelet-config"
	IDNodesCloudMetadata     = "nodes-cloud-metadata"
	IDConflictsCCMLease      = "conflicts-ccm-lease"
	IDConflictsMigration     = "conflicts-migration-lease"
	IDConflictsOtherCCMPods  = "conflicts-other-ccm-pods"
	IDStorageEBSCSIDriver    = "storage-ebs-csi-driver"
	IDStorageEBSCSIMigrated  = "storage-ebs-csi-migrated"
	IDImagesECRProvider      = "images-ecr-credential-provider"
)

// Input is what the cluster checks look at.
type Input struct {
	// Client reads the cluster; the checks only get and list.
	Client kubernetes.Interface
	// Mode is the moment preflight runs at.
	Mode preflight.Mode
	// Now is the clock for ages (taints, Leases); nil uses time.Now.
	Now func() time.Time
	// Nodes, when not nil, are the cluster's Nodes already listed by the
	// caller (the CLI lists them once for these checks and the AWS ones);
	// nil: the checks list them.
	Nodes []corev1.Node
}

// Checks returns the cluster checks, in report order. Every check requires
// cluster-reachable. The checks of one call share what they read: each kind
// of object is read once, by the first check that needs it.
func Checks(in Input) []preflight.Check {
	if in.Now == nil {
		in.Now = time.Now
	}
	r := &runner{in: in, snap: &snapshot{client: in.Client}}
	if in.Nodes != nil {
		r.snap.nodes.once.Do(func() { r.snap.nodes.val = in.Nodes })
	}
	const errSev, warnSev = preflight.SeverityError, preflight.SeverityWarning
	c := func(id, category, title string, sev preflight.Severity, run func(context.Context) preflight.Result) preflight.Check {
		var req []string
		if id != IDClusterReachable {
			req = []string{IDClusterReachable}
		}
		d := checkDocs[id]
		return preflight.Check{ID: id, Category: category, Title: title, Description: d.description, Fix: d.fix, Severity: sev, Requires: req, Run: run}
	}
	// errorIn is error severity in mode m, warning in the others.
	errorIn := func(m preflight.Mode) preflight.Severity {
		if in.Mode == m {
			return errSev
		}
		return warnSev
	}
	checks := []preflight.Check{
		c(IDClusterReachable, CategoryCluster, "API server answers", errSev, r.reachable),
		c(IDClusterVersion, CategoryCluster, "Server version fits the move to the CCM", warnSev, r.clusterVersion),
	}
	for _, rule := range nodechecks.ControlPlaneRules() {
		check := c(rule.ID, CategoryControlPlane, rule.Title, rule.Severity, r.controlPlaneRule(rule))
		check.Description, check.Fix = rule.Description, rule.Fix
		checks = append(checks, check)
	}
	return append(checks,
		c(IDKubeadmDrift, CategoryControlPlane, "kubeadm-config matches the running control plane", warnSev, r.kubeadmDrift),
		c(IDNodesKubeletSkew, CategoryNodes, "Kubelet versions within the skew policy", warnSev, r.kubeletSkew),
		c(IDNodesProviderID, CategoryNodes, "Nodes carry an AWS providerID", errorIn(preflight.ModePostInstall), r.providerID),
		c(IDNodesUninitialized, CategoryNodes, "No Node waits for the cloud-controller-manager", errorIn(preflight.ModePostInstall), r.uninitialized),
		c(IDNodesCloudMetadata, CategoryNodes, "Initialised Nodes carry the CCM's labels and addresses", errorIn(preflight.ModePostInstall), r.cloudMetadata),
		c(IDNodesHostnameLabel, CategoryNodes, "Node names survive the switch to an external kubelet", warnSev, r.hostnameLabel),
		c(IDNodesKubeletConfig, CategoryNodes, "Kubelets' live providerID agrees with their Nodes", warnSev, r.kubeletConfig),
		c(IDConflictsCCMLease, CategoryConflicts, "cloud-controller-manager Lease holder", errorIn(preflight.ModePreInstall), r.ccmLease),
		c(IDConflictsMigration, CategoryConflicts, "No stale leader-migration Lease", warnSev, r.migrationLease),
		c(IDConflictsOtherCCMPods, CategoryConflicts, "No other cloud-controller-manager Pods", warnSev, r.otherCCMPods),
		c(IDStorageEBSCSIDriver, CategoryStorage, "In-tree EBS volumes have the EBS CSI driver", errSev, r.ebsCSIDriver),
		c(IDStorageEBSCSIMigrated, CategoryStorage, "Every Node hands EBS volumes to the EBS CSI driver", errSev, r.ebsCSIMigrated),
		c(IDImagesECRProvider, CategoryImages, "Nodes pulling private ECR images need a credential provider", warnSev, r.ecrCredentialProvider),
	)
}

// runner holds the input and the snapshot the check functions share.
type runner struct {
	in   Input
	snap *snapshot
}

func (r *runner) reachable(ctx context.Context) preflight.Result {
	v, err := r.snap.serverVersion(ctx)
	if err != nil {
		res := preflight.Fail("check the kubeconfig, context and network (`kubectl version` must answer), then run preflight again",
			"the API server did not answer: %v", err)
		res.Unreachable = true
		return res
	}
	return preflight.Pass("API server %s (%s)", v.GitVersion, v.Platform)
}

func (r *runner) clusterVersion(ctx context.Context) preflight.Result {
	v, err := r.snap.serverVersion(ctx)
	if err != nil {
		return preflight.Fail(readFix(err), "%v", err)
	}
	return nodechecks.ControlPlaneVersion(r.in.Mode, v.GitVersion)
}

// listNames renders at most 10 names and how many more there are.
func listNames(names []string) string {
	const shown = 10
	if len(names) <= shown {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:shown], ", "), len(names)-shown)
}

// plural renders "1 Node" or "3 Nodes".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
