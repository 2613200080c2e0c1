package awsemu

import (
	"fmt"
	"hash/fnv"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The load-balancing model shared by Classic ELB (elb.go) and ELBv2
// (elbv2.go): fixture types, defaults, validation and the state tables.

// Load balancer types of a fixture LoadBalancer. Classic load balancers are
// served by the Elastic Load Balancing API (2012-06-01), the others by
// ELBv2 (2015-12-01).
const (
	LBTypeClassic     = "classic"
	LBTypeNetwork     = "network"
	LBTypeApplication = "application"
)

// Load balancer schemes.
const (
	LBSchemeInternetFacing = "internet-facing"
	LBSchemeInternal       = "internal"
)

// LoadBalancer is an Elastic Load Balancing load balancer. Empty fields get
// defaults: Type classic, Scheme internet-facing, VPCID from the subnets, a
// DNS name derived as AWS does (<name>-<number>.<region>.elb.amazonaws.com
// for Classic and Application load balancers, with an "internal-" prefix
// when internal; <name>-<16 hex>.elb.<region>.amazonaws.com for Network
// load balancers) and, for ELBv2, the ARN
// arn:aws:elasticloadbalancing:<region>:<account>:loadbalancer/net|app/<name>/<16 hex>.
// The derived parts are stable hashes of account, region, type and name.
type LoadBalancer struct {
	Name           string            `json:"name"`
	Type           string            `json:"type,omitempty"`
	Scheme         string            `json:"scheme,omitempty"`
	DNSName        string            `json:"dnsName,omitempty"`
	ARN            string            `json:"arn,omitempty"`
	VPCID          string            `json:"vpcId,omitempty"`
	Subnets        []string          `json:"subnets,omitempty"`
	SecurityGroups []string          `json:"securityGroups,omitempty"`
	Tags           map[string]string `json:"tags,omitempty"`
	// Listeners of the load balancer. Classic listeners forward to
	// InstancePort on the registered Instances; ELBv2 listeners forward to
	// one of TargetGroups.
	Listeners []LBListener `json:"listeners,omitempty"`
	// Instances registered with a Classic load balancer.
	Instances []string `json:"instances,omitempty"`
	// TargetGroups of an ELBv2 load balancer. As in AWS, a group is
	// attached (LoadBalancerArns) only while a listener forwards to it.
	TargetGroups []TargetGroup `json:"targetGroups,omitempty"`
	CreatedTime  time.Time     `json:"createdTime,omitzero"`
}

// LBListener is a listener. Protocol is TCP, SSL, HTTP or HTTPS on Classic
// load balancers (InstanceProtocol and InstancePort default to Protocol and
// Port), TCP, UDP, TCP_UDP or TLS on Network and HTTP or HTTPS on
// Application load balancers. TargetGroup names the ELBv2 target group the
// default action forwards to.
type LBListener struct {
	Protocol         string            `json:"protocol"`
	Port             int32             `json:"port"`
	InstanceProtocol string            `json:"instanceProtocol,omitempty"`
	InstancePort     int32             `json:"instancePort,omitempty"`
	TargetGroup      string            `json:"targetGroup,omitempty"`
	CertificateARN   string            `json:"certificateArn,omitempty"`
	SSLPolicy        string            `json:"sslPolicy,omitempty"`
	Tags             map[string]string `json:"tags,omitempty"`
}

// TargetGroup is an ELBv2 target group. Defaults: Protocol TCP (Network) or
// HTTP (Application), TargetType instance, health checks on the traffic
// port with the protocol's AWS defaults, an ARN
// arn:aws:elasticloadbalancing:<region>:<account>:targetgroup/<name>/<16 hex>.
type TargetGroup struct {
	Name                       string            `json:"name"`
	ARN                        string            `json:"arn,omitempty"`
	Protocol                   string            `json:"protocol,omitempty"`
	Port                       int32             `json:"port"`
	TargetType                 string            `json:"targetType,omitempty"`
	HealthCheckProtocol        string            `json:"healthCheckProtocol,omitempty"`
	HealthCheckPort            string            `json:"healthCheckPort,omitempty"`
	HealthCheckPath            string            `json:"healthCheckPath,omitempty"`
	HealthCheckIntervalSeconds int32             `json:"healthCheckIntervalSeconds,omitempty"`
	HealthyThreshold           int32             `json:"healthyThreshold,omitempty"`
	UnhealthyThreshold         int32             `json:"unhealthyThreshold,omitempty"`
	Tags                       map[string]string `json:"tags,omitempty"`
}

// elbState is the model behind both load-balancing APIs. Classic and
// ELBv2 names are separate namespaces, as in AWS. Create, modify and
// delete calls change these tables in place.
type elbState struct {
	*common
	// ec2 is read for subnets, security groups and instances, with
	// s.mu held: the ELB lock comes before the EC2 lock.
	ec2 *ec2State

	mu           sync.RWMutex          // guards the tables
	classic      table[lbRec]          // Classic load balancers by name
	v2           table[lbRec]          // ELBv2 load balancers by ARN
	listeners    table[listenerRec]    // ELBv2 listeners by ARN
	targetGroups table[targetGroupRec] // ELBv2 target groups by ARN
}

// withGroupUsers runs fn under the read lock with lbUsing, which names
// the first load balancer (Classic ones first, each kind in creation
// order) that uses a security group, or returns "".
func (s *elbState) withGroupUsers(fn func(lbUsing func(sgID string) string)) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	fn(func(id string) string {
		for _, lb := range slices.Concat(s.classic.list(), s.v2.list()) {
			if slices.Contains(lb.SecurityGroups, id) {
				return lb.Name
			}
		}
		return ""
	})
}

