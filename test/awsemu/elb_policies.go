package awsemu

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
)

// Classic ELB attributes and policies: DescribeLoadBalancerAttributes,
// ModifyLoadBalancerAttributes, CreateLoadBalancerPolicy,
// DeleteLoadBalancerPolicy, DescribeLoadBalancerPolicies,
// SetLoadBalancerPoliciesOfListener and
// SetLoadBalancerPoliciesForBackendServer.

// classicExt is the state of a Classic load balancer that only mutating
// calls set; nil means everything is at its default.
type classicExt struct {
	health           *xmlELBHealthCheck
	attrs            xmlELBAttributes
	policies         table[xmlELBPolicyDescription]
	listenerPolicies map[int32][]string // by LoadBalancerPort
	backendPolicies  map[int32][]string // by InstancePort
}

func newClassicExt() *classicExt {
	return &classicExt{
		attrs: xmlELBAttributes{
			AccessLog:          xmlELBAccessLog{EmitInterval: 60},
			ConnectionDraining: xmlELBDraining{Timeout: 300},
			ConnectionSettings: xmlELBConnSettings{IdleTimeout: 60},
		},
		listenerPolicies: map[int32][]string{},
		backendPolicies:  map[int32][]string{},
	}
}

// extOf returns the load balancer's mutable state, creating it.
func (lb *lbRec) extOf() *classicExt {
	if lb.ext == nil {
		lb.ext = newClassicExt()
	}
	return lb.ext
}

// render adds the mutated state to a DescribeLoadBalancers entry.
func (e *classicExt) render(d *xmlELBDescription) {
	if e == nil {
		return
	}
	if e.health != nil {
		d.HealthCheck = *e.health
	}
	for i := range d.ListenerDescriptions {
		d.ListenerDescriptions[i].PolicyNames = e.listenerPolicies[d.ListenerDescriptions[i].Listener.LoadBalancerPort]
	}
	for _, port := range sortedPorts(e.backendPolicies) {
		d.BackendServerDescriptions = append(d.BackendServerDescriptions, xmlELBBackend{InstancePort: port, PolicyNames: e.backendPolicies[port]})
	}
	for _, p := range e.policies.list() {
		d.Policies.OtherPolicies = append(d.Policies.OtherPolicies, p.PolicyName)
	}
}

