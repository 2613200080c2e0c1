package lbconfig

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

const testCert = "arn:aws:acm:us-east-1:123456789012:certificate/12345678-1234-1234-1234-123456789012"

// service builds a LoadBalancer Service with two TCP ports (http 80 and
// https 443) with node ports, ETP Cluster, and the given annotations.
func service(ann map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "8a5a2c4e-3b1f-4c52-9d1e-0f4b6a7c8d9e", Annotations: ann},
		Spec: corev1.ServiceSpec{
			Type:                  corev1.ServiceTypeLoadBalancer,
			ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster,
			SessionAffinity:       corev1.ServiceAffinityNone,
			Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP},
				{Name: "https", Port: 443, NodePort: 30443, Protocol: corev1.ProtocolTCP},
			},
		},
	}
}

// nlb adds the NLB type annotation to ann.
func nlb(ann map[string]string) map[string]string {
	out := map[string]string{KeyType: lbnames.TypeNLB}
	for k, v := range ann {
		out[k] = v
	}
	return out
}

type parseCase struct {
	name string
	ann  map[string]string
	mod  func(*corev1.Service)
	// want lists the annotations/fields of the expected Problems, in order.
	want []string
	// check inspects the Config.
	check func(t *testing.T, c *Config)
}

// runCases parses each case's Service (the kind from lbnames.Kind) and
// compares the Problems' annotations.
func runCases(t *testing.T, cases []parseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svc := service(tc.ann)
			if tc.mod != nil {
				tc.mod(svc)
			}
			cfg, problems := Parse(svc, lbnames.Kind(svc))
			if cfg == nil {
				t.Fatal("Parse returned no Config")
			}
			var got []string
			for _, p := range problems {
				got = append(got, p.Annotation)
				if p.Reason == "" {
					t.Errorf("problem on %s has no reason", p.Annotation)
				}
				if cfg.Valid(p.Annotation) {
					t.Errorf("%s has a problem but Config.Valid says it is valid", p.Annotation)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("problems on %q, want %q; problems: %v", got, tc.want, problems)
			}
			if tc.check != nil {
				tc.check(t, cfg)
			}
		})
	}
}

func eq[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

func TestParseNotOurs(t *testing.T) {
	svc := service(map[string]string{KeyType: lbnames.TypeNLBIP})
	if cfg, problems := Parse(svc, lbnames.Kind(svc)); cfg != nil || problems != nil {
		t.Errorf("Parse(nlb-ip) = %v, %v; want nil, nil", cfg, problems)
	}
	if cfg, problems := Parse(nil, lbnames.KindClassic); cfg != nil || problems != nil {
		t.Errorf("Parse(nil) = %v, %v; want nil, nil", cfg, problems)
	}
}

func TestParseDefaults(t *testing.T) {
	runCases(t, []parseCase{
		{name: "valid-classic-defaults", check: func(t *testing.T, c *Config) {
			eq(t, "Kind", c.Kind, lbnames.KindClassic)
			eq(t, "Name", c.Name, "a8a5a2c4e3b1f4c529d1e0f4b6a7c8d9")
			eq(t, "Scheme", c.Scheme, SchemeInternetFacing)
			eq(t, "SourceRanges", c.SourceRanges, []string{"0.0.0.0/0"})
			eq(t, "IdleTimeout", c.IdleTimeout, int32(60))
			eq(t, "CrossZone", c.CrossZone, false)
			eq(t, "AccessLogs", c.AccessLogs, (*AccessLogs)(nil))
			eq(t, "Listeners", c.Listeners, []Listener{
				{Name: "http", Port: 80, NodePort: 30080, Protocol: "TCP", BackendProtocol: "TCP"},
				{Name: "https", Port: 443, NodePort: 30443, Protocol: "TCP", BackendProtocol: "TCP"},
			})
		}},
		{name: "valid-nlb-defaults", ann: nlb(nil), check: func(t *testing.T, c *Config) {
			eq(t, "Kind", c.Kind, lbnames.KindNLB)
			eq(t, "IdleTimeout", c.IdleTimeout, int32(0))
			eq(t, "Listeners", c.Listeners, []Listener{
				{Name: "http", Port: 80, NodePort: 30080, Protocol: "TCP", BackendProtocol: "TCP"},
				{Name: "https", Port: 443, NodePort: 30443, Protocol: "TCP", BackendProtocol: "TCP"},
			})
		}},
		{name: "valid-port-without-node-port-skipped", mod: func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 0 },
			check: func(t *testing.T, c *Config) { eq(t, "len(Listeners)", len(c.Listeners), 1) }},
	})
}

func local(s *corev1.Service) {
	s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	s.Spec.HealthCheckNodePort = 32000
}