// lbRec is a defaulted load balancer. For ELBv2 its Listeners and
// TargetGroups are nil: they live in their own tables.
type lbRec struct {
	LoadBalancer
	zones      []string             // the zone of each subnet
	zoneID     string               // canonical hosted zone ID
	sourceSG   string               // Classic: name of the first security group
	healthPort int32                // Classic: the default health check's port
	ext        *classicExt          // Classic: state set by mutating calls (elb_policies.go)
	attrs      map[string]string    // ELBv2: attributes changed from their defaults
	mappings   map[string]v2Mapping // ELBv2: SubnetMappings addresses by subnet
}

type listenerRec struct {
	arn, lbArn, tgArn string
	LBListener
}

type targetGroupRec struct {
	TargetGroup
	vpcID   string
	lbArns  []string
	timeout int32             // HealthCheckTimeoutSeconds set by Create/ModifyTargetGroup
	matcher string            // Matcher.HttpCode set by Create/ModifyTargetGroup
	attrs   map[string]string // attributes changed from their defaults
	targets []v2Target        // registered targets
}

// v2ByName finds an ELBv2 load balancer by name.
func (s *elbState) v2ByName(name string) (*lbRec, bool) {
	for _, lb := range s.v2.list() {
		if lb.Name == name {
			return lb, true
		}
	}
	return nil, false
}

