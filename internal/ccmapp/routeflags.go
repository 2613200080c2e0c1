package ccmapp

import (
	"errors"
	"strings"

	"k8s.io/cloud-provider/app"
	cloudcontrollerconfig "k8s.io/cloud-provider/app/config"
	"k8s.io/cloud-provider/names"
	genericcontrollermanager "k8s.io/controller-manager/app"
)

// checkRouteFlags refuses to start when the route controller is enabled
// and --configure-cloud-routes is true (its default) but --cluster-cidr is
// empty. Without the cluster CIDRs no route could be told to be the
// controller's, so the provider offers no routes (pkg/awscloud/routes.go:
// Routes() returns false), and k8s.io/cloud-provider (app/core.go,
// startRouteController) then only logs the warning "--configure-cloud-routes
// is set, but cloud provider does not support routes. Will not configure
// cloud provider routes." and starts no route controller. The CCM would run
// and route nothing: pod CIDRs stay unrouted, no Node is marked
// NetworkUnavailable (that is the route controller's job) and the one trace
// is a warning that blames the provider. A cluster that needs cloud routes
// (kubenet) would break silently, and one that does not would keep a
// misleading warning; refusing names both flags and makes the choice
// explicit.
func checkRouteFlags(c *cloudcontrollerconfig.CompletedConfig) error {
	shared := c.ComponentConfig.KubeCloudShared
	enabled := genericcontrollermanager.IsControllerEnabled(names.NodeRouteController, app.ControllersDisabledByDefault, c.ComponentConfig.Generic.Controllers)
	if !shared.ConfigureCloudRoutes || !enabled || strings.TrimSpace(shared.ClusterCIDR) != "" {
		return nil
	}
	return errNoClusterCIDR
}

// errNoClusterCIDR is checkRouteFlags' refusal; docs/routes.md quotes it.
var errNoClusterCIDR = errors.New("--configure-cloud-routes is true (its default) and the route controller is enabled, but --cluster-cidr is empty: " +
	"the route controller needs the cluster's pod CIDRs to tell its routes from others\n" +
	"fix: if pods get VPC addresses (the Amazon VPC CNI) or the CNI routes them itself (overlay), pass --configure-cloud-routes=false; " +
	"if the VPC must route pod CIDRs to Nodes (kubenet and the like), pass --cluster-cidr=<the pod CIDRs, as kube-controller-manager's --cluster-cidr> " +
	"and tag the route table (docs/routes.md)")
