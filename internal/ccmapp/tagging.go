package ccmapp

import (
	"context"
	"fmt"
	"maps"

	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/app"
	cloudcontrollerconfig "k8s.io/cloud-provider/app/config"
	"k8s.io/cloud-provider/names"
	genericcontrollermanager "k8s.io/controller-manager/app"
	"k8s.io/controller-manager/controller"

	"github.com/awsccmctl/awsccmctl/internal/tagging"
	"github.com/awsccmctl/awsccmctl/pkg/awscloud"
)

// controllerConstructors are k8s.io/cloud-provider's controllers plus the
// tagging controller, which, as upstream's, is off unless --controllers
// names it (--controllers=*,tagging).
func controllerConstructors(o *tagging.Options, reg tagging.Registerer) map[string]app.ControllerInitFuncConstructor {
	// The library keeps the disabled-by-default set in a package variable
	// its command reads; inserting is idempotent, so building the command
	// twice (tests) is harmless. The constructors map is the library's
	// too, so it is copied, not changed.
	app.ControllersDisabledByDefault.Insert(tagging.ControllerName)
	out := maps.Clone(app.DefaultInitFuncConstructors)
	out[names.CloudNodeLifecycleController] = lifecycleControllerConstructor()
	out[tagging.ControllerName] = app.ControllerInitFuncConstructor{
		InitContext: app.ControllerInitContext{ClientName: tagging.ClientName},
		Constructor: func(initCtx app.ControllerInitContext, cc *cloudcontrollerconfig.CompletedConfig, cloud cloudprovider.Interface) app.InitFunc {
			return func(ctx context.Context, _ genericcontrollermanager.ControllerContext) (controller.Interface, bool, error) {
				return nil, true, startTagging(ctx, o, reg, initCtx, cc, cloud)
			}
		},
	}
	return out
}

// controllerAliases are the library's aliases and the tagging controller's
// name.
func controllerAliases() map[string]string {
	a := names.CCMControllerAliases()
	a[tagging.ControllerName] = tagging.ControllerName
	return a
}

// taggingEnabled reports whether --controllers turns the tagging
// controller on.
func taggingEnabled(controllers []string) bool {
	return genericcontrollermanager.IsControllerEnabled(tagging.ControllerName, app.ControllersDisabledByDefault, controllers)
}

func startTagging(ctx context.Context, o *tagging.Options, reg tagging.Registerer, initCtx app.ControllerInitContext, cc *cloudcontrollerconfig.CompletedConfig, cloud cloudprovider.Interface) error {
	aws, ok := cloud.(*awscloud.Cloud)
	if !ok {
		return fmt.Errorf("the tagging controller needs the aws provider, got %T", cloud)
	}
	client, err := cc.ClientBuilder.Client(initCtx.ClientName)
	if err != nil {
		return fmt.Errorf("tagging controller: Kubernetes client: %w", err)
	}
	deps := aws.Tagging()
	c, err := tagging.New(ctx, tagging.Config{
		Tags: o.Tags, RateLimit: o.RateLimit, BurstLimit: o.BurstLimit,
		Nodes:  cc.SharedInformers.Core().V1().Nodes(),
		Client: client, EC2: deps.EC2, Instances: deps.Instances, ClusterID: deps.ClusterID,
		Metrics: tagging.NewMetrics(reg),
	})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}

// taggingTags are the tags the instance view must keep: the tagging
// controller's when it runs, else none.
func taggingTags(o *tagging.Options, controllers []string) map[string]string {
	if !taggingEnabled(controllers) {
		return nil
	}
	return o.Tags
}