var (
	lbNameRE     = regexp.MustCompile(`^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,30}[a-zA-Z0-9])?$`)
	lbTypeCode   = map[string]string{LBTypeNetwork: "net", LBTypeApplication: "app"}
	lbDefaultDay = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

// lbHash is the stable hash behind DNS names and ARNs.
func lbHash(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// lbDNSName derives the DNS name AWS would assign.
func lbDNSName(account, region string, lb *LoadBalancer) string {
	h := lbHash(account, region, lb.Type, lb.Name)
	suffix := "amazonaws.com"
	if awsPartition(region) == "aws-cn" {
		suffix = "amazonaws.com.cn"
	}
	if lb.Type == LBTypeNetwork {
		return fmt.Sprintf("%s-%016x.elb.%s.%s", lb.Name, h, region, suffix)
	}
	prefix := ""
	if lb.Scheme == LBSchemeInternal {
		prefix = "internal-"
	}
	return fmt.Sprintf("%s%s-%d.%s.elb.%s", prefix, lb.Name, 1000000000+h%9000000000, region, suffix)
}

// lbZoneID is the canonical hosted zone ID of load balancers in a region
// (the real ones for us-east-1, a stable stand-in elsewhere).
func lbZoneID(region, typ string) string {
	if region == "us-east-1" {
		if typ == LBTypeNetwork {
			return "Z26RNL4JYFTOTI"
		}
		return "Z35SXDOTRQ7X7K"
	}
	return fmt.Sprintf("Z%013X", lbHash(region, typ)&0xfffffffffffff)
}

func elbArn(region, account, resource string) string {
	return "arn:" + awsPartition(region) + ":elasticloadbalancing:" + region + ":" + account + ":" + resource
}

// buildELB validates the load balancers of a defaulted fixture, without
// changing it, and returns the model (only meaningful without errors: New
// builds it from the validated fixture).
func (f *Fixture) buildELB() (*elbState, []error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("loadBalancers"+format, args...)) }
	subnets := map[string]Subnet{}
	for _, sn := range f.Subnets {
		subnets[sn.ID] = sn
	}
	sgNames := map[string]string{}
	for _, sg := range f.SecurityGroups {
		sgNames[sg.ID] = sg.Name
	}
	instances := map[string]bool{}
	for _, in := range f.Instances {
		instances[in.ID] = true
	}
	st := &elbState{}
	tgNames := map[string]bool{}
	for i := range f.LoadBalancers {
		lb := f.LoadBalancers[i].clone()
		where := fmt.Sprintf("[%d] (%s)", i, lb.Name)
		lb.Type = orDefault(lb.Type, LBTypeClassic)
		lb.Scheme = orDefault(lb.Scheme, LBSchemeInternetFacing)
		lb.CreatedTime = orDefault(lb.CreatedTime, lbDefaultDay)
		if !lbNameRE.MatchString(lb.Name) || strings.HasPrefix(lb.Name, "internal-") {
			bad("%s: name must be 1-32 characters of [A-Za-z0-9-], not start or end with '-' nor start with \"internal-\"", where)
		}
		switch lb.Type {
		case LBTypeClassic, LBTypeNetwork, LBTypeApplication:
		default:
			bad("%s: type %q is not one of classic, network, application", where, lb.Type)
		}
		if lb.Scheme != LBSchemeInternetFacing && lb.Scheme != LBSchemeInternal {
			bad("%s: scheme %q is not internet-facing or internal", where, lb.Scheme)
		}
		rec := &lbRec{zoneID: lbZoneID(f.Region, lb.Type)}
		zones := map[string]bool{}
		for _, id := range lb.Subnets {
			sn, ok := subnets[id]
			switch {
			case !ok:
				bad("%s: subnet %q does not exist", where, id)
				continue
			case lb.VPCID == "":
				lb.VPCID = sn.VPCID
			case sn.VPCID != lb.VPCID:
				bad("%s: subnet %s is in %s, not %s", where, id, sn.VPCID, lb.VPCID)
			}
			if zones[sn.AvailabilityZone] {
				bad("%s: two subnets in zone %s", where, sn.AvailabilityZone)
			}
			zones[sn.AvailabilityZone] = true
			rec.zones = append(rec.zones, sn.AvailabilityZone)
		}
		if lb.VPCID != "" && !slices.ContainsFunc(f.VPCs, func(v VPC) bool { return v.ID == lb.VPCID }) {
			bad("%s: vpcId %q does not exist", where, lb.VPCID)
		}
		for _, id := range lb.SecurityGroups {
			if _, ok := sgNames[id]; !ok {
				bad("%s: security group %q does not exist", where, id)
			}
		}
		if len(lb.SecurityGroups) > 0 {
			rec.sourceSG = sgNames[lb.SecurityGroups[0]]
		}
		lb.DNSName = orDefault(lb.DNSName, lbDNSName(f.Account, f.Region, &lb))
		if lb.Type == LBTypeClassic {
			if lb.ARN != "" || len(lb.TargetGroups) > 0 {
				bad("%s: a classic load balancer has no arn or targetGroups", where)
			}
			for j := range lb.Listeners {
				l := &lb.Listeners[j]
				l.InstanceProtocol = orDefault(l.InstanceProtocol, l.Protocol)
				l.InstancePort = orDefault(l.InstancePort, l.Port)
				checkListener(bad, fmt.Sprintf("%s: listeners[%d]", where, j), l, []string{"TCP", "SSL", "HTTP", "HTTPS"}, true)
				if l.TargetGroup != "" {
					bad("%s: listeners[%d]: a classic listener has no targetGroup", where, j)
				}
			}
			if len(lb.Listeners) > 0 {
				rec.healthPort = lb.Listeners[0].InstancePort
			}
			for _, id := range lb.Instances {
				if !instances[id] {
					bad("%s: instance %q does not exist", where, id)
				}
			}
			if _, dup := st.classic.get(lb.Name); dup {
				bad("%s: duplicate classic load balancer name", where)
			}
			rec.LoadBalancer = lb
			st.classic.put(lb.Name, rec)
			continue
		}
		if len(lb.Instances) > 0 {
			bad("%s: instances are registered with classic load balancers only; use targetGroups", where)
		}
		code := lbTypeCode[lb.Type]
		lb.ARN = orDefault(lb.ARN, elbArn(f.Region, f.Account, fmt.Sprintf("loadbalancer/%s/%s/%016x", code, lb.Name, lbHash(f.Account, f.Region, lb.Type, lb.Name))))
		if want := elbArn(f.Region, f.Account, "loadbalancer/"+code+"/"+lb.Name+"/"); !strings.HasPrefix(lb.ARN, want) || !isHex16(lb.ARN[len(want):]) {
			bad("%s: arn %q must be %s<16 hex digits>", where, lb.ARN, want)
		}
		if _, dup := st.v2ByName(lb.Name); dup {
			bad("%s: duplicate load balancer name (network and application load balancers share names)", where)
		}
		tgs := map[string]string{} // name -> ARN
		for j, tg := range lb.TargetGroups {
			twhere := fmt.Sprintf("%s: targetGroups[%d] (%s)", where, j, tg.Name)
			tg = tg.defaulted(f.Region, f.Account, lb.Type)
			if !lbNameRE.MatchString(tg.Name) || tgNames[tg.Name] {
				bad("%s: name must be unique and 1-32 characters of [A-Za-z0-9-]", twhere)
			}
			tgNames[tg.Name] = true
			if tg.Port < 1 || tg.Port > 65535 {
				bad("%s: port %d is not between 1 and 65535", twhere, tg.Port)
			}
			tgs[tg.Name] = tg.ARN
			// LoadBalancerArns come from the listeners below, as in AWS: a
			// group no listener forwards to belongs to no load balancer.
			st.targetGroups.put(tg.ARN, &targetGroupRec{TargetGroup: tg, vpcID: lb.VPCID})
		}
		protocols := []string{"TCP", "UDP", "TCP_UDP", "TLS"}
		if lb.Type == LBTypeApplication {
			protocols = []string{"HTTP", "HTTPS"}
		}
		ports := map[int32]bool{}
		for j, l := range lb.Listeners {
			lwhere := fmt.Sprintf("%s: listeners[%d]", where, j)
			checkListener(bad, lwhere, &l, protocols, false)
			tgArn, ok := tgs[l.TargetGroup]
			if l.TargetGroup != "" && !ok {
				bad("%s: targetGroup %q is not in this load balancer's targetGroups", lwhere, l.TargetGroup)
			}
			suffix := strings.TrimPrefix(lb.ARN, elbArn(f.Region, f.Account, "loadbalancer/"))
			arn := elbArn(f.Region, f.Account, fmt.Sprintf("listener/%s/%016x", suffix, lbHash(lb.ARN, strconv.Itoa(int(l.Port)), l.Protocol)))
			if ports[l.Port] {
				bad("%s: duplicate listener on port %d", lwhere, l.Port)
			}
			ports[l.Port] = true
			st.listeners.put(arn, &listenerRec{arn: arn, lbArn: lb.ARN, tgArn: tgArn, LBListener: l})
			if tg, ok := st.targetGroups.get(tgArn); ok && !slices.Contains(tg.lbArns, lb.ARN) {
				tg.lbArns = append(tg.lbArns, lb.ARN)
			}
		}
		lb.Listeners, lb.TargetGroups = nil, nil
		rec.LoadBalancer = lb
		st.v2.put(lb.ARN, rec)
	}
	return st, errs
}

