package awsemu

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// ELBv2 target groups and targets: CreateTargetGroup, DeleteTargetGroup,
// ModifyTargetGroup, DescribeTargetGroupAttributes,
// ModifyTargetGroupAttributes, RegisterTargets, DeregisterTargets and
// DescribeTargetHealth.

// v2Target is a target registered with a target group.
type v2Target struct {
	id   string
	port int32
}

// v2TG finds the target group named by TargetGroupArn. Callers hold s.mu.
func (s *elbState) v2TG(form url.Values) (*targetGroupRec, *apiError) {
	arn := form.Get("TargetGroupArn")
	if arn == "" {
		return nil, errMissingParameter("TargetGroupArn")
	}
	tg, ok := s.targetGroups.get(arn)
	if !ok {
		return nil, newAPIError(http.StatusBadRequest, "TargetGroupNotFound", "Target groups '%s' not found", arn)
	}
	return tg, nil
}

type elbv2TargetGroupsResult struct {
	TargetGroups []xmlV2TargetGroup `xml:"TargetGroups>member"`
}

// healthCheckParams applies the health-check parameters of a
// Create/ModifyTargetGroup request to tg.
func healthCheckParams(form url.Values, tg *targetGroupRec) *apiError {
	if v := form.Get("HealthCheckProtocol"); v != "" {
		if !slices.Contains([]string{"TCP", "HTTP", "HTTPS"}, v) {
			return errELBValidation("Health check protocol '%s' must be TCP, HTTP or HTTPS", v)
		}
		tg.HealthCheckProtocol = v
		if !strings.HasPrefix(v, "HTTP") {
			tg.HealthCheckPath, tg.matcher = "", ""
		} else if tg.HealthCheckPath == "" {
			tg.HealthCheckPath = "/"
		}
	}
	if v := form.Get("HealthCheckPort"); v != "" {
		if n, err := strconv.Atoi(v); v != "traffic-port" && (err != nil || n < 1 || n > 65535) {
			return errELBValidation("Health check port '%s' must be 'traffic-port' or between 1 and 65535", v)
		}
		tg.HealthCheckPort = v
	}
	if v := form.Get("HealthCheckPath"); v != "" {
		if !strings.HasPrefix(tg.HealthCheckProtocol, "HTTP") || !strings.HasPrefix(v, "/") {
			return errELBValidation("A health check path must start with '/' and needs the HTTP or HTTPS health check protocol")
		}
		tg.HealthCheckPath = v
	}
	if v := form.Get("Matcher.HttpCode"); v != "" {
		tg.matcher = v
	}
	for _, f := range []struct {
		key    string
		dst    *int32
		lo, hi int
	}{{"HealthCheckIntervalSeconds", &tg.HealthCheckIntervalSeconds, 5, 300}, {"HealthCheckTimeoutSeconds", &tg.timeout, 2, 120},
		{"HealthyThresholdCount", &tg.HealthyThreshold, 2, 10}, {"UnhealthyThresholdCount", &tg.UnhealthyThreshold, 2, 10}} {
		v := form.Get(f.key)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < f.lo || n > f.hi {
			return errELBValidation("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: Member must have value between %d and %d", v, f.key, f.lo, f.hi)
		}
		*f.dst = int32(n)
	}
	return nil
}

