package lbconfig

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

// Problem is one reason a Service's load-balancer configuration cannot be
// used as written. Its String form is meant as the message of a Warning
// event on the Service.
type Problem struct {
	// Annotation is the annotation key, or the spec field path (FieldPorts
	// and so on), the problem is about.
	Annotation string
	// Reason says what is wrong and what is accepted.
	Reason string
}

// String returns "<annotation>: <reason>".
func (p Problem) String() string { return p.Annotation + ": " + p.Reason }

// Blocking reports whether the problem stops the load balancer from being
// created or updated at all (a spec field or the type annotation), rather
// than only what one annotation governs.
func (p Problem) Blocking() bool {
	return strings.HasPrefix(p.Annotation, "spec.") || p.Annotation == KeyType
}

// Upstream's ELB defaults; they are defaults users see, so they are kept.
const (
	clbHealthyThreshold   = 2
	clbUnhealthyThreshold = 6
	clbTimeout            = 5
	clbInterval           = 10
	clbIdleTimeout        = 60
	clbAccessLogInterval  = 60

	nlbLocalInterval    = 10
	nlbLocalThreshold   = 2
	nlbClusterInterval  = 30
	nlbClusterThreshold = 3

	localHealthCheckPath   = "/healthz"
	defaultHealthCheckPath = "/"
)

// parser carries one Parse call.
type parser struct {
	svc      *corev1.Service
	ann      map[string]string
	kind     lbnames.LoadBalancerKind
	cfg      *Config
	problems []Problem
}

func (p *parser) problem(key, format string, args ...any) {
	p.problems = append(p.problems, Problem{Annotation: key, Reason: fmt.Sprintf(format, args...)})
	p.cfg.invalid[key] = true
}

// get returns an annotation's value if it is set, not blank, and applies
// to the kind. A blank value counts as unset, as it does upstream.
func (p *parser) get(key string) (string, bool) {
	v, ok := p.ann[key]
	if !ok || strings.TrimSpace(v) == "" {
		return "", false
	}
	if a, known := Lookup(key); known && !a.Applies.Has(p.kind) {
		return "", false
	}
	return v, true
}

// Parse reads the desired load-balancer configuration of svc for kind (from
// lbnames.Kind). It returns every Problem at once, and a Config whose
// fields governed by a bad annotation keep their defaults (Config.Valid
// says which). For a Service that is not this CCM's (lbnames.KindNotOurs)
// it returns nil, nil.
func Parse(svc *corev1.Service, kind lbnames.LoadBalancerKind) (*Config, []Problem) {
	if svc == nil || (kind != lbnames.KindClassic && kind != lbnames.KindNLB) {
		return nil, nil
	}
	p := &parser{
		svc:  svc,
		ann:  svc.Annotations,
		kind: kind,
		cfg:  &Config{Kind: kind, Name: lbnames.LoadBalancerName(svc), Scheme: SchemeInternetFacing, invalid: map[string]bool{}},
	}
	p.serviceRules()
	p.notApplicable()
	p.scheme()
	p.listeners()
	p.sourceRanges()
	p.attributes()
	p.securityGroups()
	p.tags()
	p.healthCheck()
	p.nlbOnly()
	p.targetsAndSubnets()
	return p.cfg, p.problems
}

var nlbHostnameRE = regexp.MustCompile(`\.elb\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$`)