func checkListener(bad func(string, ...any), where string, l *LBListener, protocols []string, classic bool) {
	if !slices.Contains(protocols, l.Protocol) {
		bad("%s: protocol %q is not one of %s", where, l.Protocol, strings.Join(protocols, ", "))
	}
	if l.Port < 1 || l.Port > 65535 {
		bad("%s: port %d is not between 1 and 65535", where, l.Port)
	}
	switch {
	case classic && (l.InstancePort < 1 || l.InstancePort > 65535):
		bad("%s: instancePort %d is not between 1 and 65535", where, l.InstancePort)
	case !classic && (l.InstancePort != 0 || l.InstanceProtocol != ""):
		bad("%s: instancePort and instanceProtocol are for classic listeners", where)
	}
}

func isHex16(s string) bool {
	if len(s) != 16 {
		return false
	}
	_, err := strconv.ParseUint(s, 16, 64)
	return err == nil
}

// defaulted fills a target group's empty fields.
func (tg TargetGroup) defaulted(region, account, lbType string) TargetGroup {
	tg.Tags = maps.Clone(tg.Tags)
	if tg.Protocol == "" {
		tg.Protocol = "TCP"
		if lbType == LBTypeApplication {
			tg.Protocol = "HTTP"
		}
	}
	tg.TargetType = orDefault(tg.TargetType, "instance")
	tg.HealthCheckPort = orDefault(tg.HealthCheckPort, "traffic-port")
	if tg.HealthCheckProtocol == "" {
		tg.HealthCheckProtocol = tg.Protocol
		if tg.Protocol == "UDP" || tg.Protocol == "TCP_UDP" || tg.Protocol == "TLS" {
			tg.HealthCheckProtocol = "TCP"
		}
	}
	if tg.HealthCheckPath == "" && strings.HasPrefix(tg.HealthCheckProtocol, "HTTP") {
		tg.HealthCheckPath = "/"
	}
	tg.HealthCheckIntervalSeconds = orDefault(tg.HealthCheckIntervalSeconds, 30)
	tg.HealthyThreshold = orDefault(tg.HealthyThreshold, 5)
	tg.UnhealthyThreshold = orDefault(tg.UnhealthyThreshold, 2)
	tg.ARN = orDefault(tg.ARN, elbArn(region, account, fmt.Sprintf("targetgroup/%s/%016x", tg.Name, lbHash(account, region, "targetgroup", tg.Name))))
	return tg
}

// clone deep-copies a fixture load balancer.
func (lb LoadBalancer) clone() LoadBalancer {
	lb.Tags = maps.Clone(lb.Tags)
	lb.Subnets = slices.Clone(lb.Subnets)
	lb.SecurityGroups = slices.Clone(lb.SecurityGroups)
	lb.Instances = slices.Clone(lb.Instances)
	lb.Listeners = slices.Clone(lb.Listeners)
	for i := range lb.Listeners {
		lb.Listeners[i].Tags = maps.Clone(lb.Listeners[i].Tags)
	}
	lb.TargetGroups = slices.Clone(lb.TargetGroups)
	for i := range lb.TargetGroups {
		lb.TargetGroups[i].Tags = maps.Clone(lb.TargetGroups[i].Tags)
	}
	return lb
}