func (s *elbState) createTargetGroup(form url.Values) (any, *apiError) {
	name := form.Get("Name")
	if !lbNameRE.MatchString(name) {
		return nil, errELBValidation("Target group name '%s' must be 1-32 characters of [A-Za-z0-9-] and not start or end with '-'", name)
	}
	tg := TargetGroup{Name: name, Protocol: form.Get("Protocol"), TargetType: orDefault(form.Get("TargetType"), "instance")}
	if !slices.Contains([]string{"TCP", "UDP", "TCP_UDP", "TLS"}, tg.Protocol) {
		return nil, errELBValidation("Target group protocol '%s' must be TCP, UDP, TCP_UDP or TLS (awsemu serves Network load balancers)", tg.Protocol)
	}
	port, err := strconv.Atoi(form.Get("Port"))
	if err != nil || port < 1 || port > 65535 {
		return nil, errELBValidation("Port '%s' must be between 1 and 65535", form.Get("Port"))
	}
	tg.Port = int32(port)
	if tg.TargetType != "instance" {
		return nil, errELBValidation("awsemu supports target type 'instance' only, not '%s'", tg.TargetType)
	}
	tags, apiErr := parseLBTags(form)
	if apiErr != nil {
		return nil, apiErr
	}
	vpc := form.Get("VpcId")
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.ec2.vpc(vpc); !ok {
		return nil, errELBValidation("The VPC ID '%s' is not found", vpc)
	}
	n := s.seq.Add(1)
	tg.ARN = elbArn(s.region, s.account, fmt.Sprintf("targetgroup/%s/%016x", name, lbHash(s.account, s.region, "targetgroup", name, strconv.FormatUint(n, 10))))
	rec := &targetGroupRec{TargetGroup: tg.defaulted(s.region, s.account, LBTypeNetwork), vpcID: vpc}
	if apiErr := healthCheckParams(form, rec); apiErr != nil {
		return nil, apiErr
	}
	for _, old := range s.targetGroups.list() {
		if old.Name != name {
			continue
		}
		// AWS answers a repeated create with the existing group only when
		// every setting is the same (compared as DescribeTargetGroups
		// reports them, so an explicit default equals an omitted one).
		a, b := xmlTargetGroup(old), xmlTargetGroup(rec)
		a.TargetGroupArn, a.LoadBalancerArns, b.TargetGroupArn, b.LoadBalancerArns = "", nil, "", nil
		if old.vpcID == vpc && reflect.DeepEqual(a, b) {
			return elbv2TargetGroupsResult{TargetGroups: []xmlV2TargetGroup{xmlTargetGroup(old)}}, nil // idempotent, as in AWS
		}
		return nil, newAPIError(http.StatusBadRequest, "DuplicateTargetGroupName", "A target group with the same name '%s' exists, but with different settings", name)
	}
	if apiErr := addLBTags(&rec.Tags, tags); apiErr != nil {
		return nil, apiErr
	}
	s.targetGroups.put(rec.ARN, rec)
	return elbv2TargetGroupsResult{TargetGroups: []xmlV2TargetGroup{xmlTargetGroup(rec)}}, nil
}

func (s *elbState) deleteTargetGroup(form url.Values) (any, *apiError) {
	arn := form.Get("TargetGroupArn")
	if elbv2Resource(arn) != "targetgroup" {
		return nil, errELBValidation("'%s' is not a valid target group ARN", arn)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.listeners.list() {
		if l.tgArn == arn {
			return nil, newAPIError(http.StatusBadRequest, "ResourceInUse", "Target group '%s' is currently in use by a listener or a rule", arn)
		}
	}
	s.targetGroups.remove(arn) // a missing target group is not an error
	return struct{}{}, nil
}

func (s *elbState) modifyTargetGroup(form url.Values) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tg, apiErr := s.v2TG(form)
	if apiErr != nil {
		return nil, apiErr
	}
	next := *tg
	if apiErr := healthCheckParams(form, &next); apiErr != nil {
		return nil, apiErr
	}
	*tg = next
	return elbv2TargetGroupsResult{TargetGroups: []xmlV2TargetGroup{xmlTargetGroup(tg)}}, nil
}

func (s *elbState) describeTGAttributes(form url.Values) (any, *apiError) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	tg, apiErr := s.v2TG(form)
	if apiErr != nil {
		return nil, apiErr
	}
	return attributesResult(tgAttributeDefaults, tg.attrs), nil
}