func sortedPorts(m map[int32][]string) []int32 {
	var out []int32
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

type xmlELBBackend struct {
	InstancePort int32    `xml:"InstancePort"`
	PolicyNames  []string `xml:"PolicyNames>member"`
}

type xmlELBAccessLog struct {
	Enabled        bool   `xml:"Enabled"`
	S3BucketName   string `xml:"S3BucketName,omitempty"`
	EmitInterval   int32  `xml:"EmitInterval"`
	S3BucketPrefix string `xml:"S3BucketPrefix,omitempty"`
}

type xmlELBDraining struct {
	Enabled bool  `xml:"Enabled"`
	Timeout int32 `xml:"Timeout"`
}

type xmlELBConnSettings struct {
	IdleTimeout int32 `xml:"IdleTimeout"`
}

type xmlELBCrossZone struct {
	Enabled bool `xml:"Enabled"`
}

type xmlELBAttributes struct {
	CrossZoneLoadBalancing xmlELBCrossZone    `xml:"CrossZoneLoadBalancing"`
	AccessLog              xmlELBAccessLog    `xml:"AccessLog"`
	ConnectionDraining     xmlELBDraining     `xml:"ConnectionDraining"`
	ConnectionSettings     xmlELBConnSettings `xml:"ConnectionSettings"`
}

type xmlELBPolicyAttribute struct {
	AttributeName  string `xml:"AttributeName"`
	AttributeValue string `xml:"AttributeValue"`
}

type xmlELBPolicyDescription struct {
	PolicyName                  string                  `xml:"PolicyName"`
	PolicyTypeName              string                  `xml:"PolicyTypeName"`
	PolicyAttributeDescriptions []xmlELBPolicyAttribute `xml:"PolicyAttributeDescriptions>member"`
}

// elbPolicyTypes are the Classic policy types CreateLoadBalancerPolicy
// accepts.
var elbPolicyTypes = []string{"ProxyProtocolPolicyType", "SSLNegotiationPolicyType", "BackendServerAuthenticationPolicyType",
	"PublicKeyPolicyType", "AppCookieStickinessPolicyType", "LBCookieStickinessPolicyType"}

// elbSamplePolicies are the predefined policies DescribeLoadBalancerPolicies
// lists without a load balancer name (a representative subset).
var elbSamplePolicies = []xmlELBPolicyDescription{
	{PolicyName: "ELBSecurityPolicy-2016-08", PolicyTypeName: "SSLNegotiationPolicyType", PolicyAttributeDescriptions: []xmlELBPolicyAttribute{
		{"Protocol-TLSv1", "true"}, {"Protocol-TLSv1.1", "true"}, {"Protocol-TLSv1.2", "true"}, {"Server-Defined-Cipher-Order", "true"},
		{"ECDHE-ECDSA-AES128-GCM-SHA256", "true"}, {"ECDHE-RSA-AES128-GCM-SHA256", "true"}}},
	{PolicyName: "ELBSecurityPolicy-TLS-1-2-2017-01", PolicyTypeName: "SSLNegotiationPolicyType", PolicyAttributeDescriptions: []xmlELBPolicyAttribute{
		{"Protocol-TLSv1.2", "true"}, {"Server-Defined-Cipher-Order", "true"}, {"ECDHE-ECDSA-AES128-GCM-SHA256", "true"}}},
	{PolicyName: "ELBSample-ELBDefaultCipherPolicy", PolicyTypeName: "SSLNegotiationPolicyType", PolicyAttributeDescriptions: []xmlELBPolicyAttribute{
		{"Protocol-SSLv3", "true"}, {"Protocol-TLSv1", "true"}}},
}

type elbAttributesResult struct {
	LoadBalancerName       string           `xml:"LoadBalancerName,omitempty"`
	LoadBalancerAttributes xmlELBAttributes `xml:"LoadBalancerAttributes"`
}

func (s *elbState) describeClassicAttributes(form url.Values) (any, *apiError) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	lb, apiErr := s.classicByName(form)
	if apiErr != nil {
		return nil, apiErr
	}
	attrs := newClassicExt().attrs
	if lb.ext != nil {
		attrs = lb.ext.attrs
	}
	return elbAttributesResult{LoadBalancerAttributes: attrs}, nil
}

