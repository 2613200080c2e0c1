package migrate

import (
	"fmt"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
)

// kcmCloudRoutes is what kube-controller-manager's flags say about cloud
// routes: whether its route controller runs, and the pod CIDRs it routes.
type kcmCloudRoutes struct {
	on          bool
	clusterCIDR string
}

// cloudRoutes reads whether kube-controller-manager runs the route
// controller: with --allocate-node-cidrs=true and --configure-cloud-routes
// not false (its default is true); it then routes --cluster-cidr.
func (c *Cluster) cloudRoutes() (kcmCloudRoutes, []Refusal) {
	if len(c.KCM) == 0 {
		return kcmCloudRoutes{}, nil
	}
	var refusals []Refusal
	get := func(name string, def bool) (string, bool) {
		v, set, err := c.kcmFlag(name)
		if err != nil {
			refusals = append(refusals, Refusal{err.Error(), "make every control-plane node's kube-controller-manager flags the same, then plan again"})
		}
		b := def
		if set {
			// As the flag package reads booleans; a value it refuses
			// would not have started kube-controller-manager.
			b, _ = nodefiles.ParseBool(v)
		}
		return v, b
	}
	_, allocate := get("allocate-node-cidrs", false)
	_, routes := get("configure-cloud-routes", true)
	cidr, _ := get("cluster-cidr", false)
	if !allocate || !routes {
		return kcmCloudRoutes{}, refusals
	}
	if cidr == "" {
		refusals = append(refusals, Refusal{
			"kube-controller-manager runs cloud routes (--allocate-node-cidrs with --configure-cloud-routes) without --cluster-cidr: there are no pod CIDRs to hand to the CCM's route controller",
			"give kube-controller-manager its --cluster-cidr (the pod CIDRs the Nodes' spec.podCIDR come from), then plan again"})
	}
	return kcmCloudRoutes{on: true, clusterCIDR: cidr}, refusals
}

// carryCloudRoutes pins the CCM's cloud routes to what kube-controller-
// manager does: with cloud routes on, the CCM's route controller takes the
// routes over under leader migration (node-route-controller), so it must run
// (--configure-cloud-routes=true) over the same pod CIDRs (--cluster-cidr),
// or it would not recognise the routes as its own and new Nodes' pods would
// not be routed. With them off, the CCM runs none (its binary's default is
// on).
func carryCloudRoutes(inst *install.Configuration, kcm kcmCloudRoutes) []Refusal {
	if !kcm.on {
		if inst.ConfigureCloudRoutes == nil {
			f := false
			inst.ConfigureCloudRoutes = &f
		}
		return nil
	}
	var refusals []Refusal
	if inst.ConfigureCloudRoutes != nil && !*inst.ConfigureCloudRoutes {
		refusals = append(refusals, Refusal{
			"--configure-cloud-routes=false, but kube-controller-manager runs cloud routes: after the move nothing would route new Nodes' pod CIDRs, and pod traffic to them would stop",
			"leave --configure-cloud-routes unset (the plan carries true and kube-controller-manager's --cluster-cidr); or move the pod network off VPC routes (the AWS VPC CNI or an overlay) and set kube-controller-manager's --configure-cloud-routes=false first"})
	}
	if inst.ClusterCIDR != "" && kcm.clusterCIDR != "" && inst.ClusterCIDR != kcm.clusterCIDR {
		refusals = append(refusals, Refusal{
			fmt.Sprintf("--cluster-cidr %s, but kube-controller-manager routes --cluster-cidr=%s: the CCM's route controller would not take over the routes it made", inst.ClusterCIDR, kcm.clusterCIDR),
			fmt.Sprintf("leave --cluster-cidr unset, or set it to %s", kcm.clusterCIDR)})
	}
	t := true
	inst.ConfigureCloudRoutes, inst.ClusterCIDR = &t, kcm.clusterCIDR
	return refusals
}