func TestHealthCheckDefaults(t *testing.T) {
	hc := func(want HealthCheck) func(*testing.T, *Config) {
		return func(t *testing.T, c *Config) { eq(t, "HealthCheck", c.HealthCheck, want) }
	}
	runCases(t, []parseCase{
		{name: "valid-classic-etp-cluster", check: hc(HealthCheck{Protocol: "TCP", Port: "traffic-port", Interval: 10, Timeout: 5, HealthyThreshold: 2, UnhealthyThreshold: 6})},
		{name: "valid-classic-etp-cluster-ssl-backend", ann: map[string]string{KeyBackendProtocol: "ssl"},
			check: hc(HealthCheck{Protocol: "SSL", Port: "traffic-port", Interval: 10, Timeout: 5, HealthyThreshold: 2, UnhealthyThreshold: 6})},
		{name: "valid-classic-etp-local", mod: local,
			check: hc(HealthCheck{Protocol: "HTTP", Port: "32000", Path: "/healthz", Interval: 10, Timeout: 5, HealthyThreshold: 2, UnhealthyThreshold: 6})},
		{name: "valid-nlb-etp-cluster", ann: nlb(nil),
			check: hc(HealthCheck{Protocol: "TCP", Port: "traffic-port", Interval: 30, HealthyThreshold: 3, UnhealthyThreshold: 3})},
		{name: "valid-nlb-etp-local", ann: nlb(nil), mod: local,
			check: hc(HealthCheck{Protocol: "HTTP", Port: "32000", Path: "/healthz", Interval: 10, HealthyThreshold: 2, UnhealthyThreshold: 2})},
		{name: "valid-nlb-etp-cluster-http-gets-root-path", ann: nlb(map[string]string{KeyHealthCheckProtocol: "http"}),
			check: hc(HealthCheck{Protocol: "HTTP", Port: "traffic-port", Path: "/", Interval: 30, HealthyThreshold: 3, UnhealthyThreshold: 3})},
		{name: "valid-nlb-etp-local-overrides", mod: local, ann: nlb(map[string]string{
			KeyHealthCheckProtocol: "HTTPS", KeyHealthCheckPort: "8443", KeyHealthCheckPath: "/ready",
			KeyHealthCheckInterval: "15", KeyHealthCheckHealthyThresh: "4", KeyHealthCheckUnhealthyThresh: "5", KeyHealthCheckTimeout: "6"}),
			check: hc(HealthCheck{Protocol: "HTTPS", Port: "8443", Path: "/ready", Interval: 15, Timeout: 6, HealthyThreshold: 4, UnhealthyThreshold: 5})},
		{name: "valid-tcp-check-drops-path", mod: local, ann: map[string]string{KeyHealthCheckProtocol: "TCP", KeyHealthCheckPath: "/x"},
			check: hc(HealthCheck{Protocol: "TCP", Port: "32000", Interval: 10, Timeout: 5, HealthyThreshold: 2, UnhealthyThreshold: 6})},
	})
}

