package gather

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"

	"github.com/awsccmctl/awsccmctl/internal/preflight/awschecks"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
)

// controlPlaneLabel marks control-plane Nodes (kubeadm and kops).
const controlPlaneLabel = "node-role.kubernetes.io/control-plane"

// listNodes lists every Node, 500 a page, once for the cluster checks and
// the AWS input. The result is never nil, so the checks know it was listed.
func listNodes(ctx context.Context, client kubernetes.Interface) ([]corev1.Node, error) {
	nodes := []corev1.Node{}
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return client.CoreV1().Nodes().List(ctx, opts)
	})
	p.PageSize = 500
	err := p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		nodes = append(nodes, *obj.(*corev1.Node))
		return nil
	})
	if err != nil {
		return nil, &UnreachableError{fmt.Errorf("list Nodes: %w", err)}
	}
	return nodes, nil
}

// awsClusterInput builds the AWS checks' input for cluster mode: instance
// IDs from the Nodes' providerIDs, the region from o.Region, the cloud
// config, or the Nodes' topology.kubernetes.io/region label.
func awsClusterInput(ctx context.Context, o Options, client kubernetes.Interface, nodes []corev1.Node) (awschecks.Input, error) {
	cc, err := cloudconfig.Load(o.CloudConfig)
	if err != nil {
		return awschecks.Input{}, &InputError{err}
	}
	var ids, controlPlane, unnamed []string
	podCIDRs := make([][]string, 0, len(nodes))
	region := o.Region
	if region == "" {
		region, _ = cc.RegionFromConfig()
	}
	for i := range nodes {
		n := &nodes[i]
		if n.Spec.ProviderID == "" {
			unnamed = append(unnamed, n.Name)
		}
		podCIDRs = append(podCIDRs, nodePodCIDRs(n))
		if id, err := providerid.Parse(n.Spec.ProviderID); err == nil {
			ids = append(ids, id.InstanceID)
			if _, ok := n.Labels[controlPlaneLabel]; ok {
				controlPlane = append(controlPlane, id.InstanceID)
			}
		}
		if region == "" {
			region = n.Labels[corev1.LabelTopologyRegion]
		}
	}
	if region == "" {
		// Not an error: the cluster checks need no AWS and still report.
		return awschecks.Input{Mode: o.Mode, CloudConfig: cc, Unavailable: regionUnknownCluster}, nil
	}
	lbServices, err := loadBalancerServices(ctx, client)
	if err != nil {
		return awschecks.Input{}, &UnreachableError{err}
	}
	in, err := newAWSInput(ctx, o, cc, region)
	in.InstanceIDs, in.ControlPlaneInstanceIDs, in.NodesWithoutProviderID = ids, controlPlane, unnamed
	in.LoadBalancerServices = lbServices
	in.NodePodCIDRs = podCIDRs
	return in, err
}

// nodePodCIDRs returns a Node's pod CIDRs: spec.podCIDRs, else the older
// single spec.podCIDR.
func nodePodCIDRs(n *corev1.Node) []string {
	if len(n.Spec.PodCIDRs) > 0 {
		return slices.Clone(n.Spec.PodCIDRs)
	}
	if n.Spec.PodCIDR != "" {
		return []string{n.Spec.PodCIDR}
	}
	return []string{}
}

// loadBalancerServices lists the Services of type LoadBalancer in all
// namespaces, 500 a page.
func loadBalancerServices(ctx context.Context, client kubernetes.Interface) ([]corev1.Service, error) {
	var out []corev1.Service
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return client.CoreV1().Services(metav1.NamespaceAll).List(ctx, opts)
	})
	p.PageSize = 500
	err := p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		if svc := obj.(*corev1.Service); svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
			out = append(out, *svc)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list Services: %w", err)
	}
	return out, nil
}
