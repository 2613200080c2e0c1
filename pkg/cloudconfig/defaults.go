package cloudconfig

import "strings"

// Default fills the defaults upstream applies:
//   - NodeIPFamilies: [ipv4];
//   - in Shared probe mode, the shared probe port 10256 and path /healthz;
//   - SupportedTopologyInstanceTypePattern: DefaultTopologyInstanceTypePattern.
//
// It also trims surrounding space from ServiceOverride values, as upstream
// does for Service and Region before matching. It never changes a value that
// is set, and running it twice changes nothing more.
func (c *Config) Default() {
	g := &c.Global
	if len(g.NodeIPFamilies) == 0 {
		g.NodeIPFamilies = []string{IPFamilyIPv4}
	}
	if g.ClusterServiceLoadBalancerHealthProbeMode == ProbeModeShared {
		if g.ClusterServiceSharedLoadBalancerHealthProbePort == 0 {
			g.ClusterServiceSharedLoadBalancerHealthProbePort = DefaultSharedProbePort
		}
		if g.ClusterServiceSharedLoadBalancerHealthProbePath == "" {
			g.ClusterServiceSharedLoadBalancerHealthProbePath = DefaultSharedProbePath
		}
	}
	if g.SupportedTopologyInstanceTypePattern == "" {
		g.SupportedTopologyInstanceTypePattern = DefaultTopologyInstanceTypePattern
	}
	for _, o := range c.ServiceOverride {
		if o == nil {
			continue
		}
		o.Service = strings.TrimSpace(o.Service)
		o.Region = strings.TrimSpace(o.Region)
		o.URL = strings.TrimSpace(o.URL)
		o.SigningRegion = strings.TrimSpace(o.SigningRegion)
		o.SigningName = strings.TrimSpace(o.SigningName)
		o.SigningMethod = strings.TrimSpace(o.SigningMethod)
	}
}
