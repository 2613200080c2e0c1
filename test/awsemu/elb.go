package awsemu

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Errors and paging shared by both load-balancing APIs.

// elbMaxPageSize is the PageSize limit (and default) of the Describe calls.
const elbMaxPageSize = 400

// elbMaxTagResources is how many resources one tag call (or ELBv2
// DescribeLoadBalancers) names.
const elbMaxTagResources = 20

// errELBValidation is the ValidationError of the load-balancing APIs.
func errELBValidation(format string, args ...any) *apiError {
	return newAPIError(http.StatusBadRequest, "ValidationError", format, args...)
}

func errLBNotFound(format string, args ...any) *apiError {
	return newAPIError(http.StatusBadRequest, "LoadBalancerNotFound", format, args...)
}

// lookupAll resolves keys with get; any unknown key fails the whole call.
func lookupAll[T any](keys []string, get func(string) (*T, bool), notFound func(missing []string) *apiError) ([]*T, *apiError) {
	var out []*T
	var missing []string
	for _, k := range keys {
		x, ok := get(k)
		switch {
		case !ok:
			missing = append(missing, k)
		case !slices.Contains(out, x):
			out = append(out, x)
		}
	}
	if len(missing) > 0 {
		return nil, notFound(missing)
	}
	return out, nil
}

// elbPage decodes PageSize (1..400, default 400) and Marker.
func elbPage(form url.Values) (limit, offset int, apiErr *apiError) {
	limit = elbMaxPageSize
	if v := form.Get("PageSize"); v != "" {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil || n < 1:
			return 0, 0, errELBValidation("1 validation error detected: Value '%s' at 'pageSize' failed to satisfy constraint: Member must have value greater than or equal to 1", v)
		case n > elbMaxPageSize:
			return 0, 0, errELBValidation("1 validation error detected: Value '%s' at 'pageSize' failed to satisfy constraint: Member must have value less than or equal to %d", v, elbMaxPageSize)
		}
		limit = n
	}
	if m := form.Get("Marker"); m != "" {
		// The marker is the emulator's usual opaque page token.
		_, off, apiErr := pageParams(url.Values{"NextToken": {m}}, 0, 0)
		if apiErr != nil {
			return 0, 0, errELBValidation("Invalid Marker: %s", m)
		}
		offset = off
	}
	return limit, offset, nil
}

// checkCount rejects a list parameter with fewer than 1 or more than max
// members, as the services' input validation does.
func checkCount(param string, values []string, max int) *apiError {
	switch {
	case len(values) == 0:
		return errELBValidation("1 validation error detected: Value '[]' at '%s' failed to satisfy constraint: Member must have length greater than or equal to 1", param)
	case len(values) > max:
		return errELBValidation("1 validation error detected: Value '[%s]' at '%s' failed to satisfy constraint: Member must have length less than or equal to %d",
			strings.Join(values, ", "), param, max)
	}
	return nil
}

func elbTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// elbService serves Classic Elastic Load Balancing (awsQuery, Version
// 2012-06-01). Its accounting name is "elasticloadbalancing".
func elbService(s *elbState) *service {
	tags := s.classicTagger()
	return &service{
		name: "elasticloadbalancing", signingName: "elasticloadbalancing", apiVersion: "2012-06-01",
		protocol: protoAWSQuery, xmlns: "http://elasticloadbalancing.amazonaws.com/doc/2012-06-01/",
		actions: actionTable{
			"DescribeLoadBalancers": s.describeClassicLoadBalancers,
			"DescribeTags":          tags.describe,
			"AddTags":               tags.add,
			"RemoveTags":            tags.remove,
			// Load balancers, listeners, health checks, instances,
			// security groups and subnets (elb_mutate.go).
			"CreateLoadBalancer":                  s.createClassic,
			"DeleteLoadBalancer":                  s.deleteClassic,
			"CreateLoadBalancerListeners":         s.createClassicListeners,
			"DeleteLoadBalancerListeners":         s.deleteClassicListeners,
			"ConfigureHealthCheck":                s.configureHealthCheck,
			"RegisterInstancesWithLoadBalancer":   s.registerClassicInstances,
			"DeregisterInstancesFromLoadBalancer": s.deregisterClassicInstances,
			"DescribeInstanceHealth":              s.describeInstanceHealth,
			"ApplySecurityGroupsToLoadBalancer":   s.applyClassicSecurityGroups,
			"AttachLoadBalancerToSubnets":         s.attachClassicSubnets,
			"DetachLoadBalancerFromSubnets":       s.detachClassicSubnets,
			// Attributes and policies (elb_policies.go).
			"DescribeLoadBalancerAttributes":          s.describeClassicAttributes,
			"ModifyLoadBalancerAttributes":            s.modifyClassicAttributes,
			"CreateLoadBalancerPolicy":                s.createClassicPolicy,
			"DeleteLoadBalancerPolicy":                s.deleteClassicPolicy,
			"DescribeLoadBalancerPolicies":            s.describeClassicPolicies,
			"SetLoadBalancerPoliciesOfListener":       s.setListenerPolicies,
			"SetLoadBalancerPoliciesForBackendServer": s.setBackendPolicies,
		},
	}
}

type xmlELBListener struct {
	Protocol         string `xml:"Protocol"`
	LoadBalancerPort int32  `xml:"LoadBalancerPort"`
	InstanceProtocol string `xml:"InstanceProtocol"`
	InstancePort     int32  `xml:"InstancePort"`
	SSLCertificateID string `xml:"SSLCertificateId,omitempty"`
}