func (s *elbState) modifyClassicAttributes(form url.Values) (any, *apiError) {
	const p = "LoadBalancerAttributes."
	boolOf := func(key string) (bool, bool, *apiError) {
		v, ok := form[p+key]
		if !ok {
			return false, false, nil
		}
		b, err := strconv.ParseBool(v[0])
		if err != nil {
			return false, false, errELBValidation("%s '%s' is not a boolean", key, v[0])
		}
		return b, true, nil
	}
	intOf := func(key string, lo, hi int) (int32, bool, *apiError) {
		v, ok := form[p+key]
		if !ok {
			return 0, false, nil
		}
		n, err := strconv.Atoi(v[0])
		if err != nil || n < lo || n > hi {
			return 0, false, errELBValidation("%s '%s' must be between %d and %d", key, v[0], lo, hi)
		}
		return int32(n), true, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, apiErr := s.classicByName(form)
	if apiErr != nil {
		return nil, apiErr
	}
	a := lb.extOf().attrs // a copy: applied only when everything validates
	if b, ok, apiErr := boolOf("CrossZoneLoadBalancing.Enabled"); apiErr != nil {
		return nil, apiErr
	} else if ok {
		a.CrossZoneLoadBalancing.Enabled = b
	}
	if b, ok, apiErr := boolOf("ConnectionDraining.Enabled"); apiErr != nil {
		return nil, apiErr
	} else if ok {
		a.ConnectionDraining.Enabled = b
	}
	if n, ok, apiErr := intOf("ConnectionDraining.Timeout", 1, 3600); apiErr != nil {
		return nil, apiErr
	} else if ok {
		a.ConnectionDraining.Timeout = n
	}
	if n, ok, apiErr := intOf("ConnectionSettings.IdleTimeout", 1, 4000); apiErr != nil {
		return nil, apiErr
	} else if ok {
		a.ConnectionSettings.IdleTimeout = n
	}
	if b, ok, apiErr := boolOf("AccessLog.Enabled"); apiErr != nil {
		return nil, apiErr
	} else if ok {
		a.AccessLog.Enabled = b
		a.AccessLog.S3BucketName, a.AccessLog.S3BucketPrefix = form.Get(p+"AccessLog.S3BucketName"), form.Get(p+"AccessLog.S3BucketPrefix")
	}
	if n, ok, apiErr := intOf("AccessLog.EmitInterval", 5, 60); apiErr != nil {
		return nil, apiErr
	} else if ok {
		if n != 5 && n != 60 {
			return nil, errELBValidation("AccessLog.EmitInterval must be 5 or 60")
		}
		a.AccessLog.EmitInterval = n
	}
	if a.AccessLog.Enabled && a.AccessLog.S3BucketName == "" {
		return nil, errInvalidConfiguration("The S3 bucket name is required when access logs are enabled")
	}
	lb.ext.attrs = a
	return elbAttributesResult{LoadBalancerName: lb.Name, LoadBalancerAttributes: a}, nil
}

func (s *elbState) createClassicPolicy(form url.Values) (any, *apiError) {
	p := xmlELBPolicyDescription{PolicyName: form.Get("PolicyName"), PolicyTypeName: form.Get("PolicyTypeName")}
	if p.PolicyName == "" {
		return nil, errMissingParameter("PolicyName")
	}
	if !slices.Contains(elbPolicyTypes, p.PolicyTypeName) {
		return nil, newAPIError(http.StatusBadRequest, "PolicyTypeNotFound", "There is no policy type named '%s'", p.PolicyTypeName)
	}
	for _, n := range indexedKeys(form, "PolicyAttributes.member") {
		q := "PolicyAttributes.member." + strconv.Itoa(n) + "."
		p.PolicyAttributeDescriptions = append(p.PolicyAttributeDescriptions,
			xmlELBPolicyAttribute{AttributeName: form.Get(q + "AttributeName"), AttributeValue: form.Get(q + "AttributeValue")})
	}
	if p.PolicyTypeName == "ProxyProtocolPolicyType" && !slices.Contains(p.PolicyAttributeDescriptions, xmlELBPolicyAttribute{"ProxyProtocol", "true"}) {
		return nil, errInvalidConfiguration("ProxyProtocolPolicyType requires the attribute ProxyProtocol=true")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, apiErr := s.classicByName(form)
	if apiErr != nil {
		return nil, apiErr
	}
	ext := lb.extOf()
	if _, dup := ext.policies.get(p.PolicyName); dup {
		return nil, newAPIError(http.StatusBadRequest, "DuplicatePolicyName", "Policy with the same name exists for this LoadBalancer: %s", p.PolicyName)
	}
	ext.policies.put(p.PolicyName, &p)
	return struct{}{}, nil
}

func (s *elbState) deleteClassicPolicy(form url.Values) (any, *apiError) {
	name := form.Get("PolicyName")
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, apiErr := s.classicByName(form)
	if apiErr != nil {
		return nil, apiErr
	}
	ext := lb.extOf()
	for _, names := range [](map[int32][]string){ext.listenerPolicies, ext.backendPolicies} {
		for _, ps := range names {
			if slices.Contains(ps, name) {
				return nil, errInvalidConfiguration("Policy %s is in use and cannot be deleted", name)
			}
		}
	}
	ext.policies.remove(name)
	return struct{}{}, nil
}

type elbPoliciesResult struct {
	PolicyDescriptions []xmlELBPolicyDescription `xml:"PolicyDescriptions>member"`
}

func (s *elbState) describeClassicPolicies(form url.Values) (any, *apiError) {
	names := memberValues(form, "PolicyNames")
	s.mu.RLock()
	defer s.mu.RUnlock()
	var all []xmlELBPolicyDescription
	if form.Get("LoadBalancerName") != "" {
		lb, apiErr := s.classicByName(form)
		if apiErr != nil {
			return nil, apiErr
		}
		if lb.ext != nil {
			for _, p := range lb.ext.policies.list() {
				all = append(all, *p)
			}
		}
	} else {
		all = elbSamplePolicies
	}
	if len(names) == 0 {
		return elbPoliciesResult{PolicyDescriptions: all}, nil
	}
	var res elbPoliciesResult
	for _, n := range names {
		i := slices.IndexFunc(all, func(p xmlELBPolicyDescription) bool { return p.PolicyName == n })
		if i < 0 {
			return nil, newAPIError(http.StatusBadRequest, "PolicyNotFound", "There is no policy with name %s", n)
		}
		res.PolicyDescriptions = append(res.PolicyDescriptions, all[i])
	}
	return res, nil
}

// policyNamesFor checks that the named policies exist on lb.
func policyNamesFor(lb *lbRec, names []string) *apiError {
	for _, n := range names {
		if _, ok := lb.extOf().policies.get(n); !ok {
			return newAPIError(http.StatusBadRequest, "PolicyNotFound", "There is no policy with name %s for load balancer %s", n, lb.Name)
		}
	}
	return nil
}

func (s *elbState) setListenerPolicies(form url.Values) (any, *apiError) {
	port, err := strconv.Atoi(form.Get("LoadBalancerPort"))
	if err != nil {
		return nil, errMissingParameter("LoadBalancerPort")
	}
	names := memberValues(form, "PolicyNames")
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, apiErr := s.classicByName(form)
	if apiErr != nil {
		return nil, apiErr
	}
	if !slices.ContainsFunc(lb.Listeners, func(l LBListener) bool { return l.Port == int32(port) }) {
		return nil, newAPIError(http.StatusBadRequest, "ListenerNotFound", "There is no listener on port %d for load balancer %s", port, lb.Name)
	}
	if apiErr := policyNamesFor(lb, names); apiErr != nil {
		return nil, apiErr
	}
	for _, n := range names {
		if p, _ := lb.ext.policies.get(n); p.PolicyTypeName == "ProxyProtocolPolicyType" {
			return nil, errInvalidConfiguration("ProxyProtocolPolicyType policies apply to backend servers, not listeners")
		}
	}
	setPolicies(lb.ext.listenerPolicies, int32(port), names)
	return struct{}{}, nil
}

func (s *elbState) setBackendPolicies(form url.Values) (any, *apiError) {
	port, err := strconv.Atoi(form.Get("InstancePort"))
	if err != nil || port < 1 || port > 65535 {
		return nil, errELBValidation("InstancePort must be between 1 and 65535")
	}
	names := memberValues(form, "PolicyNames")
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, apiErr := s.classicByName(form)
	if apiErr != nil {
		return nil, apiErr
	}
	if apiErr := policyNamesFor(lb, names); apiErr != nil {
		return nil, apiErr
	}
	setPolicies(lb.ext.backendPolicies, int32(port), names)
	return struct{}{}, nil
}

func setPolicies(m map[int32][]string, port int32, names []string) {
	if len(names) == 0 {
		delete(m, port)
		return
	}
	m[port] = slices.Clone(names)
}
