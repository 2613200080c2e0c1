package awscloud

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/lb"
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

// LoadBalancer serves Classic ELBs and NLBs (internal/lb).
func (c *Cloud) LoadBalancer() (cloudprovider.LoadBalancer, bool) { return loadBalancers{c.lb}, true }

// newLoadBalancers builds the reconciler on the provider's clients and
// shared instance view.
func (c *Cloud) newLoadBalancers(clients *awsapi.Clients, clusterName string) *lb.Reconciler {
	g := c.cfg.Global
	opts := lb.Options{
		ElbSecurityGroup:            g.ElbSecurityGroup,
		DisableSecurityGroupIngress: g.DisableSecurityGroupIngress,
		NLBManagedSecurityGroups:    g.NLBSecurityGroupMode == cloudconfig.NLBSecurityGroupModeManaged,
	}
	if g.ClusterServiceLoadBalancerHealthProbeMode == cloudconfig.ProbeModeShared {
		//nolint:gosec // G115: cloudconfig.Load (Validate) refused a port outside 0-65535, so it fits int32
		p := &lb.SharedProbe{Port: int32(g.ClusterServiceSharedLoadBalancerHealthProbePort), Path: g.ClusterServiceSharedLoadBalancerHealthProbePath}
		if p.Port == 0 {
			p.Port = cloudconfig.DefaultSharedProbePort
		}
		if p.Path == "" {
			p.Path = cloudconfig.DefaultSharedProbePath
		}
		opts.SharedProbe = p
	}
	return lb.New(lb.Config{
		EC2: lb.NewEC2(clients.EC2), ELB: lb.NewELB(clients.ELB), ELBv2: lb.NewELBv2(clients.ELBv2),
		Env:       lb.Env{Region: c.env.Region, VPCID: c.env.VPCID, ClusterID: c.env.ClusterID, ClusterName: clusterName, Legacy: c.env.Legacy},
		Options:   opts,
		Instances: c.view,
		Events:    c.events,
		Clock:     c.clock,
	})
}

// loadBalancers adapts the reconciler to cloudprovider.LoadBalancer.
type loadBalancers struct{ r *lb.Reconciler }

func (l loadBalancers) GetLoadBalancer(ctx context.Context, _ string, svc *corev1.Service) (*corev1.LoadBalancerStatus, bool, error) {
	return l.r.Get(ctx, svc)
}

func (l loadBalancers) GetLoadBalancerName(_ context.Context, _ string, svc *corev1.Service) string {
	return lbnames.LoadBalancerName(svc)
}

func (l loadBalancers) EnsureLoadBalancer(ctx context.Context, _ string, svc *corev1.Service, nodes []*corev1.Node) (*corev1.LoadBalancerStatus, error) {
	return l.r.Ensure(ctx, svc, nodes)
}

func (l loadBalancers) UpdateLoadBalancer(ctx context.Context, _ string, svc *corev1.Service, nodes []*corev1.Node) error {
	return l.r.Update(ctx, svc, nodes)
}

func (l loadBalancers) EnsureLoadBalancerDeleted(ctx context.Context, _ string, svc *corev1.Service) error {
	return l.r.Delete(ctx, svc)
}
