package clusterchecks

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// Wire names of EBS storage. They are Kubernetes' (csi-translation-lib's
// plugins/aws_ebs.go) and MUST NOT change.
const (
	// ebsCSIDriver is the EBS CSI driver: the name of its CSIDriver object,
	// of its entry in a CSINode's spec.drivers, the provisioner of its
	// StorageClasses and the spec.csi.driver of its PersistentVolumes.
	ebsCSIDriver = "ebs.csi.aws.com"
	// ebsInTreePlugin is the in-tree EBS volume plugin: the provisioner of
	// in-tree StorageClasses, and the plugin name a kubelet lists in its
	// CSINode's migrated-plugins annotation when it hands the plugin's
	// volumes to the CSI driver.
	ebsInTreePlugin = "kubernetes.io/aws-ebs"
	// migratedPluginsAnnotation is read by the attach/detach controller
	// (split on ",", exact tokens) to decide, per Node, whether an in-tree
	// volume goes through CSI.
	migratedPluginsAnnotation = corev1.MigratedPluginsAnnotationKey
)

// ebsInstallFix is the remediation when the EBS CSI driver is missing.
const ebsInstallFix = "install the AWS EBS CSI driver before switching to the external CCM: the Helm chart aws-ebs-csi-driver/aws-ebs-csi-driver " +
	"(`helm repo add aws-ebs-csi-driver https://kubernetes-sigs.github.io/aws-ebs-csi-driver && helm upgrade --install aws-ebs-csi-driver aws-ebs-csi-driver/aws-ebs-csi-driver --namespace kube-system`) " +
	"or, on EKS, the add-on aws-ebs-csi-driver; give its controller the EC2 volume permissions (AWS managed policy AmazonEBSCSIDriverPolicy), " +
	"then `kubectl get csidriver " + ebsCSIDriver + "` must answer"

// ebsUse is what in the cluster uses EBS, by name.
type ebsUse struct {
	// In-tree: PersistentVolumes with spec.awsElasticBlockStore,
	// StorageClasses with provisioner kubernetes.io/aws-ebs, and Pods not
	// finished with an inline awsElasticBlockStore volume.
	inTreePVs, inTreeClasses, inlinePods []string
	// CSI: PersistentVolumes with spec.csi.driver ebs.csi.aws.com and
	// StorageClasses with that provisioner.
	csiPVs, csiClasses []string
}

func (u ebsUse) inTree() bool {
	return len(u.inTreePVs)+len(u.inTreeClasses)+len(u.inlinePods) > 0
}

func (u ebsUse) csi() bool { return len(u.csiPVs)+len(u.csiClasses) > 0 }

// describeInTree renders the in-tree use: counts and up to 10 names each.
func (u ebsUse) describeInTree() string {
	var parts []string
	if n := len(u.inTreePVs); n > 0 {
		parts = append(parts, fmt.Sprintf("%s with awsElasticBlockStore (%s)", counted(n, "PersistentVolume", "PersistentVolumes"), listNames(u.inTreePVs)))
	}
	if n := len(u.inTreeClasses); n > 0 {
		parts = append(parts, fmt.Sprintf("%s with provisioner %s (%s)", counted(n, "StorageClass", "StorageClasses"), ebsInTreePlugin, listNames(u.inTreeClasses)))
	}
	if n := len(u.inlinePods); n > 0 {
		parts = append(parts, fmt.Sprintf("%s with an inline awsElasticBlockStore volume (%s)", counted(n, "Pod", "Pods"), listNames(u.inlinePods)))
	}
	return strings.Join(parts, ", ")
}

// describeCSI renders the CSI use: counts and up to 10 names each.
func (u ebsUse) describeCSI() string {
	var parts []string
	if n := len(u.csiPVs); n > 0 {
		parts = append(parts, fmt.Sprintf("%s of %s (%s)", counted(n, "PersistentVolume", "PersistentVolumes"), ebsCSIDriver, listNames(u.csiPVs)))
	}
	if n := len(u.csiClasses); n > 0 {
		parts = append(parts, fmt.Sprintf("%s with provisioner %s (%s)", counted(n, "StorageClass", "StorageClasses"), ebsCSIDriver, listNames(u.csiClasses)))
	}
	return strings.Join(parts, ", ")
}

// counted renders "1 StorageClass" or "3 StorageClasses".
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// ebsUseOf reads what uses EBS from the PersistentVolumes, StorageClasses
// and Pods; every list is sorted.
func (r *runner) ebsUseOf(ctx context.Context) (ebsUse, error) {
	var u ebsUse
	pvs, err := r.snap.PersistentVolumes(ctx)
	if err != nil {
		return u, err
	}
	for i := range pvs {
		pv := &pvs[i]
		switch {
		case pv.Spec.AWSElasticBlockStore != nil:
			u.inTreePVs = append(u.inTreePVs, pv.Name)
		case pv.Spec.CSI != nil && pv.Spec.CSI.Driver == ebsCSIDriver:
			u.csiPVs = append(u.csiPVs, pv.Name)
		}
	}
	classes, err := r.snap.StorageClasses(ctx)
	if err != nil {
		return u, err
	}
	for i := range classes {
		switch classes[i].Provisioner {
		case ebsInTreePlugin:
			u.inTreeClasses = append(u.inTreeClasses, classes[i].Name)
		case ebsCSIDriver:
			u.csiClasses = append(u.csiClasses, classes[i].Name)
		}
	}
	pods, err := r.snap.Pods(ctx)
	if err != nil {
		return u, err
	}
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if slices.ContainsFunc(p.Spec.Volumes, func(v corev1.Volume) bool { return v.AWSElasticBlockStore != nil }) {
			u.inlinePods = append(u.inlinePods, p.Namespace+"/"+p.Name)
		}
	}
	for _, l := range [][]string{u.inTreePVs, u.inTreeClasses, u.inlinePods, u.csiPVs, u.csiClasses} {
		sort.Strings(l)
	}
	return u, nil
}

