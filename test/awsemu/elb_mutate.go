package awsemu

import (
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Mutating Classic ELB calls: load balancers, listeners, health checks,
// instances, security groups and subnets (tags are in elb_tags.go,
// attributes and policies in elb_policies.go).

// classicByName finds one Classic load balancer. Callers hold s.mu.
func (s *elbState) classicByName(form url.Values) (*lbRec, *apiError) {
	name := form.Get("LoadBalancerName")
	if name == "" {
		return nil, errMissingParameter("LoadBalancerName")
	}
	lb, ok := s.classic.get(name)
	if !ok {
		return nil, errLBNotFound("There is no ACTIVE Load Balancer named '%s'", name)
	}
	return lb, nil
}

// parseClassicListeners decodes Listeners.member.N.
func parseClassicListeners(form url.Values) ([]LBListener, *apiError) {
	var out []LBListener
	for _, n := range indexedKeys(form, "Listeners.member") {
		p := "Listeners.member." + strconv.Itoa(n) + "."
		port, err1 := strconv.Atoi(form.Get(p + "LoadBalancerPort"))
		iport, err2 := strconv.Atoi(form.Get(p + "InstancePort"))
		l := LBListener{
			Protocol: strings.ToUpper(form.Get(p + "Protocol")), Port: int32(port),
			InstanceProtocol: strings.ToUpper(form.Get(p + "InstanceProtocol")), InstancePort: int32(iport),
			CertificateARN: form.Get(p + "SSLCertificateId"),
		}
		l.InstanceProtocol = orDefault(l.InstanceProtocol, l.Protocol)
		switch {
		case err1 != nil || err2 != nil || port < 1 || port > 65535 || iport < 1 || iport > 65535:
			return nil, errELBValidation("LoadBalancerPort and InstancePort must be between 1 and 65535")
		case !slices.Contains([]string{"TCP", "SSL", "HTTP", "HTTPS"}, l.Protocol) ||
			!slices.Contains([]string{"TCP", "SSL", "HTTP", "HTTPS"}, l.InstanceProtocol):
			return nil, newAPIError(http.StatusBadRequest, "UnsupportedProtocol", "Protocol must be one of HTTP, HTTPS, TCP, SSL")
		case (l.Protocol == "HTTPS" || l.Protocol == "SSL") && l.CertificateARN == "":
			return nil, errELBValidation("SSLCertificateId is required for an %s listener", l.Protocol)
		}
		out = append(out, l)
	}
	return out, nil
}

// classicSubnets resolves subnets for a Classic load balancer in vpc (""
// = take it from the subnets), one per zone.
func (s *elbState) classicSubnets(ids []string, vpc string, taken []string) (zones []string, vpcOut string, apiErr *apiError) {
	vpcOut = vpc
	for _, id := range ids {
		sn, ok := s.ec2.subnet(id)
		if !ok {
			return nil, "", newAPIError(http.StatusBadRequest, "SubnetNotFound", "One or more subnets not found: %s", id)
		}
		if vpcOut == "" {
			vpcOut = sn.VPCID
		} else if sn.VPCID != vpcOut {
			return nil, "", errInvalidConfiguration("Subnet %s is in VPC %s, not %s", id, sn.VPCID, vpcOut)
		}
		if slices.Contains(taken, sn.AvailabilityZone) || slices.Contains(zones, sn.AvailabilityZone) {
			return nil, "", errInvalidConfiguration("LoadBalancer attached to multiple subnets in AZ %s", sn.AvailabilityZone)
		}
		zones = append(zones, sn.AvailabilityZone)
	}
	return zones, vpcOut, nil
}

// checkSecurityGroups verifies that groups exist in vpc and returns the
// name of the first. Callers hold s.mu.
func (s *elbState) checkSecurityGroups(ids []string, vpc string) (string, *apiError) {
	first := ""
	for i, id := range ids {
		sg, ok := s.ec2.securityGroup(id)
		if !ok || (vpc != "" && sg.VPCID != vpc) {
			return "", newAPIError(http.StatusBadRequest, "InvalidSecurityGroup", "One or more security groups are invalid: %s", id)
		}
		if i == 0 {
			first = sg.Name
		}
	}
	return first, nil
}

type elbCreateResult struct {
	DNSName string `xml:"DNSName"`
}

func (s *elbState) createClassic(form url.Values) (any, *apiError) {
	name := form.Get("LoadBalancerName")
	if !lbNameRE.MatchString(name) || strings.HasPrefix(name, "internal-") {
		return nil, errELBValidation("LoadBalancerName '%s' must be 1-32 characters of [A-Za-z0-9-], not start or end with '-' nor start with 'internal-'", name)
	}
	listeners, apiErr := parseClassicListeners(form)
	if apiErr != nil {
		return nil, apiErr
	}
	if len(listeners) == 0 {
		return nil, errELBValidation("1 validation error detected: Value null at 'listeners' failed to satisfy constraint: Member must not be null")
	}
	scheme := orDefault(form.Get("Scheme"), LBSchemeInternetFacing)
	if scheme != LBSchemeInternetFacing && scheme != LBSchemeInternal {
		return nil, newAPIError(http.StatusBadRequest, "InvalidScheme", "Invalid scheme '%s'", scheme)
	}
	tags, apiErr := parseLBTags(form)
	if apiErr != nil {
		return nil, apiErr
	}
	subnets, azs, sgs := memberValues(form, "Subnets"), memberValues(form, "AvailabilityZones"), memberValues(form, "SecurityGroups")
	switch {
	case len(subnets) > 0 && len(azs) > 0:
		return nil, errELBValidation("Subnets and AvailabilityZones cannot both be specified")
	case len(subnets) == 0:
		return nil, errELBValidation("Subnets are required: the emulator serves VPC load balancers only")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, dup := s.classic.get(name); dup {
		// AWS answers a repeated identical create with the existing load
		// balancer and fails only when the settings differ.
		want := map[string]string{}
		for _, t := range tags {
			want[t.Key] = t.Value
		}
		if old.Scheme == scheme && slices.Equal(old.Subnets, subnets) && slices.Equal(old.SecurityGroups, sgs) &&
			slices.EqualFunc(old.Listeners, listeners, sameClassicListener) && maps.Equal(old.Tags, want) {
			return elbCreateResult{DNSName: old.DNSName}, nil
		}
		return nil, newAPIError(http.StatusBadRequest, "DuplicateLoadBalancerName",
			"Load Balancer named '%s' already exists and it is configured with different parameters.", name)
	}
	zones, vpc, apiErr := s.classicSubnets(subnets, "", nil)
	if apiErr != nil {
		return nil, apiErr
	}
	sourceSG, apiErr := s.checkSecurityGroups(sgs, vpc)
	if apiErr != nil {
		return nil, apiErr
	}
	lb := LoadBalancer{Name: name, Type: LBTypeClassic, Scheme: scheme, VPCID: vpc, Subnets: subnets,
		SecurityGroups: sgs, Listeners: listeners, CreatedTime: time.Now().UTC().Truncate(time.Millisecond)}
	lb.DNSName = lbDNSName(s.account, s.region, &lb)
	if apiErr := addLBTags(&lb.Tags, tags); apiErr != nil {
		return nil, apiErr
	}
	rec := &lbRec{LoadBalancer: lb, zones: zones, zoneID: lbZoneID(s.region, LBTypeClassic), sourceSG: sourceSG,
		healthPort: listeners[0].InstancePort, ext: newClassicExt()}
	s.classic.put(name, rec)
	return elbCreateResult{DNSName: lb.DNSName}, nil
}

func (s *elbState) deleteClassic(form url.Values) (any, *apiError) {
	name := form.Get("LoadBalancerName")
	if name == "" {
		return nil, errMissingParameter("LoadBalancerName")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.classic.remove(name) // deleting a missing load balancer succeeds, as in AWS
	return struct{}{}, nil
}

func (s *elbState) createClassicListeners(form url.Values) (any, *apiError) {
	listeners, apiErr := parseClassicListeners(form)
	if apiErr != nil {
		return nil, apiErr
	}
	if len(listeners) == 0 {
		return nil, errELBValidation("Listeners must not be empty")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, apiErr := s.classicByName(form)
	if apiErr != nil {
		return nil, apiErr
	}
	var add []LBListener
	for _, l := range listeners {
		i := slices.IndexFunc(lb.Listeners, func(o LBListener) bool { return o.Port == l.Port })
		switch {
		case i < 0:
			add = append(add, l)
		case !sameClassicListener(lb.Listeners[i], l):
			return nil, newAPIError(http.StatusBadRequest, "DuplicateListener",
				"A listener already exists for %s with LoadBalancerPort %d, but with a different InstancePort, Protocol, or SSLCertificateId", lb.Name, l.Port)
		}
	}
	lb.Listeners = append(lb.Listeners, add...)
	return struct{}{}, nil
}

func (s *elbState) deleteClassicListeners(form url.Values) (any, *apiError) {
	var ports []int32
	for _, v := range memberValues(form, "LoadBalancerPorts") {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, errELBValidation("Invalid LoadBalancerPort '%s'", v)
		}
		ports = append(ports, int32(n))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, apiErr := s.classicByName(form)
	if apiErr != nil {
		return nil, apiErr
	}
	lb.Listeners = slices.DeleteFunc(lb.Listeners, func(l LBListener) bool { return slices.Contains(ports, l.Port) })
	for _, p := range ports {
		delete(lb.extOf().listenerPolicies, p)
	}
	return struct{}{}, nil
}

var healthTargetRE = regexp.MustCompile(`^(TCP|SSL|HTTP|HTTPS):(\d{1,5})(/.*)?$`)

type elbHealthCheckResult struct {
	HealthCheck xmlELBHealthCheck `xml:"HealthCheck"`
}

func (s *elbState) configureHealthCheck(form url.Values) (any, *apiError) {
	num := func(name string, lo, hi int) (int32, *apiError) {
		v := form.Get("HealthCheck." + name)
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return 0, errELBValidation("HealthCheck.%s '%s' must be between %d and %d", name, v, lo, hi)
		}
		return int32(n), nil
	}
	var hc xmlELBHealthCheck
	var apiErr *apiError
	hc.Target = form.Get("HealthCheck.Target")
	m := healthTargetRE.FindStringSubmatch(hc.Target)
	if m == nil {
		return nil, errELBValidation("HealthCheck.Target '%s' must be TCP:<port>, SSL:<port>, HTTP:<port>/<path> or HTTPS:<port>/<path>", hc.Target)
	}
	if port, _ := strconv.Atoi(m[2]); port < 1 || port > 65535 || (strings.HasPrefix(m[1], "HTTP") != (m[3] != "")) {
		return nil, errELBValidation("HealthCheck.Target '%s' is invalid", hc.Target)
	}
	for _, f := range []struct {
		name   string
		dst    *int32
		lo, hi int
	}{{"Interval", &hc.Interval, 5, 300}, {"Timeout", &hc.Timeout, 2, 60}, {"HealthyThreshold", &hc.HealthyThreshold, 2, 10}, {"UnhealthyThreshold", &hc.UnhealthyThreshold, 2, 10}} {
		if *f.dst, apiErr = num(f.name, f.lo, f.hi); apiErr != nil {
			return nil, apiErr
		}
	}
	if hc.Timeout >= hc.Interval {
		return nil, errELBValidation("HealthCheck Timeout must be less than Interval")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, apiErr := s.classicByName(form)
	if apiErr != nil {
		return nil, apiErr
	}
	lb.extOf().health = &hc
	return elbHealthCheckResult{HealthCheck: hc}, nil
}

type elbInstancesResult struct {
	Instances []xmlELBInstance `xml:"Instances>member"`
}

// classicInstances decodes Instances.member.N.InstanceId and checks that
// each instance exists in the load balancer's VPC. Callers hold s.mu.
func (s *elbState) classicInstances(form url.Values, lb *lbRec) ([]string, *apiError) {
	var ids []string
	for _, n := range indexedKeys(form, "Instances.member") {
		id := form.Get("Instances.member." + strconv.Itoa(n) + ".InstanceId")
		vpc, _, ok := s.ec2.instanceStatus(id)
		if !ok || (lb.VPCID != "" && vpc != lb.VPCID) {
			return nil, newAPIError(http.StatusBadRequest, "InvalidInstance", "The requested instance %s is not a valid EC2 instance in %s", id, lb.VPCID)
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, errELBValidation("Instances must not be empty")
	}
	return ids, nil
}

func instancesResult(ids []string) elbInstancesResult {
	var res elbInstancesResult
	for _, id := range ids {
		res.Instances = append(res.Instances, xmlELBInstance{InstanceID: id})
	}
	return res
}

func (s *elbState) registerClassicInstances(form url.Values) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, apiErr := s.classicByName(form)
	if apiErr != nil {
		return nil, apiErr
	}
	ids, apiErr := s.classicInstances(form, lb)
	if apiErr != nil {
		return nil, apiErr
	}
	for _, id := range ids {
		// AWS registers running instances only.
		if _, state, ok := s.ec2.instanceStatus(id); ok && state != "running" {
			return nil, newAPIError(http.StatusBadRequest, "InvalidInstance", "EC2 instance %s is not in running state.", id)
		}
	}
	for _, id := range ids {
		if !slices.Contains(lb.Instances, id) {
			lb.Instances = append(lb.Instances, id)
		}
	}
	return instancesResult(lb.Instances), nil
}

func (s *elbState) deregisterClassicInstances(form url.Values) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, apiErr := s.classicByName(form)
	if apiErr != nil {
		return nil, apiErr
	}
	ids, apiErr := s.classicInstances(form, lb)
	if apiErr != nil {
		return nil, apiErr
	}
	lb.Instances = slices.DeleteFunc(lb.Instances, func(id string) bool { return slices.Contains(ids, id) })
	return instancesResult(lb.Instances), nil
}

type elbSecurityGroupsResult struct {
	SecurityGroups []string `xml:"SecurityGroups>member"`
}

func (s *elbState) applyClassicSecurityGroups(form url.Values) (any, *apiError) {
	sgs := memberValues(form, "SecurityGroups")
	if len(sgs) == 0 {
		return nil, errELBValidation("SecurityGroups must not be empty")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, apiErr := s.classicByName(form)
	if apiErr != nil {
		return nil, apiErr
	}
	first, apiErr := s.checkSecurityGroups(sgs, lb.VPCID)
	if apiErr != nil {
		return nil, apiErr
	}
	lb.SecurityGroups, lb.sourceSG = slices.Clone(sgs), first
	return elbSecurityGroupsResult{SecurityGroups: lb.SecurityGroups}, nil
}

type elbSubnetsResult struct {
	Subnets []string `xml:"Subnets>member"`
}

func (s *elbState) attachClassicSubnets(form url.Values) (any, *apiError) {
	ids := memberValues(form, "Subnets")
	if len(ids) == 0 {
		return nil, errELBValidation("Subnets must not be empty")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, apiErr := s.classicByName(form)
	if apiErr != nil {
		return nil, apiErr
	}
	ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return slices.Contains(lb.Subnets, id) })
	zones, _, apiErr := s.classicSubnets(ids, lb.VPCID, lb.zones)
	if apiErr != nil {
		return nil, apiErr
	}
	lb.Subnets, lb.zones = append(lb.Subnets, ids...), append(lb.zones, zones...)
	return elbSubnetsResult{Subnets: lb.Subnets}, nil
}

func (s *elbState) detachClassicSubnets(form url.Values) (any, *apiError) {
	ids := memberValues(form, "Subnets")
	if len(ids) == 0 {
		return nil, errELBValidation("Subnets must not be empty")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, apiErr := s.classicByName(form)
	if apiErr != nil {
		return nil, apiErr
	}
	var subnets, zones []string
	for i, id := range lb.Subnets {
		if !slices.Contains(ids, id) {
			subnets, zones = append(subnets, id), append(zones, lb.zones[i])
		}
	}
	if len(subnets) == 0 {
		return nil, errInvalidConfiguration("A load balancer must be attached to at least one subnet")
	}
	lb.Subnets, lb.zones = subnets, zones
	return elbSubnetsResult{Subnets: lb.Subnets}, nil
}

func sameClassicListener(a, b LBListener) bool {
	return a.Protocol == b.Protocol && a.Port == b.Port && a.InstanceProtocol == b.InstanceProtocol &&
		a.InstancePort == b.InstancePort && a.CertificateARN == b.CertificateARN
}

type xmlELBInstanceState struct {
	InstanceID  string `xml:"InstanceId"`
	State       string `xml:"State"`
	ReasonCode  string `xml:"ReasonCode"`
	Description string `xml:"Description"`
}

type elbInstanceHealthResult struct {
	InstanceStates []xmlELBInstanceState `xml:"InstanceStates>member"`
}

// describeInstanceHealth reports registered instances InService while they
// run and OutOfService otherwise; health checks are not simulated.
func (s *elbState) describeInstanceHealth(form url.Values) (any, *apiError) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	lb, apiErr := s.classicByName(form)
	if apiErr != nil {
		return nil, apiErr
	}
	ids := lb.Instances
	if len(indexedKeys(form, "Instances.member")) > 0 {
		if ids, apiErr = s.classicInstances(form, lb); apiErr != nil {
			return nil, apiErr
		}
	}
	var res elbInstanceHealthResult
	for _, id := range ids {
		st := xmlELBInstanceState{InstanceID: id, State: "InService", ReasonCode: "N/A", Description: "N/A"}
		switch _, state, ok := s.ec2.instanceStatus(id); {
		case !slices.Contains(lb.Instances, id):
			st.State, st.ReasonCode, st.Description = "Unknown", "ELB", "Instance is not currently registered with the LoadBalancer."
		case !ok || state != "running":
			st.State, st.ReasonCode, st.Description = "OutOfService", "Instance", "Instance is in stopped state."
		}
		res.InstanceStates = append(res.InstanceStates, st)
	}
	return res, nil
}