// serviceRules checks the spec-level rules of both types.
func (p *parser) serviceRules() {
	spec := p.svc.Spec
	if spec.LoadBalancerIP != "" {
		p.problem(FieldLoadBalancerIP, "%q is set, but AWS load balancers cannot be given an address this way (remove it; NLB: use %s or %s)",
			spec.LoadBalancerIP, KeyEIPAllocations, KeyPrivateIPv4Addresses)
	}
	if spec.SessionAffinity != "" && spec.SessionAffinity != corev1.ServiceAffinityNone {
		p.problem(FieldSessionAffinity, "%q is not supported by AWS load balancers (want None)", spec.SessionAffinity)
	}
	if len(spec.Ports) == 0 {
		p.problem(FieldPorts, "the Service has no ports")
	}
	var first corev1.Protocol
	for i, port := range spec.Ports {
		proto := port.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		if i == 0 {
			first = proto
		} else if proto != first {
			p.problem(FieldPorts, "mixed protocols (%s and %s) are not supported (use one protocol, or two Services)", first, proto)
			break
		}
	}
	for _, port := range spec.Ports {
		proto := port.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		switch {
		case p.kind == lbnames.KindClassic && proto != corev1.ProtocolTCP:
			p.problem(FieldPorts, "port %d is %s, but a Classic ELB supports only TCP (set %s: nlb for UDP)", port.Port, proto, KeyType)
		case p.kind == lbnames.KindNLB && proto != corev1.ProtocolTCP && proto != corev1.ProtocolUDP:
			p.problem(FieldPorts, "port %d is %s, but an NLB supports only TCP and UDP", port.Port, proto)
		}
	}
	// The type cannot change once AWS has a load balancer for the Service.
	if ing := p.svc.Status.LoadBalancer.Ingress; len(ing) > 0 {
		h := strings.ToLower(ing[0].Hostname)
		isNLB := nlbHostnameRE.MatchString(h)
		isCLB := !isNLB && (strings.HasSuffix(h, ".elb.amazonaws.com") || strings.HasSuffix(h, ".elb.amazonaws.com.cn"))
		switch {
		case isNLB && p.kind == lbnames.KindClassic:
			p.problem(KeyType, "the Service already has an NLB (%s); the type cannot change after creation (set it back to nlb, or recreate the Service)", ing[0].Hostname)
		case isCLB && p.kind == lbnames.KindNLB:
			p.problem(KeyType, "the Service already has a Classic ELB (%s); the type cannot change after creation (remove the annotation, or recreate the Service)", ing[0].Hostname)
		}
	}
}

// notApplicable reports annotations set for the other load-balancer type.
func (p *parser) notApplicable() {
	for _, a := range Annotations() {
		if v := p.ann[a.Key]; strings.TrimSpace(v) == "" || a.Applies.Has(p.kind) {
			continue
		}
		if p.kind == lbnames.KindNLB {
			p.problem(a.Key, "applies only to Classic ELBs, not to NLBs (remove it)")
		} else {
			p.problem(a.Key, "applies only to NLBs (%s: nlb), not to Classic ELBs (remove it)", KeyType)
		}
	}
}

func (p *parser) scheme() {
	// Exactly upstream's rule, blank values included: anything but "" and "false".
	if v := p.ann[KeyInternal]; v != "" && v != "false" {
		p.cfg.Scheme = SchemeInternal
	}
}

func (p *parser) listeners() {
	sslPorts := PortSet{All: true}
	if v, ok := p.get(KeySSLPorts); ok {
		ps, err := parsePortSet(v)
		if err != nil {
			p.problem(KeySSLPorts, "%v", err)
		} else {
			sslPorts = ps
		}
	}
	var cert string
	if v, ok := p.get(KeySSLCert); ok {
		c, err := parseCertARN(v)
		if err != nil {
			p.problem(KeySSLCert, "%v", err)
		} else {
			cert = c
		}
	}
	backend := ""
	if v, ok := p.get(KeyBackendProtocol); ok {
		switch v {
		case "http", "https", "ssl", "tcp":
			backend = v
		default:
			p.problem(KeyBackendProtocol, "%s is not a backend protocol (want http, https, ssl or tcp)", quote(v))
		}
	}
	if v, ok := p.get(KeySSLNegotiationPolicy); ok {
		if v = strings.TrimSpace(v); v == "" || strings.ContainsAny(v, " ,") {
			p.problem(KeySSLNegotiationPolicy, "%s is not a policy name (want e.g. ELBSecurityPolicy-TLS13-1-2-2021-06)", quote(v))
		} else {
			p.cfg.SSLNegotiationPolicy = v
		}
	}
	for _, port := range p.svc.Spec.Ports {
		if port.NodePort == 0 {
			continue // not allocated yet (or allocateLoadBalancerNodePorts=false): nothing to target
		}
		proto := strings.ToUpper(string(port.Protocol))
		if proto == "" {
			proto = ProtocolTCP
		}
		l := Listener{Name: port.Name, Port: port.Port, NodePort: port.NodePort, Protocol: proto, BackendProtocol: proto}
		secure := cert != "" && sslPorts.Has(port.Port, port.Name)
		if p.kind == lbnames.KindClassic {
			switch {
			case secure && backend == "":
				l.Protocol, l.BackendProtocol, l.CertificateARN = ProtocolSSL, ProtocolTCP, cert
			case secure:
				// http and https backends get an HTTPS listener, ssl and tcp an SSL one.
				l.Protocol, l.BackendProtocol, l.CertificateARN = ProtocolSSL, strings.ToUpper(backend), cert
				if backend == "http" || backend == "https" {
					l.Protocol = ProtocolHTTPS
				}
			case backend == "http":
				l.Protocol, l.BackendProtocol = ProtocolHTTP, ProtocolHTTP
			}
		} else if secure && proto != ProtocolUDP {
			l.Protocol, l.CertificateARN = ProtocolTLS, cert
			if backend == "ssl" {
				l.BackendProtocol = ProtocolTLS
			}
		}
		p.cfg.Listeners = append(p.cfg.Listeners, l)
	}
}