type xmlELBListenerDescription struct {
	Listener    xmlELBListener `xml:"Listener"`
	PolicyNames []string       `xml:"PolicyNames>member"`
}

type xmlELBHealthCheck struct {
	Target             string `xml:"Target"`
	Interval           int32  `xml:"Interval"`
	Timeout            int32  `xml:"Timeout"`
	UnhealthyThreshold int32  `xml:"UnhealthyThreshold"`
	HealthyThreshold   int32  `xml:"HealthyThreshold"`
}

type xmlELBInstance struct {
	InstanceID string `xml:"InstanceId"`
}

type xmlELBSourceSG struct {
	OwnerAlias string `xml:"OwnerAlias"`
	GroupName  string `xml:"GroupName"`
}

type xmlELBPolicies struct {
	OtherPolicies []string `xml:"OtherPolicies>member"`
}

type xmlELBDescription struct {
	LoadBalancerName          string                      `xml:"LoadBalancerName"`
	DNSName                   string                      `xml:"DNSName"`
	CanonicalHostedZoneName   string                      `xml:"CanonicalHostedZoneName,omitempty"`
	CanonicalHostedZoneNameID string                      `xml:"CanonicalHostedZoneNameID"`
	ListenerDescriptions      []xmlELBListenerDescription `xml:"ListenerDescriptions>member"`
	Policies                  xmlELBPolicies              `xml:"Policies"`
	AvailabilityZones         []string                    `xml:"AvailabilityZones>member"`
	Subnets                   []string                    `xml:"Subnets>member"`
	VPCID                     string                      `xml:"VPCId,omitempty"`
	Instances                 []xmlELBInstance            `xml:"Instances>member"`
	HealthCheck               xmlELBHealthCheck           `xml:"HealthCheck"`
	BackendServerDescriptions []xmlELBBackend             `xml:"BackendServerDescriptions>member"`
	SourceSecurityGroup       *xmlELBSourceSG             `xml:"SourceSecurityGroup,omitempty"`
	SecurityGroups            []string                    `xml:"SecurityGroups>member"`
	CreatedTime               string                      `xml:"CreatedTime"`
	Scheme                    string                      `xml:"Scheme"`
}

type elbDescribeLoadBalancersResult struct {
	LoadBalancerDescriptions []xmlELBDescription `xml:"LoadBalancerDescriptions>member"`
	NextMarker               string              `xml:"NextMarker,omitempty"`
}

// classicByNames looks up Classic load balancers; an unknown name fails the
// whole call, as in AWS.
func (s *elbState) classicByNames(names []string) ([]*lbRec, *apiError) {
	return lookupAll(names, s.classic.get, func(missing []string) *apiError {
		return errLBNotFound("There is no ACTIVE Load Balancer named '%s'", missing[0])
	})
}

func (s *elbState) describeClassicLoadBalancers(form url.Values) (any, *apiError) {
	limit, offset, apiErr := elbPage(form)
	if apiErr != nil {
		return nil, apiErr
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	items := s.classic.list()
	if names := memberValues(form, "LoadBalancerNames"); len(names) > 0 {
		if items, apiErr = s.classicByNames(names); apiErr != nil {
			return nil, apiErr
		}
	}
	page, next := paginate(items, limit, offset)
	res := elbDescribeLoadBalancersResult{NextMarker: next}
	for _, lb := range page {
		res.LoadBalancerDescriptions = append(res.LoadBalancerDescriptions, s.xmlClassic(lb))
	}
	return res, nil
}

// xmlClassic renders a Classic load balancer. Callers hold s.mu.
func (s *elbState) xmlClassic(lb *lbRec) xmlELBDescription {
	d := xmlELBDescription{
		LoadBalancerName: lb.Name, DNSName: lb.DNSName, CanonicalHostedZoneNameID: lb.zoneID,
		AvailabilityZones: lb.zones, Subnets: lb.Subnets, VPCID: lb.VPCID, SecurityGroups: lb.SecurityGroups,
		CreatedTime: elbTime(lb.CreatedTime), Scheme: lb.Scheme,
		HealthCheck: xmlELBHealthCheck{Interval: 30, Timeout: 5, UnhealthyThreshold: 2, HealthyThreshold: 10},
	}
	if lb.Scheme == LBSchemeInternetFacing {
		d.CanonicalHostedZoneName = lb.DNSName
	}
	if lb.healthPort > 0 {
		d.HealthCheck.Target = fmt.Sprintf("TCP:%d", lb.healthPort)
	}
	for _, l := range lb.Listeners {
		d.ListenerDescriptions = append(d.ListenerDescriptions, xmlELBListenerDescription{Listener: xmlELBListener{
			Protocol: l.Protocol, LoadBalancerPort: l.Port, InstanceProtocol: l.InstanceProtocol,
			InstancePort: l.InstancePort, SSLCertificateID: l.CertificateARN,
		}})
	}
	for _, id := range lb.Instances {
		d.Instances = append(d.Instances, xmlELBInstance{InstanceID: id})
	}
	if lb.sourceSG != "" {
		d.SourceSecurityGroup = &xmlELBSourceSG{OwnerAlias: s.account, GroupName: lb.sourceSG}
	}
	lb.ext.render(&d)
	return d
}

// errInvalidConfiguration is the error both load-balancing APIs return for a
// request that contradicts the resource's configuration.
func errInvalidConfiguration(format string, args ...any) *apiError {
	return newAPIError(http.StatusBadRequest, "InvalidConfigurationRequest", format, args...)
}
