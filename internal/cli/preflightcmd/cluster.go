package preflightcmd

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/awschecks"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
)

// controlPlaneLabel marks control-plane Nodes (kubeadm and kops).
const controlPlaneLabel = "node-role.kubernetes.io/control-plane"

// listNodes lists every Node, 500 a page, once for the cluster checks and
// the AWS input. The result is never nil, so the checks know it was listed.
func listNodes(ctx context.Context, client kubernetes.Interface) ([]v1.Node, error) {
	nodes := []v1.Node{}
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return client.CoreV1().Nodes().List(ctx, opts)
	})
	p.PageSize = 500
	err := p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		nodes = append(nodes, *obj.(*v1.Node))
		return nil
	})
	if err != nil {
		return nil, &exitcode.Error{Code: exitcode.Unreachable, Err: fmt.Errorf("list Nodes: %w", err)}
	}
	return nodes, nil
}

// awsClusterInput builds the AWS checks' input for cluster mode: instance
// IDs from the Nodes' providerIDs, the region from --region, the cloud
// config, or the Nodes' topology.kubernetes.io/region label.
func awsClusterInput(ctx context.Context, o Options, client kubernetes.Interface, nodes []v1.Node, mode preflight.Mode) (awschecks.Input, error) {
	cc, err := cloudconfig.Load(o.CloudConfig)
	if err != nil {
		return awschecks.Input{}, exitcode.UsageError(err)
	}
	var ids, controlPlane, unnamed []string
	region := o.Region
	if region == "" {
		region, _ = cc.RegionFromConfig()
	}
	for i := range nodes {
		n := &nodes[i]
		if n.Spec.ProviderID == "" {
			unnamed = append(unnamed, n.Name)
		}
		if id, err := providerid.Parse(n.Spec.ProviderID); err == nil {
			ids = append(ids, id.InstanceID)
			if _, ok := n.Labels[controlPlaneLabel]; ok {
				controlPlane = append(controlPlane, id.InstanceID)
			}
		}
		if region == "" {
			region = n.Labels[v1.LabelTopologyRegion]
		}
	}
	if region == "" {
		return awschecks.Input{}, &exitcode.Error{Code: exitcode.Unreachable, Err: fmt.Errorf(
			"the AWS region is unknown: pass --region or set Region in the --cloud-config file (no Node has a %s label); --aws=false skips the AWS checks", v1.LabelTopologyRegion)}
	}
	lbServices, err := loadBalancerServices(ctx, client)
	if err != nil {
		return awschecks.Input{}, &exitcode.Error{Code: exitcode.Unreachable, Err: err}
	}
	in, err := newAWSInput(ctx, o, cc, region, mode)
	in.InstanceIDs, in.ControlPlaneInstanceIDs, in.NodesWithoutProviderID = ids, controlPlane, unnamed
	in.LoadBalancerServices = lbServices
	return in, err
}

// loadBalancerServices lists the Services of type LoadBalancer in all
// namespaces, 500 a page.
func loadBalancerServices(ctx context.Context, client kubernetes.Interface) ([]v1.Service, error) {
	var out []v1.Service
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return client.CoreV1().Services(metav1.NamespaceAll).List(ctx, opts)
	})
	p.PageSize = 500
	err := p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		if svc := obj.(*v1.Service); svc.Spec.Type == v1.ServiceTypeLoadBalancer {
			out = append(out, *svc)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list Services: %w", err)
	}
	return out, nil
}
