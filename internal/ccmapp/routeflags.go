package ccmapp

import (
	"errors"
	"strings"

	"k8s.io/cloud-provider/app"
	cloudcontrollerconfig "k8s.io/cloud-provider/app/config"
	"k8s.io/cloud-provider/names"
	genericcontrollermanager "k8s.io/controller-manager/app"
)

// checkRouteFlags refuses to start when the route controller would run
// without cluster CIDRs. k8s.io/cloud-provider starts it whenever
// --configure-cloud-routes is true (its default) and the provider offers
// routes, and it then exits with "invalid CIDR[0]" on an empty
// --cluster-cidr; this names both flags and the choice instead.
func checkRouteFlags(c *cloudcontrollerconfig.CompletedConfig) error {
	shared := c.ComponentConfig.KubeCloudShared
	enabled := genericcontrollermanager.IsControllerEnabled(names.NodeRouteController, app.ControllersDisabledByDefault, c.ComponentConfig.Generic.Controllers)
	if !shared.ConfigureCloudRoutes || !enabled || strings.TrimSpace(shared.ClusterCIDR) != "" {
		return nil
	}
	return errors.New("--configure-cloud-routes is true (its default) and the route controller is enabled, but --cluster-cidr is empty: " +
		"the route controller needs the cluster's pod CIDRs to tell its routes from others\n" +
		"fix: if pods get VPC addresses (the Amazon VPC CNI) or the CNI routes them itself (overlay), pass --configure-cloud-routes=false; " +
		"if the VPC must route pod CIDRs to Nodes (kubenet and the like), pass --cluster-cidr=<the pod CIDRs, as kube-controller-manager's --cluster-cidr> " +
		"and tag the route table (docs/routes.md)")
}