func (s *elbState) modifyTGAttributes(form url.Values) (any, *apiError) {
	attrs, apiErr := parseAttributes(form, tgAttributeDefaults, "Target group")
	if apiErr != nil {
		return nil, apiErr
	}
	if v, ok := attrs["deregistration_delay.timeout_seconds"]; ok {
		if n, err := strconv.Atoi(v); err != nil || n < 0 || n > 3600 {
			return nil, errInvalidConfiguration("deregistration_delay.timeout_seconds '%s' must be between 0 and 3600", v)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tg, apiErr := s.v2TG(form)
	if apiErr != nil {
		return nil, apiErr
	}
	if attrs["preserve_client_ip.enabled"] == "false" && (tg.Protocol == "UDP" || tg.Protocol == "TCP_UDP") {
		return nil, errInvalidConfiguration("Client IP preservation cannot be disabled for UDP and TCP_UDP target groups")
	}
	if tg.attrs == nil {
		tg.attrs = map[string]string{}
	}
	maps.Copy(tg.attrs, attrs)
	return attributesResult(tgAttributeDefaults, tg.attrs), nil
}

// parseTargets decodes Targets.member.N (Id, Port; the port defaults to
// the target group's).
func parseTargets(form url.Values, tg *targetGroupRec) ([]v2Target, *apiError) {
	var out []v2Target
	for _, n := range indexedKeys(form, "Targets.member") {
		p := "Targets.member." + strconv.Itoa(n) + "."
		t := v2Target{id: form.Get(p + "Id"), port: tg.Port}
		if v := form.Get(p + "Port"); v != "" {
			port, err := strconv.Atoi(v)
			if err != nil || port < 1 || port > 65535 {
				return nil, errELBValidation("Target port '%s' must be between 1 and 65535", v)
			}
			t.port = int32(port)
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, errELBValidation("Targets must not be empty")
	}
	return out, nil
}

func (s *elbState) registerTargets(form url.Values) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tg, apiErr := s.v2TG(form)
	if apiErr != nil {
		return nil, apiErr
	}
	targets, apiErr := parseTargets(form, tg)
	if apiErr != nil {
		return nil, apiErr
	}
	for _, t := range targets {
		vpc, state, ok := s.ec2.instanceStatus(t.id)
		// AWS registers running instances only.
		if !ok || vpc != tg.vpcID || state != "running" {
			return nil, newAPIError(http.StatusBadRequest, "InvalidTarget",
				"The following targets are not in a running state and cannot be registered: '%s'", t.id)
		}
	}
	for _, t := range targets {
		if !slices.Contains(tg.targets, t) {
			tg.targets = append(tg.targets, t)
		}
	}
	return struct{}{}, nil
}

func (s *elbState) deregisterTargets(form url.Values) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tg, apiErr := s.v2TG(form)
	if apiErr != nil {
		return nil, apiErr
	}
	targets, apiErr := parseTargets(form, tg)
	if apiErr != nil {
		return nil, apiErr
	}
	tg.targets = slices.DeleteFunc(tg.targets, func(t v2Target) bool { return slices.Contains(targets, t) })
	return struct{}{}, nil
}

type xmlV2TargetDescription struct {
	ID   string `xml:"Id"`
	Port int32  `xml:"Port"`
}

type xmlV2TargetHealth struct {
	State       string `xml:"State"`
	Reason      string `xml:"Reason,omitempty"`
	Description string `xml:"Description,omitempty"`
}

type xmlV2TargetHealthDescription struct {
	Target          xmlV2TargetDescription `xml:"Target"`
	HealthCheckPort string                 `xml:"HealthCheckPort"`
	TargetHealth    xmlV2TargetHealth      `xml:"TargetHealth"`
}

type elbv2TargetHealthResult struct {
	TargetHealthDescriptions []xmlV2TargetHealthDescription `xml:"TargetHealthDescriptions>member"`
}

// describeTargetHealth reports registered targets healthy while their
// instance runs; health checks are not simulated.
func (s *elbState) describeTargetHealth(form url.Values) (any, *apiError) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	tg, apiErr := s.v2TG(form)
	if apiErr != nil {
		return nil, apiErr
	}
	targets := tg.targets
	if len(indexedKeys(form, "Targets.member")) > 0 {
		if targets, apiErr = parseTargets(form, tg); apiErr != nil {
			return nil, apiErr
		}
		var uniq []v2Target // a target named twice is reported once
		for _, t := range targets {
			if !slices.Contains(uniq, t) {
				uniq = append(uniq, t)
			}
		}
		targets = uniq
	}
	var res elbv2TargetHealthResult
	for _, t := range targets {
		d := xmlV2TargetHealthDescription{Target: xmlV2TargetDescription{ID: t.id, Port: t.port}, HealthCheckPort: tg.HealthCheckPort,
			TargetHealth: xmlV2TargetHealth{State: "healthy"}}
		if d.HealthCheckPort == "traffic-port" {
			d.HealthCheckPort = strconv.Itoa(int(t.port))
		}
		_, state, ok := s.ec2.instanceStatus(t.id)
		h := &d.TargetHealth
		switch {
		case !slices.Contains(tg.targets, t):
			h.State, h.Reason, h.Description = "unused", "Target.NotRegistered", "Target is not registered to the target group"
		case len(tg.lbArns) == 0:
			h.State, h.Reason, h.Description = "unused", "Target.NotInUse", "Target group is not configured to receive traffic from the load balancer"
		case !ok || state != "running":
			h.State, h.Reason, h.Description = "unused", "Target.InvalidState", "Target is in the stopped state"
		}
		res.TargetHealthDescriptions = append(res.TargetHealthDescriptions, d)
	}
	return res, nil
}