func TestAnnotations(t *testing.T) {
	runCases(t, []parseCase{
		// internal
		{name: "valid-internal-true", ann: map[string]string{KeyInternal: "true"},
			check: func(t *testing.T, c *Config) { eq(t, "Scheme", c.Scheme, SchemeInternal) }},
		{name: "valid-internal-legacy-cidr", ann: map[string]string{KeyInternal: "0.0.0.0/0"},
			check: func(t *testing.T, c *Config) { eq(t, "Scheme", c.Scheme, SchemeInternal) }},
		{name: "valid-internal-false", ann: map[string]string{KeyInternal: "false"},
			check: func(t *testing.T, c *Config) { eq(t, "Scheme", c.Scheme, SchemeInternetFacing) }},
		{name: "valid-internal-blank-is-internal-as-upstream", ann: map[string]string{KeyInternal: " "},
			check: func(t *testing.T, c *Config) { eq(t, "Scheme", c.Scheme, SchemeInternal) }},
		{name: "valid-internal-empty", ann: map[string]string{KeyInternal: ""},
			check: func(t *testing.T, c *Config) { eq(t, "Scheme", c.Scheme, SchemeInternetFacing) }},

		// proxy protocol
		{name: "valid-proxy-protocol", ann: map[string]string{KeyProxyProtocol: "*"},
			check: func(t *testing.T, c *Config) { eq(t, "ProxyProtocol", c.ProxyProtocol, true) }},
		{name: "invalid-proxy-protocol-value", ann: map[string]string{KeyProxyProtocol: "true"}, want: []string{KeyProxyProtocol}},
		{name: "invalid-proxy-protocol-on-nlb", ann: nlb(map[string]string{KeyProxyProtocol: "*"}), want: []string{KeyProxyProtocol},
			check: func(t *testing.T, c *Config) { eq(t, "ProxyProtocol", c.ProxyProtocol, false) }},

		// access logs
		{name: "valid-access-logs", ann: map[string]string{KeyAccessLogEnabled: "true", KeyAccessLogS3BucketName: "my-logs",
			KeyAccessLogS3BucketPrefix: "/elb/", KeyAccessLogEmitInterval: "5"},
			check: func(t *testing.T, c *Config) {
				eq(t, "AccessLogs", c.AccessLogs, &AccessLogs{Bucket: "my-logs", Prefix: "elb", EmitInterval: 5})
			}},
		{name: "valid-access-logs-nlb", ann: nlb(map[string]string{KeyAccessLogEnabled: "true", KeyAccessLogS3BucketName: "my-logs"}),
			check: func(t *testing.T, c *Config) { eq(t, "AccessLogs", c.AccessLogs, &AccessLogs{Bucket: "my-logs"}) }},
		{name: "valid-access-logs-disabled", ann: map[string]string{KeyAccessLogEnabled: "false", KeyAccessLogS3BucketName: "my-logs"},
			check: func(t *testing.T, c *Config) { eq(t, "AccessLogs", c.AccessLogs, (*AccessLogs)(nil)) }},
		{name: "invalid-access-log-enabled", ann: map[string]string{KeyAccessLogEnabled: "yes"}, want: []string{KeyAccessLogEnabled}},
		{name: "invalid-access-log-no-bucket", ann: map[string]string{KeyAccessLogEnabled: "true"}, want: []string{KeyAccessLogS3BucketName}},
		{name: "invalid-access-log-bucket", ann: map[string]string{KeyAccessLogEnabled: "true", KeyAccessLogS3BucketName: "My_Bucket"},
			want: []string{KeyAccessLogS3BucketName}},
		{name: "invalid-access-log-emit-interval", ann: map[string]string{KeyAccessLogEmitInterval: "10"}, want: []string{KeyAccessLogEmitInterval}},
		{name: "invalid-access-log-emit-interval-on-nlb", ann: nlb(map[string]string{KeyAccessLogEmitInterval: "5"}), want: []string{KeyAccessLogEmitInterval}},

		// connection draining and idle timeout
		{name: "valid-connection-draining", ann: map[string]string{KeyConnectionDrainingEnabled: "true", KeyConnectionDrainingTimeout: "120"},
			check: func(t *testing.T, c *Config) {
				eq(t, "draining", []any{c.ConnectionDrainingEnabled, c.ConnectionDrainingTimeout}, []any{true, int32(120)})
			}},
		{name: "invalid-connection-draining-enabled", ann: map[string]string{KeyConnectionDrainingEnabled: "on"}, want: []string{KeyConnectionDrainingEnabled}},
		{name: "invalid-connection-draining-timeout", ann: map[string]string{KeyConnectionDrainingTimeout: "0"}, want: []string{KeyConnectionDrainingTimeout}},
		{name: "valid-idle-timeout", ann: map[string]string{KeyConnectionIdleTimeout: "300"},
			check: func(t *testing.T, c *Config) { eq(t, "IdleTimeout", c.IdleTimeout, int32(300)) }},
		{name: "invalid-idle-timeout-range", ann: map[string]string{KeyConnectionIdleTimeout: "4001"}, want: []string{KeyConnectionIdleTimeout},
			check: func(t *testing.T, c *Config) { eq(t, "IdleTimeout", c.IdleTimeout, int32(60)) }},
		{name: "invalid-idle-timeout-on-nlb", ann: nlb(map[string]string{KeyConnectionIdleTimeout: "60"}), want: []string{KeyConnectionIdleTimeout}},

		// cross-zone
		{name: "valid-cross-zone", ann: nlb(map[string]string{KeyCrossZoneLoadBalancing: "true"}),
			check: func(t *testing.T, c *Config) { eq(t, "CrossZone", c.CrossZone, true) }},
		{name: "invalid-cross-zone", ann: map[string]string{KeyCrossZoneLoadBalancing: "enabled"}, want: []string{KeyCrossZoneLoadBalancing}},

		// security groups
		{name: "valid-security-groups", ann: map[string]string{KeySecurityGroups: "sg-0123456789abcdef0, sg-01234567",
			KeyExtraSecurityGroups: "sg-89abcdef"},
			check: func(t *testing.T, c *Config) {
				eq(t, "SecurityGroups", c.SecurityGroups, []string{"sg-0123456789abcdef0", "sg-01234567"})
				eq(t, "ExtraSecurityGroups", c.ExtraSecurityGroups, []string{"sg-89abcdef"})
			}},
		{name: "invalid-security-group-id", ann: map[string]string{KeySecurityGroups: "sg-123,web"}, want: []string{KeySecurityGroups}},
		{name: "invalid-security-groups-empty", ann: map[string]string{KeyExtraSecurityGroups: " , "}, want: []string{KeyExtraSecurityGroups}},
		{name: "invalid-security-groups-duplicate", ann: map[string]string{KeyExtraSecurityGroups: "sg-01234567,sg-01234567"}, want: []string{KeyExtraSecurityGroups}},
		{name: "invalid-extra-security-groups-on-nlb", ann: nlb(map[string]string{KeyExtraSecurityGroups: "sg-01234567"}),
			want:  []string{KeyExtraSecurityGroups},
			check: func(t *testing.T, c *Config) { eq(t, "ExtraSecurityGroups", c.ExtraSecurityGroups, []string(nil)) }},
		{name: "invalid-security-groups-on-nlb", ann: nlb(map[string]string{KeySecurityGroups: "sg-01234567"}), want: []string{KeySecurityGroups}},

		// SSL negotiation policy
		{name: "valid-ssl-negotiation-policy", ann: map[string]string{KeySSLNegotiationPolicy: "ELBSecurityPolicy-TLS-1-2-2017-01"},
			check: func(t *testing.T, c *Config) {
				eq(t, "policy", c.SSLNegotiationPolicy, "ELBSecurityPolicy-TLS-1-2-2017-01")
			}},
		{name: "invalid-ssl-negotiation-policy", ann: map[string]string{KeySSLNegotiationPolicy: "a, b"}, want: []string{KeySSLNegotiationPolicy}},

		// tags
		{name: "valid-tags", ann: map[string]string{KeyAdditionalResourceTags: "team=shop, env=, owner , cost-center = 42"},
			check: func(t *testing.T, c *Config) {
				eq(t, "AdditionalTags", c.AdditionalTags, []KeyValue{{"team", "shop"}, {"env", ""}, {"owner", ""}, {"cost-center", "42"}})
			}},
		{name: "invalid-tags-no-key", ann: map[string]string{KeyAdditionalResourceTags: "a=b,=c"}, want: []string{KeyAdditionalResourceTags}},
		{name: "invalid-tags-duplicate", ann: map[string]string{KeyAdditionalResourceTags: "a=b,a=c"}, want: []string{KeyAdditionalResourceTags}},
		{name: "invalid-tags-two-equals", ann: map[string]string{KeyAdditionalResourceTags: "a=b=c"}, want: []string{KeyAdditionalResourceTags}},
		{name: "invalid-tags-aws-prefix", ann: map[string]string{KeyAdditionalResourceTags: "aws:x=1"}, want: []string{KeyAdditionalResourceTags}},
		{name: "invalid-tags-cluster-tag", ann: map[string]string{KeyAdditionalResourceTags: "kubernetes.io/cluster/other=owned"}, want: []string{KeyAdditionalResourceTags}},
		{name: "invalid-tags-service-name", ann: map[string]string{KeyAdditionalResourceTags: "kubernetes.io/service-name=x/y"}, want: []string{KeyAdditionalResourceTags}},
		{name: "invalid-tags-long-value", ann: map[string]string{KeyAdditionalResourceTags: "a=" + strings.Repeat("v", 257)}, want: []string{KeyAdditionalResourceTags}},

		// health check values
		{name: "invalid-healthcheck-interval", ann: map[string]string{KeyHealthCheckInterval: "abc"}, want: []string{KeyHealthCheckInterval},
			check: func(t *testing.T, c *Config) { eq(t, "Interval", c.HealthCheck.Interval, int32(10)) }},
		{name: "invalid-healthcheck-interval-range", ann: nlb(map[string]string{KeyHealthCheckInterval: "301"}), want: []string{KeyHealthCheckInterval}},
		{name: "invalid-healthcheck-protocol", ann: map[string]string{KeyHealthCheckProtocol: "UDP"}, want: []string{KeyHealthCheckProtocol}},
		{name: "invalid-healthcheck-protocol-ssl-on-nlb", ann: nlb(map[string]string{KeyHealthCheckProtocol: "SSL"}), want: []string{KeyHealthCheckProtocol}},
		{name: "valid-healthcheck-protocol-ssl-on-classic", ann: map[string]string{KeyHealthCheckProtocol: "ssl"},
			check: func(t *testing.T, c *Config) { eq(t, "Protocol", c.HealthCheck.Protocol, "SSL") }},
		{name: "invalid-healthcheck-port", ann: map[string]string{KeyHealthCheckPort: "70000"}, want: []string{KeyHealthCheckPort}},
		{name: "valid-healthcheck-port-traffic-port", mod: local, ann: map[string]string{KeyHealthCheckPort: "traffic-port"},
			check: func(t *testing.T, c *Config) { eq(t, "Port", c.HealthCheck.Port, "traffic-port") }},
		{name: "invalid-healthcheck-path", ann: map[string]string{KeyHealthCheckProtocol: "HTTP", KeyHealthCheckPath: "healthz"}, want: []string{KeyHealthCheckPath}},
		{name: "invalid-healthcheck-healthy-threshold", ann: map[string]string{KeyHealthCheckHealthyThresh: "1"}, want: []string{KeyHealthCheckHealthyThresh}},
		{name: "invalid-healthcheck-unhealthy-threshold", ann: map[string]string{KeyHealthCheckUnhealthyThresh: "11"}, want: []string{KeyHealthCheckUnhealthyThresh}},
		{name: "invalid-healthcheck-timeout", ann: map[string]string{KeyHealthCheckTimeout: "61"}, want: []string{KeyHealthCheckTimeout}},
		{name: "invalid-healthcheck-timeout-not-below-interval", ann: map[string]string{KeyHealthCheckTimeout: "30", KeyHealthCheckInterval: "30"},
			want: []string{KeyHealthCheckTimeout}},
		{name: "invalid-healthcheck-interval-below-default-timeout", ann: map[string]string{KeyHealthCheckInterval: "5"}, want: []string{KeyHealthCheckInterval}},
		{name: "invalid-healthcheck-timeout-syntax-on-nlb", ann: nlb(map[string]string{KeyHealthCheckTimeout: "x"}), want: []string{KeyHealthCheckTimeout}},

		// target group attributes
		{name: "valid-target-group-attributes", ann: nlb(map[string]string{KeyTargetGroupAttributes: "preserve_client_ip.enabled=false,proxy_protocol_v2.enabled=true"}),
			check: func(t *testing.T, c *Config) {
				eq(t, "TargetGroupAttributes", c.TargetGroupAttributes, TargetGroupAttributes{PreserveClientIP: ptr.To(false), ProxyProtocolV2: ptr.To(true)})
			}},
		{name: "invalid-target-group-attributes-key", ann: nlb(map[string]string{KeyTargetGroupAttributes: "stickiness.enabled=true"}), want: []string{KeyTargetGroupAttributes}},
		{name: "invalid-target-group-attributes-value", ann: nlb(map[string]string{KeyTargetGroupAttributes: "proxy_protocol_v2.enabled=yes"}), want: []string{KeyTargetGroupAttributes}},
		{name: "invalid-target-group-attributes-empty-value", ann: nlb(map[string]string{KeyTargetGroupAttributes: "proxy_protocol_v2.enabled="}), want: []string{KeyTargetGroupAttributes}},
		{name: "invalid-target-group-attributes-udp-client-ip", ann: nlb(map[string]string{KeyTargetGroupAttributes: "preserve_client_ip.enabled=false"}),
			mod: allUDP, want: []string{KeyTargetGroupAttributes}},
		{name: "valid-target-group-attributes-udp-client-ip-on", ann: nlb(map[string]string{KeyTargetGroupAttributes: "preserve_client_ip.enabled=true"}), mod: allUDP},
		{name: "invalid-target-group-attributes-on-classic", ann: map[string]string{KeyTargetGroupAttributes: "proxy_protocol_v2.enabled=true"}, want: []string{KeyTargetGroupAttributes}},

		// EIPs and private addresses
		{name: "valid-eip-allocations", ann: nlb(map[string]string{KeyEIPAllocations: "eipalloc-0123456789abcdef0, eipalloc-01234567"}),
			check: func(t *testing.T, c *Config) {
				eq(t, "EIPAllocations", c.EIPAllocations, []string{"eipalloc-0123456789abcdef0", "eipalloc-01234567"})
			}},
		{name: "invalid-eip-allocation-id", ann: nlb(map[string]string{KeyEIPAllocations: "eip-123"}), want: []string{KeyEIPAllocations}},
		{name: "invalid-eip-allocations-internal", ann: nlb(map[string]string{KeyEIPAllocations: "eipalloc-01234567", KeyInternal: "true"}), want: []string{KeyEIPAllocations}},
		{name: "invalid-eip-allocations-count", ann: nlb(map[string]string{KeyEIPAllocations: "eipalloc-01234567",
			KeySubnets: "subnet-01234567,subnet-89abcdef"}), want: []string{KeyEIPAllocations}},
		{name: "invalid-eip-allocations-on-classic", ann: map[string]string{KeyEIPAllocations: "eipalloc-01234567"}, want: []string{KeyEIPAllocations}},
		{name: "valid-private-ipv4-addresses", ann: nlb(map[string]string{KeyPrivateIPv4Addresses: "10.0.1.10, 10.0.2.10", KeyInternal: "true",
			KeySubnets: "subnet-01234567,private-b"}),
			check: func(t *testing.T, c *Config) {
				eq(t, "PrivateIPv4Addresses", c.PrivateIPv4Addresses, []string{"10.0.1.10", "10.0.2.10"})
			}},
		{name: "invalid-private-ipv4-address", ann: nlb(map[string]string{KeyPrivateIPv4Addresses: "10.0.1.300", KeyInternal: "true"}), want: []string{KeyPrivateIPv4Addresses}},
		{name: "invalid-private-ipv6-address", ann: nlb(map[string]string{KeyPrivateIPv4Addresses: "fd00::1", KeyInternal: "true"}), want: []string{KeyPrivateIPv4Addresses}},
		{name: "invalid-private-ipv4-internet-facing", ann: nlb(map[string]string{KeyPrivateIPv4Addresses: "10.0.1.10"}), want: []string{KeyPrivateIPv4Addresses}},
		{name: "invalid-private-ipv4-count", ann: nlb(map[string]string{KeyPrivateIPv4Addresses: "10.0.1.10,10.0.2.10", KeyInternal: "true",
			KeySubnets: "subnet-01234567"}), want: []string{KeyPrivateIPv4Addresses}},

		// target node labels
		{name: "valid-target-node-labels", ann: map[string]string{KeyTargetNodeLabels: "node-role.kubernetes.io/lb=, pool=edge"},
			check: func(t *testing.T, c *Config) {
				eq(t, "TargetNodeLabels", c.TargetNodeLabels, map[string]string{"node-role.kubernetes.io/lb": "", "pool": "edge"})
			}},
		{name: "invalid-target-node-labels-key", ann: map[string]string{KeyTargetNodeLabels: "bad key=x"}, want: []string{KeyTargetNodeLabels}},
		{name: "invalid-target-node-labels-value", ann: map[string]string{KeyTargetNodeLabels: "pool=-edge"}, want: []string{KeyTargetNodeLabels},
			check: func(t *testing.T, c *Config) { eq(t, "TargetNodeLabels", c.TargetNodeLabels, map[string]string(nil)) }},

		// subnets
		{name: "valid-subnets", ann: map[string]string{KeySubnets: "subnet-0123456789abcdef0, public-a"},
			check: func(t *testing.T, c *Config) {
				eq(t, "Subnets", c.Subnets, []string{"subnet-0123456789abcdef0", "public-a"})
			}},
		{name: "invalid-subnet-id", ann: map[string]string{KeySubnets: "subnet-xyz"}, want: []string{KeySubnets}},
		{name: "valid-subnets-blank-is-unset", ann: map[string]string{KeySubnets: " "},
			check: func(t *testing.T, c *Config) { eq(t, "Subnets", c.Subnets, []string(nil)) }},
		{name: "invalid-subnets-only-commas", ann: map[string]string{KeySubnets: ","}, want: []string{KeySubnets}},
		{name: "valid-blank-on-other-type-is-unset", ann: nlb(map[string]string{KeyExtraSecurityGroups: ""})},
		{name: "valid-blank-boolean-is-unset", ann: map[string]string{KeyCrossZoneLoadBalancing: ""}},

		// source ranges
		{name: "valid-source-ranges-annotation", ann: map[string]string{KeySourceRanges: "10.0.0.1/8, 2001:db8::/32"},
			check: func(t *testing.T, c *Config) {
				eq(t, "SourceRanges", c.SourceRanges, []string{"10.0.0.0/8", "2001:db8::/32"})
			}},
		{name: "valid-source-ranges-spec-wins", ann: map[string]string{KeySourceRanges: "not-a-cidr"},
			mod:   func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"192.0.2.0/24"} },
			check: func(t *testing.T, c *Config) { eq(t, "SourceRanges", c.SourceRanges, []string{"192.0.2.0/24"}) }},
		{name: "valid-source-ranges-empty-annotation", ann: map[string]string{KeySourceRanges: " "},
			check: func(t *testing.T, c *Config) { eq(t, "SourceRanges", c.SourceRanges, []string{"0.0.0.0/0"}) }},
		{name: "invalid-source-ranges-annotation", ann: map[string]string{KeySourceRanges: "10.0.0.0/8,10.0.0.0"}, want: []string{KeySourceRanges},
			check: func(t *testing.T, c *Config) { eq(t, "SourceRanges", c.SourceRanges, []string(nil)) }},
		{name: "invalid-source-ranges-spec", mod: func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/33"} },
			want: []string{FieldLoadBalancerSourceRanges}},
	})
}

