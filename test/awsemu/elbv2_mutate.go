package awsemu

import (
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Mutating ELBv2 calls for Network load balancers: load balancers,
// listeners and attributes (target groups are in elbv2_targets.go, tags in
// elb_tags.go).

// v2Mapping is the address part of a SubnetMapping.
type v2Mapping struct {
	allocationID, privateIP string
}

type xmlV2LBAddress struct {
	AllocationID       string `xml:"AllocationId,omitempty"`
	PrivateIPv4Address string `xml:"PrivateIPv4Address,omitempty"`
}

func (m v2Mapping) xml() []xmlV2LBAddress {
	if m == (v2Mapping{}) {
		return nil
	}
	return []xmlV2LBAddress{{AllocationID: m.allocationID, PrivateIPv4Address: m.privateIP}}
}

// Default attributes, as AWS reports them for a Network load balancer and
// a TCP instance target group.
var (
	nlbAttributeDefaults = map[string]string{
		"deletion_protection.enabled":            "false",
		"load_balancing.cross_zone.enabled":      "false",
		"access_logs.s3.enabled":                 "false",
		"access_logs.s3.bucket":                  "",
		"access_logs.s3.prefix":                  "",
		"ipv6.deny_all_igw_traffic":              "false",
		"dns_record.client_routing_policy":       "any_availability_zone",
		"zonal_shift.config.enabled":             "false",
		"secondary_ips.auto_assigned.per_subnet": "0",
		"health_check_logs.s3.enabled":           "false",
	}
	tgAttributeDefaults = map[string]string{
		"deregistration_delay.timeout_seconds":                           "300",
		"deregistration_delay.connection_termination.enabled":            "false",
		"stickiness.enabled":                                             "false",
		"stickiness.type":                                                "source_ip",
		"proxy_protocol_v2.enabled":                                      "false",
		"preserve_client_ip.enabled":                                     "true",
		"load_balancing.cross_zone.enabled":                              "use_load_balancer_configuration",
		"target_health_state.unhealthy.connection_termination.enabled":   "true",
		"target_health_state.unhealthy.draining_interval_seconds":        "0",
		"target_group_health.dns_failover.minimum_healthy_targets.count": "1",
	}
)

// v2LB finds the load balancer named by LoadBalancerArn. Callers hold s.mu.
func (s *elbState) v2LB(form url.Values) (*lbRec, *apiError) {
	arn := form.Get("LoadBalancerArn")
	if arn == "" {
		return nil, errMissingParameter("LoadBalancerArn")
	}
	lb, ok := s.v2.get(arn)
	if !ok {
		return nil, errLBNotFound("Load balancer '%s' not found", arn)
	}
	return lb, nil
}

type elbv2LoadBalancersResult struct {
	LoadBalancers []xmlV2LoadBalancer `xml:"LoadBalancers>member"`
}

func (s *elbState) createV2LoadBalancer(form url.Values) (any, *apiError) {
	name := form.Get("Name")
	if !lbNameRE.MatchString(name) || strings.HasPrefix(name, "internal-") {
		return nil, errELBValidation("Load balancer name '%s' must be 1-32 characters of [A-Za-z0-9-], not start or end with '-' nor start with 'internal-'", name)
	}
	typ := orDefault(form.Get("Type"), LBTypeApplication)
	if typ != LBTypeNetwork {
		return nil, errELBValidation("awsemu creates load balancers of type 'network' only, not '%s'", typ)
	}
	scheme := orDefault(form.Get("Scheme"), LBSchemeInternetFacing)
	if scheme != LBSchemeInternetFacing && scheme != LBSchemeInternal {
		return nil, errELBValidation("Scheme '%s' must be 'internet-facing' or 'internal'", scheme)
	}
	tags, apiErr := parseLBTags(form)
	if apiErr != nil {
		return nil, apiErr
	}
	subnets := memberValues(form, "Subnets")
	mappings := map[string]v2Mapping{}
	for _, n := range indexedKeys(form, "SubnetMappings.member") {
		p := "SubnetMappings.member." + strconv.Itoa(n) + "."
		id := form.Get(p + "SubnetId")
		m := v2Mapping{allocationID: form.Get(p + "AllocationId"), privateIP: form.Get(p + "PrivateIPv4Address")}
		switch {
		case m.allocationID != "" && scheme == LBSchemeInternal:
			return nil, errInvalidConfiguration("Elastic IP addresses cannot be assigned to an internal load balancer")
		case m.allocationID != "" && !strings.HasPrefix(m.allocationID, "eipalloc-"):
			return nil, newAPIError(http.StatusBadRequest, "AllocationIdNotFound", "The allocation ID '%s' was not found", m.allocationID)
		case m.privateIP != "" && scheme != LBSchemeInternal:
			return nil, errInvalidConfiguration("Private IPv4 addresses can be assigned to internal load balancers only")
		}
		subnets = append(subnets, id)
		mappings[id] = m
	}
	if len(memberValues(form, "Subnets")) > 0 && len(mappings) > 0 {
		return nil, errELBValidation("You cannot specify both subnets and subnet mappings")
	}
	if len(subnets) == 0 {
		return nil, errELBValidation("At least one subnet must be specified")
	}
	sgs := memberValues(form, "SecurityGroups")
	s.mu.Lock()
	defer s.mu.Unlock()
	zones, vpc, apiErr := s.classicSubnets(subnets, "", nil)
	if apiErr != nil {
		return nil, apiErr
	}
	for id, m := range mappings {
		sn, _ := s.ec2.subnet(id)
		if m.privateIP == "" {
			continue
		}
		ip, err1 := netip.ParseAddr(m.privateIP)
		pfx, err2 := netip.ParsePrefix(sn.CIDR)
		if err1 != nil || (err2 == nil && !pfx.Contains(ip)) {
			return nil, errInvalidConfiguration("Private IPv4 address '%s' is not in the CIDR of subnet '%s'", m.privateIP, id)
		}
	}
	if _, apiErr := s.checkSecurityGroups(sgs, vpc); apiErr != nil {
		return nil, apiErr
	}
	if old, dup := s.v2ByName(name); dup {
		if old.Type == typ && old.Scheme == scheme && slices.Equal(old.Subnets, subnets) {
			return elbv2LoadBalancersResult{LoadBalancers: []xmlV2LoadBalancer{xmlV2LB(old)}}, nil // idempotent, as in AWS
		}
		return nil, newAPIError(http.StatusBadRequest, "DuplicateLoadBalancerName", "A load balancer with the same name '%s' exists, but with different settings", name)
	}
	n := s.seq.Add(1)
	lb := LoadBalancer{Name: name, Type: typ, Scheme: scheme, VPCID: vpc, Subnets: subnets, SecurityGroups: sgs,
		CreatedTime: time.Now().UTC().Truncate(time.Millisecond)}
	lb.DNSName = lbDNSName(s.account, s.region, &lb)
	lb.ARN = elbArn(s.region, s.account, fmt.Sprintf("loadbalancer/%s/%s/%016x", lbTypeCode[typ], name, lbHash(s.account, s.region, typ, name, strconv.FormatUint(n, 10))))
	if apiErr := addLBTags(&lb.Tags, tags); apiErr != nil {
		return nil, apiErr
	}
	rec := &lbRec{LoadBalancer: lb, zones: zones, zoneID: lbZoneID(s.region, typ), mappings: mappings}
	s.v2.put(lb.ARN, rec)
	return elbv2LoadBalancersResult{LoadBalancers: []xmlV2LoadBalancer{xmlV2LB(rec)}}, nil
}

// relinkTargetGroups recomputes which load balancers use the given target
// groups through listeners. Callers hold s.mu.
func (s *elbState) relinkTargetGroups(arns ...string) {
	for _, arn := range arns {
		tg, ok := s.targetGroups.get(arn)
		if !ok {
			continue
		}
		tg.lbArns = nil
		for _, l := range s.listeners.list() {
			if l.tgArn == arn && !slices.Contains(tg.lbArns, l.lbArn) {
				tg.lbArns = append(tg.lbArns, l.lbArn)
			}
		}
	}
}

func (s *elbState) deleteV2LoadBalancer(form url.Values) (any, *apiError) {
	arn := form.Get("LoadBalancerArn")
	if elbv2Resource(arn) != "loadbalancer" {
		return nil, errELBValidation("'%s' is not a valid load balancer ARN", arn)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, ok := s.v2.get(arn)
	if !ok {
		return struct{}{}, nil // deleting a missing load balancer succeeds, as in AWS
	}
	if lb.attrs["deletion_protection.enabled"] == "true" {
		return nil, newAPIError(http.StatusBadRequest, "OperationNotPermitted", "Load balancer '%s' cannot be deleted because deletion protection is enabled", arn)
	}
	var tgs []string
	for _, l := range s.listeners.list() {
		if l.lbArn == arn {
			s.listeners.remove(l.arn) // listeners go with their load balancer
			tgs = append(tgs, l.tgArn)
		}
	}
	for _, tg := range s.targetGroups.list() {
		if slices.Contains(tg.lbArns, arn) {
			tgs = append(tgs, tg.ARN)
		}
	}
	s.v2.remove(arn)
	s.relinkTargetGroups(tgs...) // target groups survive
	return struct{}{}, nil
}

type xmlV2Attribute struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

type elbv2AttributesResult struct {
	Attributes []xmlV2Attribute `xml:"Attributes>member"`
}

func attributesResult(defaults, set map[string]string) elbv2AttributesResult {
	var res elbv2AttributesResult
	for _, k := range slices.Sorted(maps.Keys(defaults)) {
		v := defaults[k]
		if x, ok := set[k]; ok {
			v = x
		}
		res.Attributes = append(res.Attributes, xmlV2Attribute{Key: k, Value: v})
	}
	return res
}

// parseAttributes decodes Attributes.member.N against the known keys.
func parseAttributes(form url.Values, known map[string]string, what string) (map[string]string, *apiError) {
	out := map[string]string{}
	for _, n := range indexedKeys(form, "Attributes.member") {
		p := "Attributes.member." + strconv.Itoa(n) + "."
		k, v := form.Get(p+"Key"), form.Get(p+"Value")
		if _, ok := known[k]; !ok {
			return nil, errInvalidConfiguration("%s attribute key '%s' is not recognized", what, k)
		}
		if d := known[k]; (d == "true" || d == "false") && v != "true" && v != "false" {
			return nil, errInvalidConfiguration("%s attribute '%s' value '%s' must be 'true' or 'false'", what, k, v)
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil, errELBValidation("Attributes must not be empty")
	}
	return out, nil
}

func (s *elbState) describeV2LBAttributes(form url.Values) (any, *apiError) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	lb, apiErr := s.v2LB(form)
	if apiErr != nil {
		return nil, apiErr
	}
	return attributesResult(nlbAttributeDefaults, lb.attrs), nil
}

func (s *elbState) modifyV2LBAttributes(form url.Values) (any, *apiError) {
	attrs, apiErr := parseAttributes(form, nlbAttributeDefaults, "Load balancer")
	if apiErr != nil {
		return nil, apiErr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, apiErr := s.v2LB(form)
	if apiErr != nil {
		return nil, apiErr
	}
	merged := maps.Clone(lb.attrs)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, attrs)
	if merged["access_logs.s3.enabled"] == "true" && merged["access_logs.s3.bucket"] == "" {
		return nil, errInvalidConfiguration("The value of 'access_logs.s3.bucket' cannot be empty when access logs are enabled")
	}
	lb.attrs = merged
	return attributesResult(nlbAttributeDefaults, lb.attrs), nil
}

type elbv2ListenersResult struct {
	Listeners []xmlV2Listener `xml:"Listeners>member"`
}

// listenerParams holds the parsed fields of Create/ModifyListener.
type listenerParams struct {
	protocol, sslPolicy, cert, tgArn string
	port                             int32
	hasPort                          bool
}

func parseListenerParams(form url.Values, create bool) (listenerParams, *apiError) {
	p := listenerParams{protocol: form.Get("Protocol"), sslPolicy: form.Get("SslPolicy"), cert: form.Get("Certificates.member.1.CertificateArn")}
	if v := form.Get("Port"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 65535 {
			return p, errELBValidation("Port '%s' must be between 1 and 65535", v)
		}
		p.port, p.hasPort = int32(n), true
	} else if create {
		return p, errELBValidation("A listener port must be specified")
	}
	if p.protocol != "" && !slices.Contains([]string{"TCP", "UDP", "TCP_UDP", "TLS"}, p.protocol) {
		return p, errELBValidation("Listener protocol '%s' must be TCP, UDP, TCP_UDP or TLS", p.protocol)
	}
	if create && p.protocol == "" {
		return p, errELBValidation("A listener protocol must be specified")
	}
	acts := indexedKeys(form, "DefaultActions.member")
	if len(acts) > 1 {
		return p, newAPIError(http.StatusBadRequest, "TooManyActions", "Network load balancer listeners take one default action")
	}
	if len(acts) == 1 {
		a := "DefaultActions.member." + strconv.Itoa(acts[0]) + "."
		if typ := form.Get(a + "Type"); typ != "forward" {
			return p, newAPIError(http.StatusBadRequest, "InvalidLoadBalancerAction", "Network load balancer listeners support forward actions only, not '%s'", typ)
		}
		p.tgArn = form.Get(a + "TargetGroupArn")
		if fw := memberTGs(form, a+"ForwardConfig.TargetGroups"); len(fw) > 0 {
			if len(fw) > 1 || (p.tgArn != "" && p.tgArn != fw[0]) {
				return p, errELBValidation("awsemu forwards to one target group per listener")
			}
			p.tgArn = fw[0]
		}
		if p.tgArn == "" {
			return p, errELBValidation("A forward action needs a target group")
		}
	} else if create {
		return p, errELBValidation("A listener needs a default action")
	}
	return p, nil
}

func memberTGs(form url.Values, prefix string) []string {
	var out []string
	for _, n := range indexedKeys(form, prefix+".member") {
		out = append(out, form.Get(prefix+".member."+strconv.Itoa(n)+".TargetGroupArn"))
	}
	return out
}

// listenerTargetProtocols are the target group protocols a listener
// protocol may forward to.
var listenerTargetProtocols = map[string][]string{
	"TCP": {"TCP", "TCP_UDP"}, "UDP": {"UDP", "TCP_UDP"}, "TCP_UDP": {"TCP_UDP"}, "TLS": {"TCP", "TLS"},
}

// checkV2Listener validates a listener's final settings on lb. Callers hold s.mu.
func (s *elbState) checkV2Listener(lb *lbRec, self string, l *listenerRec) *apiError {
	if l.Protocol == "TLS" && l.CertificateARN == "" {
		return newAPIError(http.StatusBadRequest, "CertificateNotFound", "A certificate must be specified for TLS listeners")
	}
	for _, o := range s.listeners.list() {
		if o.lbArn == lb.ARN && o.arn != self && o.Port == l.Port {
			return newAPIError(http.StatusBadRequest, "DuplicateListener", "A listener already exists on this port for this load balancer '%s'", lb.ARN)
		}
	}
	tg, ok := s.targetGroups.get(l.tgArn)
	if !ok {
		return newAPIError(http.StatusBadRequest, "TargetGroupNotFound", "Target groups '%s' not found", l.tgArn)
	}
	if tg.vpcID != lb.VPCID {
		return errELBValidation("Target group '%s' is in VPC %s, the load balancer in %s", tg.ARN, tg.vpcID, lb.VPCID)
	}
	if !slices.Contains(listenerTargetProtocols[l.Protocol], tg.Protocol) {
		return newAPIError(http.StatusBadRequest, "IncompatibleProtocols", "Listener protocol '%s' is not supported with a target group with the protocol '%s'", l.Protocol, tg.Protocol)
	}
	for _, a := range tg.lbArns {
		if a != lb.ARN {
			return newAPIError(http.StatusBadRequest, "TargetGroupAssociationLimit",
				"The following target groups cannot be associated with more than one load balancer: %s", tg.ARN)
		}
	}
	return nil
}

func (s *elbState) createListener(form url.Values) (any, *apiError) {
	p, apiErr := parseListenerParams(form, true)
	if apiErr != nil {
		return nil, apiErr
	}
	tags, apiErr := parseLBTags(form)
	if apiErr != nil {
		return nil, apiErr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, apiErr := s.v2LB(form)
	if apiErr != nil {
		return nil, apiErr
	}
	l := &listenerRec{lbArn: lb.ARN, tgArn: p.tgArn,
		LBListener: LBListener{Protocol: p.protocol, Port: p.port, CertificateARN: p.cert, SSLPolicy: p.sslPolicy}}
	if l.Protocol == "TLS" && l.SSLPolicy == "" {
		l.SSLPolicy = "ELBSecurityPolicy-TLS13-1-2-2021-06"
	}
	for _, o := range s.listeners.list() {
		if o.lbArn == lb.ARN && o.Port == l.Port && o.Protocol == l.Protocol && o.tgArn == l.tgArn && o.CertificateARN == l.CertificateARN {
			return elbv2ListenersResult{Listeners: []xmlV2Listener{xmlListener(o)}}, nil // idempotent, as in AWS
		}
	}
	if apiErr := s.checkV2Listener(lb, "", l); apiErr != nil {
		return nil, apiErr
	}
	if apiErr := addLBTags(&l.Tags, tags); apiErr != nil {
		return nil, apiErr
	}
	n := s.seq.Add(1)
	suffix := strings.TrimPrefix(lb.ARN, elbArn(s.region, s.account, "loadbalancer/"))
	l.arn = elbArn(s.region, s.account, fmt.Sprintf("listener/%s/%016x", suffix, lbHash(lb.ARN, strconv.Itoa(int(l.Port)), strconv.FormatUint(n, 10))))
	s.listeners.put(l.arn, l)
	s.relinkTargetGroups(l.tgArn)
	return elbv2ListenersResult{Listeners: []xmlV2Listener{xmlListener(l)}}, nil
}

func (s *elbState) deleteListener(form url.Values) (any, *apiError) {
	arn := form.Get("ListenerArn")
	if arn == "" {
		return nil, errMissingParameter("ListenerArn")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.listeners.get(arn)
	if !ok {
		return nil, newAPIError(http.StatusBadRequest, "ListenerNotFound", "Listener '%s' not found", arn)
	}
	s.listeners.remove(arn)
	s.relinkTargetGroups(l.tgArn)
	return struct{}{}, nil
}

func (s *elbState) modifyListener(form url.Values) (any, *apiError) {
	p, apiErr := parseListenerParams(form, false)
	if apiErr != nil {
		return nil, apiErr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.listeners.get(form.Get("ListenerArn"))
	if !ok {
		return nil, newAPIError(http.StatusBadRequest, "ListenerNotFound", "Listener '%s' not found", form.Get("ListenerArn"))
	}
	lb, _ := s.v2.get(l.lbArn)
	next := *l
	if p.hasPort {
		next.Port = p.port
	}
	if p.protocol != "" {
		next.Protocol = p.protocol
	}
	if p.cert != "" {
		next.CertificateARN = p.cert
	}
	if p.sslPolicy != "" {
		next.SSLPolicy = p.sslPolicy
	}
	if next.Protocol != "TLS" {
		next.CertificateARN, next.SSLPolicy = "", ""
	}
	if p.tgArn != "" {
		next.tgArn = p.tgArn
	}
	if apiErr := s.checkV2Listener(lb, l.arn, &next); apiErr != nil {
		return nil, apiErr
	}
	old := l.tgArn
	*l = next
	s.relinkTargetGroups(old, l.tgArn)
	return elbv2ListenersResult{Listeners: []xmlV2Listener{xmlListener(l)}}, nil
}
