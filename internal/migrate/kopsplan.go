package migrate

import (
	"fmt"
	"strconv"
	"strings"
)

// Cluster-spec fields the kops path sets, as `kops edit cluster --set`
// takes them: kops resolves the path against its internal API, whose names
// are v1alpha2's except controlPlaneKubelet (masterKubelet in a v1alpha2
// YAML file, which --set does not accept).
const (
	kopsKCMCloudProvider          = "spec.kubeControllerManager.cloudProvider"
	kopsKCMLeaderMigration        = "spec.kubeControllerManager.enableLeaderMigration"
	kopsAPIServerCloudProvider    = "spec.kubeAPIServer.cloudProvider"
	kopsKubeletCloudProvider      = "spec.kubelet.cloudProvider"
	kopsCPKubeletCloudProvider    = "spec.controlPlaneKubelet.cloudProvider"
	kopsCCMImage                  = "spec.cloudControllerManager.image"
	kopsCCMLeaderMigration        = "spec.cloudControllerManager.enableLeaderMigration"
	kopsCCMConfigureCloudRoutes   = "spec.cloudControllerManager.configureCloudRoutes"
	kopsCCMClusterCIDR            = "spec.cloudControllerManager.clusterCIDR"
	kopsInstanceGroupLabel        = "kops.k8s.io/instancegroup"
	kopsControlPlaneRolesSelector = "--instance-group-roles=control-plane"
)

// kopsInstructions writes the cluster-spec edits and kops commands that
// replace the node phases on a kops cluster (nodeup rewrites the node
// files from the spec, so editing them would be undone). Each edit is
// applied on top of the earlier ones with `kops edit cluster --set`, which
// runs kops' own validation; test/kops runs the same edits through kops
// v1.31.0's code and checks the populated spec.
//
// Every component is set explicitly, because an in-tree kops cluster says
// cloudProvider: aws in its spec and kops keeps a user's value over its
// defaults: kops validates kubelet, kube-apiserver and
// kube-controller-manager `aws` next to the CCM add-on without complaint.
func kopsInstructions(p *MigrationPlan) (*KopsInstructions, error) {
	v, err := p.Values()
	if err != nil {
		return nil, err
	}
	v.Default()
	name := p.Spec.Cluster.ClusterName
	edit := func(step string, sets []string, rollout ...string) KopsEdit {
		cmd := "kops edit cluster --name " + name
		for _, s := range sets {
			cmd += " --set=" + s
		}
		return KopsEdit{Step: step, Set: sets, Commands: append([]string{cmd}, rollout...)}
	}
	update := "kops update cluster --name " + name + " --yes"
	rollControlPlane := "kops rolling-update cluster --name " + name + " " + kopsControlPlaneRolesSelector + " --yes"
	ccm := []string{kopsCCMImage + "=" + v.Image, kopsCCMConfigureCloudRoutes + "=" + strconv.FormatBool(v.ConfigureCloudRoutes)}
	if v.ClusterCIDR != "" {
		ccm = append(ccm, kopsCCMClusterCIDR+"="+v.ClusterCIDR)
	}
	// The control plane's kubelets switch with the cut-over: its rolling
	// update replaces those nodes anyway, and the CCM runs every cloud loop
	// before the first replaced node registers.
	external := []string{
		kopsKCMCloudProvider + "=external", kopsAPIServerCloudProvider + "=external",
		kopsKubeletCloudProvider + "=external", kopsCPKubeletCloudProvider + "=external",
	}

	var edits []KopsEdit
	if p.Spec.Mode == ModeLeaderMigration {
		edits = append(edits,
			edit(StepKCMLeaderMigration, []string{kopsKCMLeaderMigration + "=true"}, update, rollControlPlane),
			// kops applies its CCM add-on at the update; no instance changes.
			edit(StepInstallCCM, append(ccm, kopsCCMLeaderMigration+"=true"), update),
			edit(StepCutOver, append([]string{kopsKCMLeaderMigration + "=false"}, external...), update, rollControlPlane),
		)
	} else {
		edits = append(edits,
			edit(StepKCMExternal, external, update, rollControlPlane),
			edit(StepInstallCCM, ccm, update),
		)
	}
	// Workers take the kubelet's new flags when kops replaces them, group by
	// group as the plan's node groups go.
	for _, g := range p.Spec.NodeGroups[1:] {
		sel := "--instance-group " + g.Name
		if g.Name == defaultWorkerGroup {
			sel = "--instance-group-roles=node"
		}
		edits = append(edits, KopsEdit{Step: StepKubeletExternal + "/" + g.Name,
			Commands: []string{"kops rolling-update cluster --name " + name + " " + sel + " --yes"}})
	}
	if p.Spec.Mode == ModeLeaderMigration {
		edits = append(edits, edit(StepFinalize, []string{kopsCCMLeaderMigration + "=false"}, update))
	}

	k := &KopsInstructions{ClusterName: name, Edits: edits}
	for _, e := range edits {
		if len(e.Set) > 0 {
			k.ClusterSpecEdits = append(k.ClusterSpecEdits, e.Step+": "+strings.Join(e.Set, "; "))
		}
		k.Commands = append(k.Commands, e.Commands...)
	}
	return k, nil
}

// validateKops checks the kops instructions name the plan's steps, in
// order, and carry no value a shell would split.
func (p *MigrationPlan) validateKops() []error {
	k := p.Spec.Kops
	if k == nil {
		return nil
	}
	var errs []error
	next := 0
	for i, e := range k.Edits {
		at := -1
		for j := next; j < len(p.Spec.Steps); j++ {
			if p.Spec.Steps[j].Name == e.Step {
				at = j
				break
			}
		}
		if at < 0 {
			errs = append(errs, fmt.Errorf("spec.kops.edits[%d]: step %q is not a step of the plan after the previous edit's", i, e.Step))
			continue
		}
		next = at + 1
		for _, s := range e.Set {
			if path, _, ok := strings.Cut(s, "="); !ok || !strings.HasPrefix(path, "spec.") || strings.ContainsAny(s, " \t\n'\"") {
				errs = append(errs, fmt.Errorf("spec.kops.edits[%d].set %q: want spec.<path>=<value> without spaces or quotes", i, s))
			}
		}
	}
	return errs
}
