package awsemu

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// elbv2Service serves Elastic Load Balancing v2 (awsQuery, Version
// 2015-12-01): Network and Application load balancers, their listeners and
// target groups. It shares the signing name "elasticloadbalancing" with
// Classic ELB; its accounting name is "elasticloadbalancingv2".
func elbv2Service(s *elbState) *service {
	tags := s.v2Tagger()
	return &service{
		name: "elasticloadbalancingv2", signingName: "elasticloadbalancing", apiVersion: "2015-12-01",
		protocol: protoAWSQuery, xmlns: "http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/",
		actions: actionTable{
			"DescribeLoadBalancers": s.describeV2LoadBalancers,
			"DescribeTargetGroups":  s.describeTargetGroups,
			"DescribeListeners":     s.describeListeners,
			"DescribeTags":          tags.describe,
			"AddTags":               tags.add,
			"RemoveTags":            tags.remove,
			// Load balancers, listeners and attributes (elbv2_mutate.go).
			"CreateLoadBalancer":             s.createV2LoadBalancer,
			"DeleteLoadBalancer":             s.deleteV2LoadBalancer,
			"DescribeLoadBalancerAttributes": s.describeV2LBAttributes,
			"ModifyLoadBalancerAttributes":   s.modifyV2LBAttributes,
			"CreateListener":                 s.createListener,
			"DeleteListener":                 s.deleteListener,
			"ModifyListener":                 s.modifyListener,
			"SetSecurityGroups":              s.setV2SecurityGroups,
			// Target groups and targets (elbv2_targets.go).
			"CreateTargetGroup":             s.createTargetGroup,
			"DeleteTargetGroup":             s.deleteTargetGroup,
			"ModifyTargetGroup":             s.modifyTargetGroup,
			"DescribeTargetGroupAttributes": s.describeTGAttributes,
			"ModifyTargetGroupAttributes":   s.modifyTGAttributes,
			"RegisterTargets":               s.registerTargets,
			"DeregisterTargets":             s.deregisterTargets,
			"DescribeTargetHealth":          s.describeTargetHealth,
		},
	}
}

func errTargetGroupNotFound() *apiError {
	return newAPIError(http.StatusBadRequest, "TargetGroupNotFound", "One or more target groups not found")
}

func errListenerNotFound() *apiError {
	return newAPIError(http.StatusBadRequest, "ListenerNotFound", "One or more listeners not found")
}

// elbv2Resource is the resource type of an ELBv2 ARN ("loadbalancer",
// "targetgroup", "listener", ...), or "" if it is not one.
func elbv2Resource(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "elasticloadbalancing" {
		return ""
	}
	typ, _, _ := strings.Cut(parts[5], "/")
	return typ
}

// onlyOne rejects requests that set more than one of the named selectors.
func onlyOne(what string, set ...bool) *apiError {
	n := 0
	for _, b := range set {
		if b {
			n++
		}
	}
	if n > 1 {
		return errELBValidation("%s cannot be specified at the same time", what)
	}
	return nil
}

type xmlV2State struct {
	Code string `xml:"Code"`
}

type xmlV2AZ struct {
	ZoneName  string           `xml:"ZoneName"`
	SubnetID  string           `xml:"SubnetId"`
	Addresses []xmlV2LBAddress `xml:"LoadBalancerAddresses>member"`
}

type xmlV2LoadBalancer struct {
	LoadBalancerArn       string     `xml:"LoadBalancerArn"`
	DNSName               string     `xml:"DNSName"`
	CanonicalHostedZoneID string     `xml:"CanonicalHostedZoneId"`
	CreatedTime           string     `xml:"CreatedTime"`
	LoadBalancerName      string     `xml:"LoadBalancerName"`
	Scheme                string     `xml:"Scheme"`
	VPCID                 string     `xml:"VpcId,omitempty"`
	State                 xmlV2State `xml:"State"`
	Type                  string     `xml:"Type"`
	AvailabilityZones     []xmlV2AZ  `xml:"AvailabilityZones>member"`
	SecurityGroups        []string   `xml:"SecurityGroups>member"`
	IPAddressType         string     `xml:"IpAddressType"`
}

type elbv2DescribeLoadBalancersResult struct {
	LoadBalancers []xmlV2LoadBalancer `xml:"LoadBalancers>member"`
	NextMarker    string              `xml:"NextMarker,omitempty"`
}

func xmlV2LB(lb *lbRec) xmlV2LoadBalancer {
	x := xmlV2LoadBalancer{
		LoadBalancerArn: lb.ARN, DNSName: lb.DNSName, CanonicalHostedZoneID: lb.zoneID, CreatedTime: elbTime(lb.CreatedTime),
		LoadBalancerName: lb.Name, Scheme: lb.Scheme, VPCID: lb.VPCID, State: xmlV2State{Code: "active"}, Type: lb.Type,
		SecurityGroups: lb.SecurityGroups, IPAddressType: "ipv4",
	}
	for i, id := range lb.Subnets {
		x.AvailabilityZones = append(x.AvailabilityZones, xmlV2AZ{ZoneName: lb.zones[i], SubnetID: id, Addresses: lb.mappings[id].xml()})
	}
	return x
}