func (p *parser) sourceRanges() {
	if spec := p.svc.Spec.LoadBalancerSourceRanges; len(spec) > 0 {
		r, err := parseCIDRs(spec)
		if err != nil {
			p.problem(FieldLoadBalancerSourceRanges, "%v", err)
			return
		}
		p.cfg.SourceRanges = r
		return
	}
	if v, ok := p.get(KeySourceRanges); ok {
		if entries := parseList(v); len(entries) > 0 {
			r, err := parseCIDRs(entries)
			if err != nil {
				p.problem(KeySourceRanges, "%v", err)
				return
			}
			p.cfg.SourceRanges = r
			return
		}
	}
	p.cfg.SourceRanges = []string{DefaultSourceRange}
}

// boolean parses a boolean annotation into dst when set.
func (p *parser) boolean(key string, dst *bool) {
	if v, ok := p.get(key); ok {
		b, err := parseBool(v)
		if err != nil {
			p.problem(key, "%v", err)
			return
		}
		*dst = b
	}
}

// integer parses an integer annotation in [lo, hi] into dst when set.
func (p *parser) integer(key string, lo, hi int32, what string, dst *int32) bool {
	v, ok := p.get(key)
	if !ok {
		return false
	}
	n, err := parseInt(v, lo, hi, what)
	if err != nil {
		p.problem(key, "%v", err)
		return false
	}
	*dst = n
	return true
}

// attributes parses the load-balancer attributes: proxy protocol, access
// logs, connection draining, idle timeout, cross-zone.
func (p *parser) attributes() {
	if v, ok := p.get(KeyProxyProtocol); ok {
		if strings.TrimSpace(v) != "*" {
			p.problem(KeyProxyProtocol, "%s is not supported (want *, for all backends)", quote(v))
		} else {
			p.cfg.ProxyProtocol = true
		}
	}
	var logs bool
	p.boolean(KeyAccessLogEnabled, &logs)
	al := AccessLogs{}
	if p.kind == lbnames.KindClassic {
		al.EmitInterval = clbAccessLogInterval
	}
	if v, ok := p.get(KeyAccessLogEmitInterval); ok {
		switch strings.TrimSpace(v) {
		case "5":
			al.EmitInterval = 5
		case "60":
			al.EmitInterval = 60
		default:
			p.problem(KeyAccessLogEmitInterval, "%s is not an emit interval (want 5 or 60 minutes)", quote(v))
		}
	}
	if v, ok := p.get(KeyAccessLogS3BucketName); ok {
		b, err := parseS3BucketName(v)
		if err != nil {
			p.problem(KeyAccessLogS3BucketName, "%v", err)
		}
		al.Bucket = b
	} else if logs {
		p.problem(KeyAccessLogS3BucketName, "is required when %s is true", KeyAccessLogEnabled)
	}
	if v, ok := p.get(KeyAccessLogS3BucketPrefix); ok {
		al.Prefix = strings.Trim(strings.TrimSpace(v), "/")
	}
	if logs && al.Bucket != "" {
		p.cfg.AccessLogs = &al
	}

	p.boolean(KeyConnectionDrainingEnabled, &p.cfg.ConnectionDrainingEnabled)
	p.integer(KeyConnectionDrainingTimeout, 1, 3600, "a number of seconds", &p.cfg.ConnectionDrainingTimeout)
	if p.kind == lbnames.KindClassic {
		p.cfg.IdleTimeout = clbIdleTimeout
	}
	p.integer(KeyConnectionIdleTimeout, 1, 4000, "a number of seconds", &p.cfg.IdleTimeout)
	p.boolean(KeyCrossZoneLoadBalancing, &p.cfg.CrossZone)
}

