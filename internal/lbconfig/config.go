package lbconfig

import (
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

// Scheme is the load balancer's scheme.
type Scheme string

// Schemes, as AWS spells them.
const (
	SchemeInternetFacing Scheme = "internet-facing"
	SchemeInternal       Scheme = "internal"
)

// Listener protocols, as the ELB APIs spell them.
const (
	ProtocolTCP   = "TCP"
	ProtocolUDP   = "UDP"
	ProtocolTLS   = "TLS"
	ProtocolSSL   = "SSL"
	ProtocolHTTP  = "HTTP"
	ProtocolHTTPS = "HTTPS"
)

// Config is the desired load-balancer configuration of one Service.
//
// Fields governed by an annotation that had a Problem keep their default
// value; Invalid reports which annotations those are, and the reconciler
// must leave what they govern as it is in AWS.
type Config struct {
	// Kind is the load-balancer type the Service was parsed for.
	Kind lbnames.LoadBalancerKind
	// Name is the load balancer's name (lbnames.LoadBalancerName).
	Name string
	// Scheme is read at creation only.
	Scheme Scheme
	// Listeners, one per service port with a node port, in spec order.
	Listeners []Listener
	// SourceRanges are the client CIDRs allowed in, masked; DefaultSourceRange
	// when none are given, nil when the given ones are invalid (never fall
	// back to 0.0.0.0/0 on a typo).
	SourceRanges []string

	// ProxyProtocol enables proxy protocol on all backends (Classic).
	ProxyProtocol bool
	// AccessLogs is nil when access logs are disabled.
	AccessLogs *AccessLogs
	// ConnectionDraining (Classic): enabled, and the timeout in seconds
	// (0: leave AWS's).
	ConnectionDrainingEnabled bool
	ConnectionDrainingTimeout int32
	// IdleTimeout in seconds (Classic).
	IdleTimeout int32
	// CrossZone load balancing.
	CrossZone bool
	// SecurityGroups replaces the managed security group when non-empty
	// (Classic); ExtraSecurityGroups are appended (Classic).
	SecurityGroups      []string
	ExtraSecurityGroups []string
	// SSLNegotiationPolicy for TLS/SSL listeners; empty: AWS default.
	SSLNegotiationPolicy string
	// AdditionalTags in annotation order.
	AdditionalTags []KeyValue
	// HealthCheck is the desired health check.
	HealthCheck HealthCheck
	// TargetGroupAttributes (NLB).
	TargetGroupAttributes TargetGroupAttributes
	// EIPAllocations and PrivateIPv4Addresses (NLB, creation only): one per
	// subnet; the count against discovered subnets is checked with AWS.
	EIPAllocations       []string
	PrivateIPv4Addresses []string
	// TargetNodeLabels selects target nodes; an empty value means the
	// label must exist. Nil: all nodes.
	TargetNodeLabels map[string]string
	// Subnets are subnet IDs or Name tag values; nil: discover.
	Subnets []string

	invalid map[string]bool
}

// Valid reports whether every annotation (or spec field) key parsed without
// a Problem; the reconciler must not change what an invalid one governs.
func (c *Config) Valid(keys ...string) bool {
	for _, k := range keys {
		if c.invalid[k] {
			return false
		}
	}
	return true
}

// Listener is one listener of the load balancer.
type Listener struct {
	// Name is the service port's name.
	Name string
	// Port is the load balancer's port; NodePort the instance/target port.
	Port     int32
	NodePort int32
	// Protocol is the listener protocol: Classic TCP, SSL, HTTP or HTTPS;
	// NLB TCP, UDP or TLS.
	Protocol string
	// BackendProtocol is the instance protocol (Classic) or target group
	// protocol (NLB).
	BackendProtocol string
	// CertificateARN is set on SSL/HTTPS/TLS listeners.
	CertificateARN string
}

// AccessLogs is the access-log configuration.
type AccessLogs struct {
	Bucket string
	Prefix string
	// EmitInterval in minutes (Classic only; 5 or 60).
	EmitInterval int32
}

// HealthCheck is the desired health check of the load balancer (Classic)
// or of every target group (NLB).
type HealthCheck struct {
	// Protocol: TCP, HTTP, HTTPS (or SSL on Classic).
	Protocol string
	// Port is a number or HealthCheckTrafficPort (Classic: the first
	// listener's node port; NLB: each target group's port).
	Port string
	// Path for HTTP and HTTPS checks.
	Path               string
	Interval           int32
	Timeout            int32 // NLB: 0 unless the annotation sets it (then not sent)
	HealthyThreshold   int32
	UnhealthyThreshold int32
}