func (s *elbState) describeV2LoadBalancers(form url.Values) (any, *apiError) {
	names, arns := memberValues(form, "Names"), memberValues(form, "LoadBalancerArns")
	if apiErr := onlyOne("Load balancer names and load balancer ARNs", len(names) > 0, len(arns) > 0); apiErr != nil {
		return nil, apiErr
	}
	if len(arns) > 0 {
		if apiErr := checkCount("loadBalancerArns", arns, elbMaxTagResources); apiErr != nil {
			return nil, apiErr
		}
		for _, a := range arns {
			if elbv2Resource(a) != "loadbalancer" {
				return nil, errELBValidation("'%s' is not a valid load balancer ARN", a)
			}
		}
	}
	limit, offset, apiErr := elbPage(form)
	if apiErr != nil {
		return nil, apiErr
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	items := s.v2.list()
	switch {
	case len(names) > 0:
		items, apiErr = lookupAll(names, s.v2ByName, func(missing []string) *apiError {
			return errLBNotFound("Load balancers '[%s]' not found", strings.Join(missing, ", "))
		})
	case len(arns) > 0:
		items, apiErr = lookupAll(arns, s.v2.get, func([]string) *apiError {
			return errLBNotFound("One or more load balancers not found")
		})
	}
	if apiErr != nil {
		return nil, apiErr
	}
	page, next := paginate(items, limit, offset)
	res := elbv2DescribeLoadBalancersResult{NextMarker: next}
	for _, lb := range page {
		res.LoadBalancers = append(res.LoadBalancers, xmlV2LB(lb))
	}
	return res, nil
}

type xmlV2Matcher struct {
	HTTPCode string `xml:"HttpCode"`
}

type xmlV2TargetGroup struct {
	TargetGroupArn             string        `xml:"TargetGroupArn"`
	TargetGroupName            string        `xml:"TargetGroupName"`
	Protocol                   string        `xml:"Protocol"`
	Port                       int32         `xml:"Port"`
	VPCID                      string        `xml:"VpcId,omitempty"`
	HealthCheckProtocol        string        `xml:"HealthCheckProtocol"`
	HealthCheckPort            string        `xml:"HealthCheckPort"`
	HealthCheckEnabled         bool          `xml:"HealthCheckEnabled"`
	HealthCheckIntervalSeconds int32         `xml:"HealthCheckIntervalSeconds"`
	HealthCheckTimeoutSeconds  int32         `xml:"HealthCheckTimeoutSeconds"`
	HealthyThresholdCount      int32         `xml:"HealthyThresholdCount"`
	UnhealthyThresholdCount    int32         `xml:"UnhealthyThresholdCount"`
	HealthCheckPath            string        `xml:"HealthCheckPath,omitempty"`
	Matcher                    *xmlV2Matcher `xml:"Matcher,omitempty"`
	LoadBalancerArns           []string      `xml:"LoadBalancerArns>member"`
	TargetType                 string        `xml:"TargetType"`
	IPAddressType              string        `xml:"IpAddressType"`
}

type elbv2DescribeTargetGroupsResult struct {
	TargetGroups []xmlV2TargetGroup `xml:"TargetGroups>member"`
	NextMarker   string             `xml:"NextMarker,omitempty"`
}

func xmlTargetGroup(tg *targetGroupRec) xmlV2TargetGroup {
	x := xmlV2TargetGroup{
		TargetGroupArn: tg.ARN, TargetGroupName: tg.Name, Protocol: tg.Protocol, Port: tg.Port, VPCID: tg.vpcID,
		HealthCheckProtocol: tg.HealthCheckProtocol, HealthCheckPort: tg.HealthCheckPort, HealthCheckEnabled: true,
		HealthCheckIntervalSeconds: tg.HealthCheckIntervalSeconds, HealthCheckTimeoutSeconds: 10,
		HealthyThresholdCount: tg.HealthyThreshold, UnhealthyThresholdCount: tg.UnhealthyThreshold,
		HealthCheckPath: tg.HealthCheckPath, LoadBalancerArns: tg.lbArns, TargetType: tg.TargetType, IPAddressType: "ipv4",
	}
	if strings.HasPrefix(tg.HealthCheckProtocol, "HTTP") {
		x.Matcher = &xmlV2Matcher{HTTPCode: "200-399"}
		if tg.HealthCheckProtocol == "HTTP" {
			x.HealthCheckTimeoutSeconds = 6 // TCP and HTTPS checks default to 10 seconds
		}
		if tg.matcher != "" {
			x.Matcher.HTTPCode = tg.matcher
		}
	}
	if tg.timeout > 0 {
		x.HealthCheckTimeoutSeconds = tg.timeout
	}
	return x
}

func (s *elbState) describeTargetGroups(form url.Values) (any, *apiError) {
	lbArn, arns, names := form.Get("LoadBalancerArn"), memberValues(form, "TargetGroupArns"), memberValues(form, "Names")
	if apiErr := onlyOne("LoadBalancerArn, TargetGroupArns and Names", lbArn != "", len(arns) > 0, len(names) > 0); apiErr != nil {
		return nil, apiErr
	}
	limit, offset, apiErr := elbPage(form)
	if apiErr != nil {
		return nil, apiErr
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	items := s.targetGroups.list()
	switch {
	case lbArn != "":
		if _, ok := s.v2.get(lbArn); !ok {
			return nil, errLBNotFound("One or more load balancers not found")
		}
		items = slices.DeleteFunc(items, func(tg *targetGroupRec) bool { return !slices.Contains(tg.lbArns, lbArn) })
	case len(arns) > 0:
		items, apiErr = lookupAll(arns, s.targetGroups.get, func([]string) *apiError { return errTargetGroupNotFound() })
	case len(names) > 0:
		items, apiErr = lookupAll(names, func(name string) (*targetGroupRec, bool) {
			i := slices.IndexFunc(items, func(tg *targetGroupRec) bool { return tg.Name == name })
			if i < 0 {
				return nil, false
			}
			return items[i], true
		}, func([]string) *apiError { return errTargetGroupNotFound() })
	}
	if apiErr != nil {
		return nil, apiErr
	}
	page, next := paginate(items, limit, offset)
	res := elbv2DescribeTargetGroupsResult{NextMarker: next}
	for _, tg := range page {
		res.TargetGroups = append(res.TargetGroups, xmlTargetGroup(tg))
	}
	return res, nil
}

type xmlV2Certificate struct {
	CertificateArn string `xml:"CertificateArn"`
}

type xmlV2TargetGroupTuple struct {
	TargetGroupArn string `xml:"TargetGroupArn"`
	Weight         int32  `xml:"Weight"`
}

type xmlV2Stickiness struct {
	Enabled bool `xml:"Enabled"`
}

type xmlV2ForwardConfig struct {
	TargetGroups                []xmlV2TargetGroupTuple `xml:"TargetGroups>member"`
	TargetGroupStickinessConfig xmlV2Stickiness         `xml:"TargetGroupStickinessConfig"`
}

type xmlV2Action struct {
	Type           string              `xml:"Type"`
	TargetGroupArn string              `xml:"TargetGroupArn,omitempty"`
	ForwardConfig  *xmlV2ForwardConfig `xml:"ForwardConfig,omitempty"`
}

type xmlV2Listener struct {
	ListenerArn     string             `xml:"ListenerArn"`
	LoadBalancerArn string             `xml:"LoadBalancerArn"`
	Port            int32              `xml:"Port"`
	Protocol        string             `xml:"Protocol"`
	Certificates    []xmlV2Certificate `xml:"Certificates>member"`
	SSLPolicy       string             `xml:"SslPolicy,omitempty"`
	DefaultActions  []xmlV2Action      `xml:"DefaultActions>member"`
}

type elbv2DescribeListenersResult struct {
	Listeners  []xmlV2Listener `xml:"Listeners>member"`
	NextMarker string          `xml:"NextMarker,omitempty"`
}

func xmlListener(l *listenerRec) xmlV2Listener {
	x := xmlV2Listener{ListenerArn: l.arn, LoadBalancerArn: l.lbArn, Port: l.Port, Protocol: l.Protocol, SSLPolicy: l.SSLPolicy}
	if l.CertificateARN != "" {
		x.Certificates = []xmlV2Certificate{{CertificateArn: l.CertificateARN}}
	}
	if l.tgArn != "" {
		x.DefaultActions = []xmlV2Action{{Type: "forward", TargetGroupArn: l.tgArn, ForwardConfig: &xmlV2ForwardConfig{
			TargetGroups: []xmlV2TargetGroupTuple{{TargetGroupArn: l.tgArn, Weight: 1}},
		}}}
	}
	return x
}

func (s *elbState) describeListeners(form url.Values) (any, *apiError) {
	lbArn, arns := form.Get("LoadBalancerArn"), memberValues(form, "ListenerArns")
	if lbArn == "" && len(arns) == 0 {
		return nil, errELBValidation("You must specify either listener ARNs or a load balancer ARN")
	}
	if apiErr := onlyOne("Listener ARNs and a load balancer ARN", lbArn != "", len(arns) > 0); apiErr != nil {
		return nil, apiErr
	}
	limit, offset, apiErr := elbPage(form)
	if apiErr != nil {
		return nil, apiErr
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var items []*listenerRec
	if lbArn != "" {
		if _, ok := s.v2.get(lbArn); !ok {
			return nil, errLBNotFound("One or more load balancers not found")
		}
		for _, l := range s.listeners.list() {
			if l.lbArn == lbArn {
				items = append(items, l)
			}
		}
	} else if items, apiErr = lookupAll(arns, s.listeners.get, func([]string) *apiError { return errListenerNotFound() }); apiErr != nil {
		return nil, apiErr
	}
	page, next := paginate(items, limit, offset)
	res := elbv2DescribeListenersResult{NextMarker: next}
	for _, l := range page {
		res.Listeners = append(res.Listeners, xmlListener(l))
	}
	return res, nil
}
