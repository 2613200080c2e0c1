package lbconfig

import (
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

// Annotation keys read from a Service of type LoadBalancer.
//
// Every key is a wire contract shared with the in-tree provider and
// kubernetes/cloud-provider-aws (pkg/providers/v1/aws.go): users' manifests
// carry them, so they MUST NOT change.
const (
	// KeyType selects Classic ELB or NLB; owned by lbnames, repeated here so
	// the registry is complete.
	KeyType                       = lbnames.TypeAnnotation
	KeyInternal                   = "service.beta.kubernetes.io/aws-load-balancer-internal"
	KeyProxyProtocol              = "service.beta.kubernetes.io/aws-load-balancer-proxy-protocol"
	KeyAccessLogEmitInterval      = "service.beta.kubernetes.io/aws-load-balancer-access-log-emit-interval"
	KeyAccessLogEnabled           = "service.beta.kubernetes.io/aws-load-balancer-access-log-enabled"
	KeyAccessLogS3BucketName      = "service.beta.kubernetes.io/aws-load-balancer-access-log-s3-bucket-name"
	KeyAccessLogS3BucketPrefix    = "service.beta.kubernetes.io/aws-load-balancer-access-log-s3-bucket-prefix"
	KeyConnectionDrainingEnabled  = "service.beta.kubernetes.io/aws-load-balancer-connection-draining-enabled"
	KeyConnectionDrainingTimeout  = "service.beta.kubernetes.io/aws-load-balancer-connection-draining-timeout"
	KeyConnectionIdleTimeout      = "service.beta.kubernetes.io/aws-load-balancer-connection-idle-timeout"
	KeyCrossZoneLoadBalancing     = "service.beta.kubernetes.io/aws-load-balancer-cross-zone-load-balancing-enabled"
	KeyExtraSecurityGroups        = "service.beta.kubernetes.io/aws-load-balancer-extra-security-groups"
	KeySecurityGroups             = "service.beta.kubernetes.io/aws-load-balancer-security-groups"
	KeySSLCert                    = "service.beta.kubernetes.io/aws-load-balancer-ssl-cert"
	KeySSLPorts                   = "service.beta.kubernetes.io/aws-load-balancer-ssl-ports"
	KeySSLNegotiationPolicy       = "service.beta.kubernetes.io/aws-load-balancer-ssl-negotiation-policy"
	KeyBackendProtocol            = "service.beta.kubernetes.io/aws-load-balancer-backend-protocol"
	KeyAdditionalResourceTags     = "service.beta.kubernetes.io/aws-load-balancer-additional-resource-tags"
	KeyHealthCheckProtocol        = "service.beta.kubernetes.io/aws-load-balancer-healthcheck-protocol"
	KeyHealthCheckPort            = "service.beta.kubernetes.io/aws-load-balancer-healthcheck-port"
	KeyHealthCheckPath            = "service.beta.kubernetes.io/aws-load-balancer-healthcheck-path"
	KeyHealthCheckHealthyThresh   = "service.beta.kubernetes.io/aws-load-balancer-healthcheck-healthy-threshold"
	KeyHealthCheckUnhealthyThresh = "service.beta.kubernetes.io/aws-load-balancer-healthcheck-unhealthy-threshold"
	KeyHealthCheckInterval        = "service.beta.kubernetes.io/aws-load-balancer-healthcheck-interval"
	KeyHealthCheckTimeout         = "service.beta.kubernetes.io/aws-load-balancer-healthcheck-timeout"
	KeyTargetGroupAttributes      = "service.beta.kubernetes.io/aws-load-balancer-target-group-attributes"
	KeyEIPAllocations             = "service.beta.kubernetes.io/aws-load-balancer-eip-allocations"
	KeyPrivateIPv4Addresses       = "service.beta.kubernetes.io/aws-load-balancer-private-ipv4-addresses"
	KeyTargetNodeLabels           = "service.beta.kubernetes.io/aws-load-balancer-target-node-labels"
	KeySubnets                    = "service.beta.kubernetes.io/aws-load-balancer-subnets"
	// KeySourceRanges is the generic (not AWS-specific) source-range
	// annotation of k8s.io/cloud-provider; spec.loadBalancerSourceRanges wins
	// over it.
	KeySourceRanges = "service.beta.kubernetes.io/load-balancer-source-ranges"
)

// Field paths of the Service spec named by Problems that are not about an
// annotation.
const (
	FieldLoadBalancerIP           = "spec.loadBalancerIP"
	FieldSessionAffinity          = "spec.sessionAffinity"
	FieldPorts                    = "spec.ports"
	FieldLoadBalancerSourceRanges = "spec.loadBalancerSourceRanges"
)

// Values with a meaning on the wire. They MUST NOT change.
const (
	// DefaultSourceRange is used when neither spec.loadBalancerSourceRanges
	// nor the annotation name any range.
	DefaultSourceRange = "0.0.0.0/0"
	// HealthCheckTrafficPort is the health-check port value meaning "the
	// node port of the listener".
	HealthCheckTrafficPort = "traffic-port"
	// TGAttrPreserveClientIP and TGAttrProxyProtocolV2 are the only target
	// group attributes the annotation may set.
	TGAttrPreserveClientIP = "preserve_client_ip.enabled"
	TGAttrProxyProtocolV2  = "proxy_protocol_v2.enabled"
)

// Applies says which load-balancer types an annotation is read for.
type Applies string

const (
	// AppliesClassic marks annotations read only for Classic ELBs.
	AppliesClassic Applies = "classic"
	// AppliesNLB marks annotations read only for NLBs.
	AppliesNLB Applies = "nlb"
	// AppliesBoth marks annotations read for both types.
	AppliesBoth Applies = "both"
)

// Has reports whether an annotation applying to a is read for kind.
func (a Applies) Has(kind lbnames.LoadBalancerKind) bool {
	switch a {
	case AppliesBoth:
		return true
	case AppliesClassic:
		return kind == lbnames.KindClassic
	case AppliesNLB:
		return kind == lbnames.KindNLB
	}
	return false
}

// Annotation describes one annotation of the registry.
type Annotation struct {
	// Key is the full annotation key (a wire contract).
	Key string
	// Applies says for which load-balancer types the annotation is read;
	// set on another type it is reported as a Problem.
	Applies Applies
	// Syntax describes the accepted value.
	Syntax string
	// Default is what applies when the annotation is absent.
	Default string
	// Meaning is a one-line description.
	Meaning string
}

// Annotations returns the registry: every annotation the CCM reads from a
// Service of type LoadBalancer, in documentation order. The reference page
// docs/reference/load-balancer-annotations.md is generated from it.
func Annotations() []Annotation {
	return []Annotation{
		{KeyType, AppliesBoth, "`nlb`, `nlb-ip`, `external`, anything else", "Classic ELB",
			"`nlb` → NLB; `nlb-ip` or `external` → left to another controller; anything else → Classic ELB. Must not change after creation."},
		{KeyInternal, AppliesBoth, "any string", "internet-facing",
			"Any non-empty value other than `false` makes the load balancer internal. Read at creation only."},
		{KeyProxyProtocol, AppliesClassic, "`*`", "off",
			"Enables proxy protocol on all backends (NLB: use target-group-attributes `proxy_protocol_v2.enabled`)."},
		{KeyAccessLogEmitInterval, AppliesClassic, "`5` or `60` (minutes)", "60",
			"How often access logs are published."},
		{KeyAccessLogEnabled, AppliesBoth, "boolean", "false",
			"Publish access logs to S3 (requires the bucket name)."},
		{KeyAccessLogS3BucketName, AppliesBoth, "S3 bucket name (3-63 characters)", "none",
			"Bucket for access logs."},
		{KeyAccessLogS3BucketPrefix, AppliesBoth, "string", "none",
			"Key prefix for access logs in the bucket."},
		{KeyConnectionDrainingEnabled, AppliesClassic, "boolean", "false",
			"Keep connections to deregistering instances open for the draining timeout."},
		{KeyConnectionDrainingTimeout, AppliesClassic, "integer seconds 1-3600", "unset (AWS: 300)",
			"Connection draining timeout."},
		{KeyConnectionIdleTimeout, AppliesClassic, "integer seconds 1-4000", "60",
			"Idle connection timeout."},
		{KeyCrossZoneLoadBalancing, AppliesBoth, "boolean", "false",
			"Cross-zone load balancing; set back to the annotation's value (or false) when AWS differs."},
		{KeyExtraSecurityGroups, AppliesClassic, "comma list of `sg-` IDs", "none",
			"Security groups appended to the load balancer's own (rejected on NLB)."},
		{KeySecurityGroups, AppliesClassic, "comma list of `sg-` IDs", "a managed `k8s-elb-<name>` group",
			"Replaces the managed security group; the listed groups are never modified or deleted."},
		{KeySSLCert, AppliesBoth, "ACM or IAM certificate ARN", "none",
			"Certificate for SSL/HTTPS (Classic) or TLS (NLB, non-UDP ports) listeners on the SSL ports."},
		{KeySSLPorts, AppliesBoth, "`*` or comma list of port numbers or names", "`*` (all)",
			"Which service ports get the certificate; entries matching no port are ignored."},
		{KeySSLNegotiationPolicy, AppliesBoth, "predefined policy name", "AWS default",
			"Classic: policy `k8s-SSLNegotiationPolicy-<name>` on SSL listeners; NLB: listener SslPolicy."},
		{KeyBackendProtocol, AppliesBoth, "`http`, `https`, `ssl` or `tcp`", "`tcp`",
			"Classic: listener/instance protocol mapping; NLB: `ssl` makes TLS target groups, other values have no effect."},
		{KeyAdditionalResourceTags, AppliesBoth, "`k=v,k2=,k3` (no `=` in values)", "none",
			"Extra tags on the load balancer and the security groups and target groups it creates; `aws:` and the controller's own keys are refused."},
		{KeyHealthCheckProtocol, AppliesBoth, "`TCP`, `HTTP`, `HTTPS` (Classic also `SSL`)", "ETP Local: HTTP; Cluster: TCP",
			"Health-check protocol."},
		{KeyHealthCheckPort, AppliesBoth, "`traffic-port` or port number 1-65535", "ETP Local: healthCheckNodePort; Cluster: traffic-port",
			"Health-check port."},
		{KeyHealthCheckPath, AppliesBoth, "path starting with `/`", "ETP Local: `/healthz`; Cluster: `/`",
			"Health-check path for HTTP and HTTPS checks."},
		{KeyHealthCheckHealthyThresh, AppliesBoth, "integer 2-10", "Classic 2; NLB Local 2, Cluster 3",
			"Consecutive successes before a target is healthy."},
		{KeyHealthCheckUnhealthyThresh, AppliesBoth, "integer 2-10", "Classic 6; NLB Local 2, Cluster 3",
			"Consecutive failures before a target is unhealthy."},
		{KeyHealthCheckInterval, AppliesBoth, "integer seconds 5-300", "Classic 10; NLB Local 10, Cluster 30",
			"Seconds between health checks; on NLB a change replaces the target groups."},
		{KeyHealthCheckTimeout, AppliesBoth, "integer seconds: Classic 2-60 and less than the interval; NLB 2-120", "Classic 5; NLB: AWS's default for the protocol",
			"Health-check timeout; on NLB sent only when set (upstream never sends it)."},
		{KeyTargetGroupAttributes, AppliesNLB, "`preserve_client_ip.enabled=<bool>,proxy_protocol_v2.enabled=<bool>`", "AWS defaults",
			"Target group attributes; only these two keys; UDP ports cannot disable client IP preservation. Rejected on Classic."},
		{KeyEIPAllocations, AppliesNLB, "comma list of `eipalloc-` IDs, one per subnet", "AWS-assigned addresses",
			"Elastic IPs of an internet-facing NLB; read at creation only."},
		{KeyPrivateIPv4Addresses, AppliesNLB, "comma list of IPv4 addresses, one per subnet", "AWS-assigned addresses",
			"Private addresses of an internal NLB; read at creation only."},
		{KeyTargetNodeLabels, AppliesBoth, "`k=v,k2=` label selector", "all nodes",
			"Only nodes with these labels are targets; an empty value means the key must exist."},
		{KeySubnets, AppliesBoth, "comma list of `subnet-` IDs or Name tag values", "discovered",
			"Subnets of the load balancer, one per zone; all must resolve. NLB subnets are fixed at creation."},
		{KeySourceRanges, AppliesBoth, "comma list of CIDRs", "`0.0.0.0/0`",
			"Client ranges allowed in; spec.loadBalancerSourceRanges takes precedence."},
	}
}

// Lookup returns the registry entry for key.
func Lookup(key string) (Annotation, bool) {
	for _, a := range Annotations() {
		if a.Key == key {
			return a, true
		}
	}
	return Annotation{}, false
}