func allUDP(s *corev1.Service) {
	for i := range s.Spec.Ports {
		s.Spec.Ports[i].Protocol = corev1.ProtocolUDP
	}
}

func TestListeners(t *testing.T) {
	listeners := func(want ...Listener) func(*testing.T, *Config) {
		return func(t *testing.T, c *Config) { eq(t, "Listeners", c.Listeners, want) }
	}
	l := func(name string, port int32, proto, backend, cert string) Listener {
		return Listener{Name: name, Port: port, NodePort: 30000 + port, Protocol: proto, BackendProtocol: backend, CertificateARN: cert}
	}
	runCases(t, []parseCase{
		{name: "valid-classic-cert-all-ports", ann: map[string]string{KeySSLCert: testCert},
			check: listeners(l("http", 80, "SSL", "TCP", testCert), l("https", 443, "SSL", "TCP", testCert))},
		{name: "valid-classic-cert-ssl-port-by-name", ann: map[string]string{KeySSLCert: testCert, KeySSLPorts: "HTTPS"},
			check: listeners(l("http", 80, "TCP", "TCP", ""), l("https", 443, "SSL", "TCP", testCert))},
		{name: "valid-classic-cert-http-backend", ann: map[string]string{KeySSLCert: testCert, KeySSLPorts: "443", KeyBackendProtocol: "http"},
			check: listeners(l("http", 80, "HTTP", "HTTP", ""), l("https", 443, "HTTPS", "HTTP", testCert))},
		{name: "valid-classic-cert-https-backend", ann: map[string]string{KeySSLCert: testCert, KeySSLPorts: "443", KeyBackendProtocol: "https"},
			check: listeners(l("http", 80, "TCP", "TCP", ""), l("https", 443, "HTTPS", "HTTPS", testCert))},
		{name: "valid-classic-cert-ssl-backend", ann: map[string]string{KeySSLCert: testCert, KeySSLPorts: "443", KeyBackendProtocol: "ssl"},
			check: listeners(l("http", 80, "TCP", "TCP", ""), l("https", 443, "SSL", "SSL", testCert))},
		{name: "valid-classic-cert-tcp-backend", ann: map[string]string{KeySSLCert: testCert, KeyBackendProtocol: "tcp"},
			check: listeners(l("http", 80, "SSL", "TCP", testCert), l("https", 443, "SSL", "TCP", testCert))},
		{name: "valid-classic-https-backend-without-cert", ann: map[string]string{KeyBackendProtocol: "https"},
			check: listeners(l("http", 80, "TCP", "TCP", ""), l("https", 443, "TCP", "TCP", ""))},
		{name: "valid-classic-iam-cert", ann: map[string]string{KeySSLCert: "arn:aws:iam::123456789012:server-certificate/prod/web", KeySSLPorts: "*"}},
		{name: "valid-ssl-ports-unknown-entry-ignored", ann: map[string]string{KeySSLCert: testCert, KeySSLPorts: "8443"},
			check: listeners(l("http", 80, "TCP", "TCP", ""), l("https", 443, "TCP", "TCP", ""))},
		{name: "valid-nlb-tls", ann: nlb(map[string]string{KeySSLCert: testCert, KeySSLPorts: "https"}),
			check: listeners(l("http", 80, "TCP", "TCP", ""), l("https", 443, "TLS", "TCP", testCert))},
		{name: "valid-nlb-tls-ssl-backend", ann: nlb(map[string]string{KeySSLCert: testCert, KeySSLPorts: "443", KeyBackendProtocol: "ssl"}),
			check: listeners(l("http", 80, "TCP", "TCP", ""), l("https", 443, "TLS", "TLS", testCert))},
		{name: "valid-nlb-http-backend-has-no-effect", ann: nlb(map[string]string{KeyBackendProtocol: "http"}),
			check: listeners(l("http", 80, "TCP", "TCP", ""), l("https", 443, "TCP", "TCP", ""))},
		{name: "valid-nlb-udp-never-tls", ann: nlb(map[string]string{KeySSLCert: testCert}), mod: allUDP,
			check: listeners(l("http", 80, "UDP", "UDP", ""), l("https", 443, "UDP", "UDP", ""))},
		{name: "invalid-ssl-cert", ann: map[string]string{KeySSLCert: "my-cert"}, want: []string{KeySSLCert},
			check: listeners(l("http", 80, "TCP", "TCP", ""), l("https", 443, "TCP", "TCP", ""))},
		{name: "invalid-ssl-ports-number", ann: map[string]string{KeySSLCert: testCert, KeySSLPorts: "443,99999"}, want: []string{KeySSLPorts}},
		{name: "invalid-ssl-ports-star-in-list", ann: map[string]string{KeySSLCert: testCert, KeySSLPorts: "443,*"}, want: []string{KeySSLPorts}},
		{name: "invalid-backend-protocol", ann: map[string]string{KeyBackendProtocol: "grpc"}, want: []string{KeyBackendProtocol}},
		{name: "invalid-backend-protocol-upper-case", ann: map[string]string{KeyBackendProtocol: "HTTP"}, want: []string{KeyBackendProtocol}},
	})
}

