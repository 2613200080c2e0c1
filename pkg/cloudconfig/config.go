package cloudconfig

import (
	"regexp"
	"strings"
)

// Values of Global.ClusterServiceLoadBalancerHealthProbeMode.
const (
	// ProbeModeServiceNodePort health-checks each Service's own node port
	// (or its healthCheckNodePort). It is what an empty value means.
	ProbeModeServiceNodePort = "ServiceNodePort"
	// ProbeModeShared makes every externalTrafficPolicy=Cluster Service
	// health-check kube-proxy on the shared port and path.
	ProbeModeShared = "Shared"
)

// NLBSecurityGroupModeManaged is the only non-empty value of
// Global.NLBSecurityGroupMode: create and own one security group per new NLB.
const NLBSecurityGroupModeManaged = "Managed"

// Node IP families accepted in Global.NodeIPFamilies.
const (
	IPFamilyIPv4 = "ipv4"
	IPFamilyIPv6 = "ipv6"
)

// Defaults filled by Config.Default. They are upstream's and MUST NOT change.
const (
	// DefaultSharedProbePort is kube-proxy's healthz port.
	DefaultSharedProbePort = 10256
	// DefaultSharedProbePath is kube-proxy's healthz path.
	DefaultSharedProbePath = "/healthz"
	// DefaultTopologyInstanceTypePattern matches the instance types for which
	// EC2 instance topology is supported, so a topology answer is required.
	DefaultTopologyInstanceTypePattern = `^(hpc|trn|p)[0-9]+[a-z]*(-[a-z0-9]+)?(\.[0-9a-z]*)$`
)

// Config is the whole cloud-config file. Field names are the section names
// gcfg matches (case-insensitively); they are a wire contract.
type Config struct {
	// Global is the [Global] section.
	Global Global
	// ServiceOverride holds the [ServiceOverride "<name>"] sections by name.
	// The name only identifies the section; Service and Region select what it
	// overrides.
	ServiceOverride map[string]*ServiceOverride
}

// Global is the [Global] section. Every field name is a key name and a wire
// contract; see docs/cloud-config.md for what each does.
type Global struct {
	// Zone is a legacy availability-zone name (e.g. us-east-1a). When
	// Region is empty the region is derived from it.
	Zone string
	// Region is the AWS region of every client. Empty: derived from Zone,
	// else asked from IMDS.
	Region string
	// VPC is the cluster's VPC ID. Empty: the VPC of the CCM's own instance.
	VPC string
	// SubnetID is a fallback subnet for load balancers when none is tagged.
	SubnetID string
	// RouteTableID is the one route table the route controller manages,
	// instead of the cluster-tagged ones.
	RouteTableID string
	// RoleARN is an IAM role every AWS client assumes through STS.
	RoleARN string
	// SourceARN is sent as x-amz-source-arn when assuming RoleARN.
	SourceARN string
	// KubernetesClusterTag is the legacy cluster ID (tag KubernetesCluster).
	KubernetesClusterTag string
	// KubernetesClusterID is the cluster ID in kubernetes.io/cluster/<id>.
	// Empty: read from the CCM instance's own tags.
	KubernetesClusterID string
	// DisableSecurityGroupIngress stops the CCM adding load-balancer rules
	// to node security groups.
	DisableSecurityGroupIngress bool
	// ElbSecurityGroup is one existing security group used for every
	// Classic ELB instead of one created per load balancer.
	ElbSecurityGroup string
	// NodeIPFamilies lists the address families reported on Nodes, in
	// order (repeat the key for more than one). Default [ipv4].
	NodeIPFamilies []string
	// ClusterServiceLoadBalancerHealthProbeMode is "", ServiceNodePort or
	// Shared.
	ClusterServiceLoadBalancerHealthProbeMode string
	// ClusterServiceSharedLoadBalancerHealthProbePort is the Shared probe
	// port. Default 10256 in Shared mode.
	ClusterServiceSharedLoadBalancerHealthProbePort int
	// ClusterServiceSharedLoadBalancerHealthProbePath is the Shared probe
	// path. Default /healthz in Shared mode.
	ClusterServiceSharedLoadBalancerHealthProbePath string
	// SupportedTopologyInstanceTypePattern is a regular expression of the
	// instance types that must get an instance-topology answer.
	SupportedTopologyInstanceTypePattern string
	// NLBSecurityGroupMode is "" or Managed.
	NLBSecurityGroupMode string
	// DisableStrictZoneCheck is an in-tree (Kubernetes <= 1.26) key. It is
	// accepted so that migrated clusters' files load, and has no effect:
	// Warnings says so.
	DisableStrictZoneCheck bool
}