func (p *parser) securityGroups() {
	for _, x := range []struct {
		key string
		dst *[]string
	}{{KeySecurityGroups, &p.cfg.SecurityGroups}, {KeyExtraSecurityGroups, &p.cfg.ExtraSecurityGroups}} {
		v, ok := p.get(x.key)
		if !ok {
			continue
		}
		ids, err := parseIDs(v, securityGroupIDRE, "security group ID (want sg- and 8 or 17 hex digits)")
		if err != nil {
			p.problem(x.key, "%v", err)
			continue
		}
		*x.dst = ids
	}
}

func (p *parser) tags() {
	if v, ok := p.get(KeyAdditionalResourceTags); ok {
		t, err := parseTags(v)
		if err != nil {
			p.problem(KeyAdditionalResourceTags, "%v", err)
			return
		}
		p.cfg.AdditionalTags = t
	}
}

// healthCheck applies the defaults of §5.6 of the upstream inventory for
// the Service's externalTrafficPolicy, then the annotations.
func (p *parser) healthCheck() {
	local := p.svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal &&
		p.svc.Spec.HealthCheckNodePort != 0
	hc := &p.cfg.HealthCheck
	switch {
	case p.kind == lbnames.KindClassic && local:
		*hc = HealthCheck{Protocol: ProtocolHTTP, Port: fmt.Sprint(p.svc.Spec.HealthCheckNodePort), Path: localHealthCheckPath,
			Interval: clbInterval, Timeout: clbTimeout, HealthyThreshold: clbHealthyThreshold, UnhealthyThreshold: clbUnhealthyThreshold}
	case p.kind == lbnames.KindClassic:
		*hc = HealthCheck{Protocol: ProtocolTCP, Port: HealthCheckTrafficPort,
			Interval: clbInterval, Timeout: clbTimeout, HealthyThreshold: clbHealthyThreshold, UnhealthyThreshold: clbUnhealthyThreshold}
		if b := strings.ToLower(p.ann[KeyBackendProtocol]); b == "https" || b == "ssl" {
			hc.Protocol = ProtocolSSL
		}
	case local:
		*hc = HealthCheck{Protocol: ProtocolHTTP, Port: fmt.Sprint(p.svc.Spec.HealthCheckNodePort), Path: localHealthCheckPath,
			Interval: nlbLocalInterval, HealthyThreshold: nlbLocalThreshold, UnhealthyThreshold: nlbLocalThreshold}
	default:
		*hc = HealthCheck{Protocol: ProtocolTCP, Port: HealthCheckTrafficPort,
			Interval: nlbClusterInterval, HealthyThreshold: nlbClusterThreshold, UnhealthyThreshold: nlbClusterThreshold}
	}
	if v, ok := p.get(KeyHealthCheckProtocol); ok {
		proto := strings.ToUpper(strings.TrimSpace(v))
		switch {
		case proto == ProtocolTCP || proto == ProtocolHTTP || proto == ProtocolHTTPS,
			proto == ProtocolSSL && p.kind == lbnames.KindClassic:
			hc.Protocol = proto
		case p.kind == lbnames.KindClassic:
			p.problem(KeyHealthCheckProtocol, "%s is not a health-check protocol (want TCP, HTTP, HTTPS or SSL)", quote(v))
		default:
			p.problem(KeyHealthCheckProtocol, "%s is not a health-check protocol (want TCP, HTTP or HTTPS)", quote(v))
		}
	}
	if hc.Protocol == ProtocolTCP || hc.Protocol == ProtocolSSL {
		hc.Path = ""
	} else if hc.Path == "" {
		hc.Path = defaultHealthCheckPath
	}
	if v, ok := p.get(KeyHealthCheckPort); ok {
		port, err := parseHealthCheckPort(v)
		if err != nil {
			p.problem(KeyHealthCheckPort, "%v", err)
		} else {
			hc.Port = port
		}
	}
	if v, ok := p.get(KeyHealthCheckPath); ok {
		path, err := parseHealthCheckPath(v)
		switch {
		case err != nil:
			p.problem(KeyHealthCheckPath, "%v", err)
		case hc.Path != "":
			hc.Path = path
		}
	}
	p.integer(KeyHealthCheckHealthyThresh, 2, 10, "a number of checks", &hc.HealthyThreshold)
	p.integer(KeyHealthCheckUnhealthyThresh, 2, 10, "a number of checks", &hc.UnhealthyThreshold)
	p.integer(KeyHealthCheckInterval, 5, 300, "a number of seconds", &hc.Interval)
	if p.kind == lbnames.KindClassic {
		timeoutSet := p.integer(KeyHealthCheckTimeout, 2, 60, "a number of seconds", &hc.Timeout)
		if p.cfg.Valid(KeyHealthCheckInterval) && p.cfg.Valid(KeyHealthCheckTimeout) && hc.Timeout >= hc.Interval {
			key := KeyHealthCheckInterval
			if timeoutSet {
				key = KeyHealthCheckTimeout
			}
			p.problem(key, "timeout %ds must be less than the interval %ds", hc.Timeout, hc.Interval)
		}
	} else {
		// NLB: sent only when set (upstream parses it but never sends it);
		// AWS's default depends on the protocol. AWS allows 2-120 s.
		p.integer(KeyHealthCheckTimeout, 2, 120, "a number of seconds", &hc.Timeout)
	}
}