func TestServiceRules(t *testing.T) {
	runCases(t, []parseCase{
		{name: "invalid-load-balancer-ip", mod: func(s *corev1.Service) { s.Spec.LoadBalancerIP = "203.0.113.10" }, want: []string{FieldLoadBalancerIP}},
		{name: "invalid-session-affinity", mod: func(s *corev1.Service) { s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP },
			want: []string{FieldSessionAffinity}},
		{name: "valid-session-affinity-empty", mod: func(s *corev1.Service) { s.Spec.SessionAffinity = "" }},
		{name: "invalid-no-ports", mod: func(s *corev1.Service) { s.Spec.Ports = nil }, want: []string{FieldPorts}},
		{name: "invalid-mixed-protocols-nlb", ann: nlb(nil), mod: func(s *corev1.Service) { s.Spec.Ports[1].Protocol = corev1.ProtocolUDP },
			want: []string{FieldPorts}},
		{name: "invalid-classic-udp", mod: allUDP, want: []string{FieldPorts, FieldPorts}},
		{name: "invalid-classic-mixed-udp", mod: func(s *corev1.Service) { s.Spec.Ports[1].Protocol = corev1.ProtocolUDP },
			want: []string{FieldPorts, FieldPorts}},
		{name: "valid-nlb-udp", ann: nlb(nil), mod: allUDP},
		{name: "valid-empty-protocol-is-tcp", mod: func(s *corev1.Service) { s.Spec.Ports[0].Protocol = "" }},
		{name: "invalid-nlb-sctp", ann: nlb(nil), mod: func(s *corev1.Service) {
			for i := range s.Spec.Ports {
				s.Spec.Ports[i].Protocol = corev1.ProtocolSCTP
			}
		}, want: []string{FieldPorts, FieldPorts}},
		{name: "invalid-type-changed-to-nlb", ann: nlb(nil), mod: ingress("a8a5a2c4e3b1f4c529d1e0f4b6a7c8d9-123.us-east-1.elb.amazonaws.com"),
			want: []string{KeyType}},
		{name: "invalid-type-changed-to-classic", mod: ingress("a8a5a2c4e3b1f4c529d1e0f4b6a7c8d9-0123456789abcdef.elb.us-east-1.amazonaws.com"),
			want: []string{KeyType}},
		{name: "invalid-type-changed-to-nlb-china", ann: nlb(nil), mod: ingress("a8a5a2c4e3b1f4c529d1e0f4b6a7c8d9.cn-north-1.elb.amazonaws.com.cn"),
			want: []string{KeyType}},
		{name: "valid-type-unchanged-china-classic", mod: ingress("a8a5a2c4e3b1f4c529d1e0f4b6a7c8d9.cn-north-1.elb.amazonaws.com.cn")},
		{name: "valid-type-unchanged-nlb", ann: nlb(nil), mod: ingress("a8a5a2c4e3b1f4c529d1e0f4b6a7c8d9-0123456789abcdef.elb.us-east-1.amazonaws.com")},
		{name: "valid-unknown-hostname", ann: nlb(nil), mod: ingress("lb.example.test")},
	})
}

