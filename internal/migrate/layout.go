package migrate

import (
	"fmt"
	"strings"
)

// distribution decides who built the control plane, from every
// control-plane mirror Pod (kube-controller-manager and kube-apiserver) and
// kube-system/kubeadm-config, and refuses a layout that is not plainly one
// or the other.
//
//   - every Pod kops-labelled (k8s-app=<component>) and no kubeadm-config:
//     kops;
//   - no Pod kops-labelled (kubeadm's component=<component>) and
//     kubeadm-config: kubeadm;
//   - anything else is refused, naming the Pods of each kind.
//
// A mixed layout is refused rather than resolved either way: the kops path
// edits the cluster spec and lets kops' nodeup rewrite every node it
// manages, the kubeadm path edits each node's manifests itself. Picking
// kops would leave the kubeadm nodes on the in-tree provider with nothing
// to tell; picking kubeadm would edit files nodeup overwrites at the next
// `kops update` (the node reverts to the in-tree provider after the
// migration "passed"). Only the operator knows which nodes are stray.
func (c *Cluster) distribution() (Distribution, *Refusal) {
	var kops, kubeadm []string
	for _, p := range append(append([]staticPodFlags{}, c.KCM...), c.APIServer...) {
		desc := fmt.Sprintf("%s on %s", p.Pod, p.Node)
		if p.Kops {
			kops = append(kops, desc)
		} else {
			kubeadm = append(kubeadm, desc)
		}
	}
	switch {
	case len(kops) == 0 && len(kubeadm) == 0:
		// No control-plane Pods: BuildPlan refuses that on its own terms.
		return DistributionKubeadm, nil
	case len(kops) > 0 && len(kubeadm) == 0 && !c.Kubeadm:
		return DistributionKops, nil
	case len(kops) == 0 && c.Kubeadm:
		return DistributionKubeadm, nil
	case len(kops) == 0:
		return "", &Refusal{
			Reason: "the control plane is neither kubeadm's (no kube-system/kubeadm-config) nor kops' (no k8s-app labels on its static Pods)",
			WayOut: "migrate-from-intree edits kubeadm and kops static Pods only; see docs/migrate-from-intree.md for the manual sequence",
		}
	case len(kubeadm) == 0:
		return "", &Refusal{
			Reason: fmt.Sprintf("every control-plane static Pod carries kops' labels (k8s-app=<component>: %s), but kube-system/%s exists, which only kubeadm writes: plan cannot tell whether kops or kubeadm manages these nodes",
				strings.Join(kops, ", "), kubeadmConfigName),
			WayOut: fmt.Sprintf("on a kops cluster, delete the stray kube-system/%s (keep a copy); on a kubeadm cluster, find what relabelled the static Pods; then plan again", kubeadmConfigName),
		}
	default:
		cfg := "does not exist"
		if c.Kubeadm {
			cfg = "exists"
		}
		return "", &Refusal{
			Reason: fmt.Sprintf("the control plane mixes kops and kubeadm static Pods: kops-labelled (k8s-app=<component>): %s; kubeadm-labelled (component=<component>): %s; kube-system/%s %s. "+
				"The kops path edits the cluster spec and leaves the nodes to kops' nodeup, the kubeadm path edits each node's manifests: either would leave the other kind's nodes on the in-tree provider, or have its edits undone by the tool that owns them",
				strings.Join(kops, ", "), strings.Join(kubeadm, ", "), kubeadmConfigName, cfg),
			WayOut: "make the control plane one kind (replace or rejoin the odd nodes, or fix their labels if only the labels are wrong), then plan again; `kubectl -n kube-system get pods -l 'k8s-app in (kube-controller-manager,kube-apiserver)' -o wide` lists the kops-labelled Pods",
		}
	}
}