// nlbOnly parses the NLB-only annotations.
func (p *parser) nlbOnly() {
	if v, ok := p.get(KeyTargetGroupAttributes); ok {
		hasUDP := false
		for _, port := range p.svc.Spec.Ports {
			hasUDP = hasUDP || port.Protocol == corev1.ProtocolUDP
		}
		a, err := parseTargetGroupAttributes(v, hasUDP)
		if err != nil {
			p.problem(KeyTargetGroupAttributes, "%v", err)
		} else {
			p.cfg.TargetGroupAttributes = a
		}
	}
	if v, ok := p.get(KeyEIPAllocations); ok {
		ids, err := parseIDs(v, eipAllocationRE, "EIP allocation ID (want eipalloc- and 8 or 17 hex digits)")
		switch {
		case err != nil:
			p.problem(KeyEIPAllocations, "%v", err)
		case p.cfg.Scheme == SchemeInternal:
			p.problem(KeyEIPAllocations, "an internal NLB cannot have Elastic IPs (use %s, or make it internet-facing)", KeyPrivateIPv4Addresses)
		default:
			p.cfg.EIPAllocations = ids
		}
	}
	if v, ok := p.get(KeyPrivateIPv4Addresses); ok {
		ips, err := parseIPv4s(v)
		switch {
		case err != nil:
			p.problem(KeyPrivateIPv4Addresses, "%v", err)
		case p.cfg.Scheme != SchemeInternal:
			p.problem(KeyPrivateIPv4Addresses, "only an internal NLB can have private addresses (set %s: \"true\", or use %s)", KeyInternal, KeyEIPAllocations)
		default:
			p.cfg.PrivateIPv4Addresses = ips
		}
	}
}

func (p *parser) targetsAndSubnets() {
	if v, ok := p.get(KeyTargetNodeLabels); ok {
		sel, err := parseLabelSelector(v)
		if err != nil {
			p.problem(KeyTargetNodeLabels, "%v", err)
		} else {
			p.cfg.TargetNodeLabels = sel
		}
	}
	if v, ok := p.get(KeySubnets); ok {
		s, err := parseSubnets(v)
		if err != nil {
			p.problem(KeySubnets, "%v", err)
			return
		}
		p.cfg.Subnets = s
	}
	// With explicit subnets the one-address-per-subnet rule can be checked
	// now; with discovered subnets the reconciler checks it.
	if n := len(p.cfg.Subnets); n > 0 {
		if k := len(p.cfg.EIPAllocations); k > 0 && k != n {
			p.problem(KeyEIPAllocations, "lists %d allocations for %d subnets in %s (want one per subnet)", k, n, KeySubnets)
			p.cfg.EIPAllocations = nil
		}
		if k := len(p.cfg.PrivateIPv4Addresses); k > 0 && k != n {
			p.problem(KeyPrivateIPv4Addresses, "lists %d addresses for %d subnets in %s (want one per subnet)", k, n, KeySubnets)
			p.cfg.PrivateIPv4Addresses = nil
		}
	}
}