func ingress(host string) func(*corev1.Service) {
	return func(s *corev1.Service) {
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{Hostname: host}}
	}
}

func TestAllProblemsAtOnce(t *testing.T) {
	svc := service(nlb(map[string]string{
		KeyHealthCheckInterval:    "abc",
		KeyExtraSecurityGroups:    "sg-01234567",
		KeyAdditionalResourceTags: "=x",
		KeyCrossZoneLoadBalancing: "true",
	}))
	svc.Spec.LoadBalancerIP = "1.2.3.4"
	cfg, problems := Parse(svc, lbnames.KindNLB)
	if len(problems) != 4 {
		t.Fatalf("got %d problems, want 4: %v", len(problems), problems)
	}
	if !cfg.CrossZone {
		t.Error("a valid annotation was not applied next to invalid ones")
	}
	var msg string
	for _, p := range problems {
		if p.Annotation == KeyHealthCheckInterval {
			msg = p.String()
		}
	}
	want := `service.beta.kubernetes.io/aws-load-balancer-healthcheck-interval: "abc" is not a number of seconds (want 5-300)`
	if msg != want {
		t.Errorf("message = %s\nwant      %s", msg, want)
	}
	blocking := 0
	for _, p := range problems {
		if p.Blocking() {
			blocking++
		}
	}
	if blocking != 1 {
		t.Errorf("%d blocking problems, want 1 (spec.loadBalancerIP)", blocking)
	}
}