// ServiceOverride is one [ServiceOverride "<name>"] section: a custom
// endpoint for one service in one region.
type ServiceOverride struct {
	// Service names the service; see CanonicalService for the accepted
	// spellings.
	Service string
	// Region is the client region the override applies to (exact match).
	Region string
	// URL is the absolute http(s) endpoint.
	URL string
	// SigningRegion is the region requests are signed for.
	SigningRegion string
	// SigningMethod is accepted and ignored, as upstream does.
	SigningMethod string
	// SigningName, when set, replaces the SigV4 signing name.
	SigningName string
}

// ClusterID returns the cluster ID: KubernetesClusterID, else the legacy
// KubernetesClusterTag, else "".
func (c *Config) ClusterID() string {
	if c.Global.KubernetesClusterID != "" {
		return c.Global.KubernetesClusterID
	}
	return c.Global.KubernetesClusterTag
}

// zoneRegion is upstream's (and the in-tree provider's) rule for deriving a
// region from a zone name: the leading "word-...-digits". It handles local
// and wavelength zones too (us-west-2-lax-1a -> us-west-2).
var zoneRegion = regexp.MustCompile(`^([a-zA-Z]+-)+\d+`)

// RegionFromConfig returns Region, else the region derived from Zone (e.g.
// us-east-1a -> us-east-1, us-west-2-lax-1a -> us-west-2), else false: the
// region must then come from IMDS.
//
// Upstream prefers Zone over Region; Validate rejects files where the two
// disagree, so the order only matters for files that fail validation.
func (c *Config) RegionFromConfig() (string, bool) {
	if c.Global.Region != "" {
		return c.Global.Region, true
	}
	if r := regionOfZone(c.Global.Zone); r != "" {
		return r, true
	}
	return "", false
}

func regionOfZone(zone string) string {
	return zoneRegion.FindString(zone)
}

// OffEC2 reports whether the file configures everything the CCM would
// otherwise ask IMDS: a region (Region or Zone), VPC and a cluster ID. The
// CCM then runs with no IMDS at all, e.g. with the control plane outside EC2
// or in another account.
//
// Upstream is stricter: it also needs SubnetID or RoleARN before it skips its
// self-instance lookup (and still reads IMDS when Region and Zone are empty).
func (c *Config) OffEC2() bool {
	_, hasRegion := c.RegionFromConfig()
	return hasRegion && c.Global.VPC != "" && c.ClusterID() != ""
}

// maxTagKeyLength is the longest AWS tag key: it bounds the cluster ID, which
// is part of the cluster tag key (clustertag.Key).
const maxTagKeyLength = 128

// partitionOfRegion returns the AWS partition a well-formed region name is in.
func partitionOfRegion(region string) string {
	parts := strings.Split(region, "-")
	switch {
	case parts[0] == "cn":
		return "aws-cn"
	case parts[0] == "eusc":
		return "aws-eusc"
	case len(parts) > 1 && parts[0] == "us" && parts[1] == "gov":
		return "aws-us-gov"
	case len(parts) > 1 && parts[1] == "iso":
		return "aws-iso"
	case len(parts) > 1 && strings.HasPrefix(parts[1], "iso") && len(parts[1]) == 4:
		return "aws-iso-" + parts[1][3:]
	}
	return "aws"
}