func (r *runner) ebsCSIDriver(ctx context.Context) preflight.Result {
	u, err := r.ebsUseOf(ctx)
	if err != nil {
		return preflight.Fail(readFix(err), "%v", err)
	}
	if !u.inTree() {
		return preflight.Pass("no in-tree EBS volumes: no PersistentVolume with awsElasticBlockStore, no StorageClass with provisioner %s, no Pod with an inline awsElasticBlockStore volume", ebsInTreePlugin)
	}
	drivers, err := r.snap.CSIDrivers(ctx)
	if err != nil {
		return preflight.Fail(readFix(err), "%v", err)
	}
	if slices.ContainsFunc(drivers, func(d storagev1.CSIDriver) bool { return d.Name == ebsCSIDriver }) {
		return preflight.Pass("in-tree EBS in use (%s) and CSIDriver %s is installed to serve it", u.describeInTree(), ebsCSIDriver)
	}
	return preflight.Fail(ebsInstallFix,
		"in-tree EBS in use (%s) but there is no CSIDriver %s: in-tree EBS volumes are provisioned, attached and mounted only through CSI migration to the EBS CSI driver (the in-tree plugin was removed in Kubernetes 1.27), so without it they stop working",
		u.describeInTree(), ebsCSIDriver)
}

// csiNodeProblems says, per Node, what keeps its CSINode from serving EBS
// through the CSI driver: no CSINode, no ebs.csi.aws.com driver entry, and
// (when migrated is set) kubernetes.io/aws-ebs missing from the
// migrated-plugins annotation. Nodes without problems are left out.
func csiNodeProblems(nodes []corev1.Node, csiNodes []storagev1.CSINode, migrated bool) []string {
	byName := make(map[string]*storagev1.CSINode, len(csiNodes))
	for i := range csiNodes {
		byName[csiNodes[i].Name] = &csiNodes[i]
	}
	var out []string
	for i := range nodes {
		name := nodes[i].Name
		cn, ok := byName[name]
		if !ok {
			out = append(out, name+" (no CSINode)")
			continue
		}
		var why []string
		if !slices.ContainsFunc(cn.Spec.Drivers, func(d storagev1.CSINodeDriver) bool { return d.Name == ebsCSIDriver }) {
			why = append(why, "no "+ebsCSIDriver+" driver")
		}
		if migrated && !slices.Contains(strings.Split(cn.Annotations[migratedPluginsAnnotation], ","), ebsInTreePlugin) {
			why = append(why, ebsInTreePlugin+" not in "+migratedPluginsAnnotation)
		}
		if len(why) > 0 {
			out = append(out, fmt.Sprintf("%s (%s)", name, strings.Join(why, ", ")))
		}
	}
	sort.Strings(out)
	return out
}

func (r *runner) ebsCSIMigrated(ctx context.Context) preflight.Result {
	u, err := r.ebsUseOf(ctx)
	if err != nil {
		return preflight.Fail(readFix(err), "%v", err)
	}
	if !u.inTree() && !u.csi() {
		return preflight.Pass("no EBS volumes or StorageClasses, in-tree or CSI: nothing to migrate")
	}
	nodes, res := r.nodesOrSkip(ctx)
	if res != nil {
		return *res
	}
	csiNodes, err := r.snap.CSINodes(ctx)
	if err != nil {
		return preflight.Fail(readFix(err), "%v", err)
	}
	offenders := csiNodeProblems(nodes, csiNodes, u.inTree())
	if u.inTree() {
		if len(offenders) == 0 {
			return preflight.Pass("every Node's CSINode has driver %s and %s in %s (%s): in-tree EBS volumes go through the CSI driver",
				ebsCSIDriver, ebsInTreePlugin, migratedPluginsAnnotation, plural(len(nodes), "Node"))
		}
		return preflight.Fail("run the EBS CSI node DaemonSet (ebs-csi-node) on every Node, tolerating their taints, so the driver registers in each Node's CSINode; "+
			"a kubelet adds "+ebsInTreePlugin+" to "+migratedPluginsAnnotation+" when CSIMigrationAWS is on (the default since 1.23, locked since 1.25): "+
			"upgrade an older kubelet, or remove CSIMigrationAWS=false from its --feature-gates, then restart it",
			"in-tree EBS in use (%s) but %d of %s cannot hand %s volumes to %s: %s",
			u.describeInTree(), len(offenders), plural(len(nodes), "Node"), ebsInTreePlugin, ebsCSIDriver, listNames(offenders))
	}
	if len(offenders) == 0 {
		return preflight.Pass("no in-tree EBS volumes; driver %s is registered in every Node's CSINode (%s)", ebsCSIDriver, plural(len(nodes), "Node"))
	}
	return preflight.Warn("run the EBS CSI node DaemonSet (ebs-csi-node) on these Nodes, tolerating their taints, or keep Pods with EBS volumes off them",
		"no in-tree EBS volumes; EBS through CSI (%s), but no %s driver in the CSINode of %d of %s, so Pods with those volumes cannot start there: %s",
		u.describeCSI(), ebsCSIDriver, len(offenders), plural(len(nodes), "Node"), listNames(offenders))
}