func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range Annotations() {
		if seen[a.Key] {
			t.Errorf("%s registered twice", a.Key)
		}
		seen[a.Key] = true
		if !strings.HasPrefix(a.Key, "service.beta.kubernetes.io/aws-load-balancer-") && a.Key != KeySourceRanges {
			t.Errorf("%s: not a service.beta.kubernetes.io/aws-load-balancer-* key", a.Key)
		}
		if a.Syntax == "" || a.Default == "" || a.Meaning == "" {
			t.Errorf("%s: syntax, default and meaning are required", a.Key)
		}
		if a.Applies != AppliesBoth && a.Applies != AppliesClassic && a.Applies != AppliesNLB {
			t.Errorf("%s: applies to %q", a.Key, a.Applies)
		}
		if got, ok := Lookup(a.Key); !ok || got != a {
			t.Errorf("Lookup(%s) = %v, %v", a.Key, got, ok)
		}
	}
	// The wire contract: these keys, verified against
	// kubernetes/cloud-provider-aws pkg/providers/v1, must never change.
	for _, k := range []string{
		"service.beta.kubernetes.io/aws-load-balancer-type",
		"service.beta.kubernetes.io/aws-load-balancer-internal",
		"service.beta.kubernetes.io/aws-load-balancer-proxy-protocol",
		"service.beta.kubernetes.io/aws-load-balancer-access-log-emit-interval",
		"service.beta.kubernetes.io/aws-load-balancer-access-log-enabled",
		"service.beta.kubernetes.io/aws-load-balancer-access-log-s3-bucket-name",
		"service.beta.kubernetes.io/aws-load-balancer-access-log-s3-bucket-prefix",
		"service.beta.kubernetes.io/aws-load-balancer-connection-draining-enabled",
		"service.beta.kubernetes.io/aws-load-balancer-connection-draining-timeout",
		"service.beta.kubernetes.io/aws-load-balancer-connection-idle-timeout",
		"service.beta.kubernetes.io/aws-load-balancer-cross-zone-load-balancing-enabled",
		"service.beta.kubernetes.io/aws-load-balancer-extra-security-groups",
		"service.beta.kubernetes.io/aws-load-balancer-security-groups",
		"service.beta.kubernetes.io/aws-load-balancer-ssl-cert",
		"service.beta.kubernetes.io/aws-load-balancer-ssl-ports",
		"service.beta.kubernetes.io/aws-load-balancer-ssl-negotiation-policy",
		"service.beta.kubernetes.io/aws-load-balancer-backend-protocol",
		"service.beta.kubernetes.io/aws-load-balancer-additional-resource-tags",
		"service.beta.kubernetes.io/aws-load-balancer-healthcheck-protocol",
		"service.beta.kubernetes.io/aws-load-balancer-healthcheck-port",
		"service.beta.kubernetes.io/aws-load-balancer-healthcheck-path",
		"service.beta.kubernetes.io/aws-load-balancer-healthcheck-healthy-threshold",
		"service.beta.kubernetes.io/aws-load-balancer-healthcheck-unhealthy-threshold",
		"service.beta.kubernetes.io/aws-load-balancer-healthcheck-interval",
		"service.beta.kubernetes.io/aws-load-balancer-healthcheck-timeout",
		"service.beta.kubernetes.io/aws-load-balancer-target-group-attributes",
		"service.beta.kubernetes.io/aws-load-balancer-eip-allocations",
		"service.beta.kubernetes.io/aws-load-balancer-private-ipv4-addresses",
		"service.beta.kubernetes.io/aws-load-balancer-target-node-labels",
		"service.beta.kubernetes.io/aws-load-balancer-subnets",
		"service.beta.kubernetes.io/load-balancer-source-ranges",
	} {
		if !seen[k] {
			t.Errorf("wire-contract key %s is not in the registry", k)
		}
		delete(seen, k)
	}
	for k := range seen {
		t.Errorf("%s is registered but not in the wire-contract list of this test", k)
	}
}
