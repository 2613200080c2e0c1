package awsemu

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Mutating EC2 security group calls: CreateSecurityGroup,
// DeleteSecurityGroup, AuthorizeSecurityGroupIngress and
// RevokeSecurityGroupIngress.

// DefaultSecurityGroupRuleLimit is AWS's default quota of inbound rules per
// security group; Fixture.SecurityGroupRuleLimit overrides it.
const DefaultSecurityGroupRuleLimit = 60

// awsPartition is the ARN partition of a region ("aws-cn" for the China
// regions). Other partitions (GovCloud, ISO) are not modelled.
func awsPartition(region string) string {
	if strings.HasPrefix(region, "cn-") {
		return "aws-cn"
	}
	return "aws"
}

// sgRule is one security group rule with a single source, the unit AWS
// counts against the rule quota and compares for duplicates.
type sgRule struct {
	protocol     string // "-1", "tcp", "udp", "icmp", "icmpv6" or a number
	from, to     *int32 // nil for protocol -1
	kind, source string // kind is "cidr", "ipv6" or "group"
	description  string
}

func (r sgRule) key() string {
	p := func(v *int32) string {
		if v == nil {
			return "-"
		}
		return strconv.Itoa(int(*v))
	}
	return r.protocol + "|" + p(r.from) + "|" + p(r.to) + "|" + r.kind + "|" + r.source
}

func (r sgRule) String() string {
	ports := ""
	if r.from != nil {
		ports = fmt.Sprintf(", from port: %d, to port: %d", *r.from, *r.to)
	}
	return fmt.Sprintf("peer: %s, %s%s, ALLOW", r.source, strings.ToUpper(r.protocol), ports)
}

// flattenRules splits stored permissions into single-source rules.
func flattenRules(ps []Permission) []sgRule {
	var out []sgRule
	for _, p := range ps {
		add := func(kind string, sources []string) {
			for _, src := range sources {
				out = append(out, sgRule{protocol: p.Protocol, from: p.FromPort, to: p.ToPort, kind: kind, source: src, description: p.Descriptions[src]})
			}
		}
		add("cidr", p.CIDRs)
		add("ipv6", p.IPv6CIDRs)
		add("group", p.GroupIDs)
	}
	return out
}

// groupRules is the inverse of flattenRules: rules with the same protocol
// and ports share one Permission, in first-seen order.
func groupRules(rules []sgRule) []Permission {
	var out []Permission
	index := map[string]int{}
	for _, r := range rules {
		k := sgRule{protocol: r.protocol, from: r.from, to: r.to}.key()
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, Permission{Protocol: r.protocol, FromPort: r.from, ToPort: r.to})
		}
		p := &out[i]
		switch r.kind {
		case "cidr":
			p.CIDRs = append(p.CIDRs, r.source)
		case "ipv6":
			p.IPv6CIDRs = append(p.IPv6CIDRs, r.source)
		case "group":
			p.GroupIDs = append(p.GroupIDs, r.source)
		}
		if r.description != "" {
			if p.Descriptions == nil {
				p.Descriptions = map[string]string{}
			}
			p.Descriptions[r.source] = r.description
		}
	}
	return out
}

// sgProtocols maps accepted IpProtocol spellings to the stored one.
var sgProtocols = map[string]string{
	"-1": "-1", "all": "-1", "tcp": "tcp", "6": "tcp", "udp": "udp", "17": "udp",
	"icmp": "icmp", "1": "icmp", "icmpv6": "icmpv6", "58": "icmpv6",
}

// parseIPPermissions decodes IpPermissions.N into single-source rules.
func parseIPPermissions(form url.Values) ([]sgRule, *apiError) {
	var out []sgRule
	for _, n := range indexedKeys(form, "IpPermissions") {
		p := "IpPermissions." + strconv.Itoa(n)
		raw := strings.ToLower(form.Get(p + ".IpProtocol"))
		if raw == "" {
			return nil, errMissingParameter(p + ".IpProtocol")
		}
		proto, ok := sgProtocols[raw]
		if !ok {
			if v, err := strconv.Atoi(raw); err != nil || v < 0 || v > 255 {
				return nil, errInvalidParameterValue("Invalid value '%s' for IP protocol. Unknown protocol.", raw)
			}
			proto = raw
		}
		var from, to *int32
		if proto != "-1" {
			f, t, apiErr := parsePorts(form, p, proto)
			if apiErr != nil {
				return nil, apiErr
			}
			from, to = &f, &t
		}
		base := sgRule{protocol: proto, from: from, to: to}
		count := len(out)
		for _, m := range indexedKeys(form, p+".IpRanges") {
			q := p + ".IpRanges." + strconv.Itoa(m)
			cidr := form.Get(q + ".CidrIp")
			if pfx, err := netip.ParsePrefix(cidr); err != nil || !pfx.Addr().Is4() {
				return nil, errInvalidParameterValue("CIDR block %s is malformed", cidr)
			}
			r := base
			r.kind, r.source, r.description = "cidr", cidr, form.Get(q+".Description")
			out = append(out, r)
		}
		for _, m := range indexedKeys(form, p+".Ipv6Ranges") {
			q := p + ".Ipv6Ranges." + strconv.Itoa(m)
			cidr := form.Get(q + ".CidrIpv6")
			if pfx, err := netip.ParsePrefix(cidr); err != nil || !pfx.Addr().Is6() {
				return nil, errInvalidParameterValue("CIDR block %s is malformed", cidr)
			}
			r := base
			r.kind, r.source, r.description = "ipv6", cidr, form.Get(q+".Description")
			out = append(out, r)
		}
		for _, m := range indexedKeys(form, p+".Groups") {
			q := p + ".Groups." + strconv.Itoa(m)
			id := form.Get(q + ".GroupId")
			if id == "" {
				return nil, errInvalidParameterValue("%s.GroupId is required (group names are not supported in a VPC)", q)
			}
			r := base
			r.kind, r.source, r.description = "group", id, form.Get(q+".Description")
			out = append(out, r)
		}
		if len(out) == count {
			return nil, errMissingParameter(p + ".IpRanges, Ipv6Ranges or Groups")
		}
	}
	if len(out) == 0 {
		return nil, errMissingParameter("IpPermissions")
	}
	return out, nil
}

// parsePorts checks FromPort/ToPort for tcp/udp (port range) and
// icmp (type and code, -1 = all).
func parsePorts(form url.Values, p, proto string) (from, to int32, apiErr *apiError) {
	get := func(name string) (int32, bool) {
		v := form.Get(p + "." + name)
		n, err := strconv.Atoi(v)
		return int32(n), err == nil
	}
	f, okF := get("FromPort")
	t, okT := get("ToPort")
	switch proto {
	case "tcp", "udp":
		if !okF || !okT {
			return 0, 0, errInvalidParameterValue("Invalid value for portRange. Must specify both from and to ports with TCP/UDP.")
		}
		if f < 0 || t > 65535 || f > t {
			return 0, 0, errInvalidParameterValue("Invalid port range (%d-%d)", f, t)
		}
	case "icmp", "icmpv6":
		if !okF {
			f = -1
		}
		if !okT {
			t = -1
		}
		if f < -1 || f > 255 || t < -1 || t > 255 {
			return 0, 0, errInvalidParameterValue("Invalid ICMP type %d or code %d", f, t)
		}
	default:
		f, t = -1, -1
	}
	return f, t, nil
}

// sgByParam resolves GroupId (or a GroupName in the default VPC) of a
// request. Callers hold s.mu.
func (s *ec2State) sgByParam(form url.Values) (*SecurityGroup, *apiError) {
	if id := form.Get("GroupId"); id != "" {
		if !strings.HasPrefix(id, "sg-") {
			return nil, newAPIError(http.StatusBadRequest, "InvalidGroupId.Malformed", "Invalid id: \"%s\" (expecting \"sg-...\")", id)
		}
		if sg, ok := s.securityGroups.get(id); ok {
			return sg, nil
		}
		return nil, errGroupNotFound(id)
	}
	name := form.Get("GroupName")
	if name == "" {
		return nil, errMissingParameter("GroupId")
	}
	def := s.defaultVPC()
	for _, sg := range s.securityGroups.list() {
		if sg.Name == name && (sg.VPCID == def || def == "") {
			return sg, nil
		}
	}
	return nil, newAPIError(http.StatusBadRequest, "InvalidGroup.NotFound",
		"The security group '%s' does not exist in default VPC '%s'", name, def)
}

func errGroupNotFound(id string) *apiError {
	return newAPIError(http.StatusBadRequest, "InvalidGroup.NotFound", "The security group '%s' does not exist", id)
}

// defaultVPC returns the ID of the default VPC or "". Callers hold s.mu.
func (s *ec2State) defaultVPC() string {
	for _, v := range s.vpcs.list() {
		if v.IsDefault {
			return v.ID
		}
	}
	return ""
}

// parseTagSpecifications returns the tags of TagSpecification.N entries
// for resourceType; other resource types are rejected.
func parseTagSpecifications(form url.Values, resourceType string) (map[string]string, *apiError) {
	var tags map[string]string
	for _, n := range indexedKeys(form, "TagSpecification") {
		p := "TagSpecification." + strconv.Itoa(n)
		if rt := form.Get(p + ".ResourceType"); rt != resourceType {
			return nil, errInvalidParameterValue("'%s' is not a valid taggable resource type for this operation.", rt)
		}
		for _, t := range parseTags(subForm(form, p)) {
			if t.Key == "" || strings.HasPrefix(strings.ToLower(t.Key), "aws:") {
				return nil, errInvalidParameterValue("Invalid tag key '%s'", t.Key)
			}
			if tags == nil {
				tags = map[string]string{}
			}
			tags[t.Key] = t.Value
		}
	}
	if len(tags) > 50 {
		return nil, newAPIError(http.StatusBadRequest, "TagLimitExceeded", "The maximum number of Tags for a resource has been reached.")
	}
	return tags, nil
}

// subForm returns the keys below prefix with the prefix (and its dot)
// removed, so "TagSpecification.1.Tag.1.Key" becomes "Tag.1.Key".
func subForm(form url.Values, prefix string) url.Values {
	out := url.Values{}
	for k, v := range form {
		if rest, ok := strings.CutPrefix(k, prefix+"."); ok {
			out[rest] = v
		}
	}
	return out
}

type createSecurityGroupResult struct {
	GroupID          string   `xml:"groupId"`
	SecurityGroupArn string   `xml:"securityGroupArn"`
	Tags             []xmlTag `xml:"tagSet>item"`
}

func (s *ec2State) createSecurityGroup(form url.Values) (any, *apiError) {
	name, desc := form.Get("GroupName"), form.Get("GroupDescription")
	switch {
	case name == "":
		return nil, errMissingParameter("GroupName")
	case desc == "":
		return nil, errMissingParameter("GroupDescription")
	case len(name) > 255 || len(desc) > 255:
		return nil, errInvalidParameterValue("Group name and description are limited to 255 characters")
	case strings.HasPrefix(name, "sg-"):
		return nil, errInvalidParameterValue("Group names may not be in the format sg-*.")
	}
	tags, apiErr := parseTagSpecifications(form, "security-group")
	if apiErr != nil {
		return nil, apiErr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	vpc := form.Get("VpcId")
	if vpc == "" {
		if vpc = s.defaultVPC(); vpc == "" {
			return nil, newAPIError(http.StatusBadRequest, "VPCIdNotSpecified", "No default VPC for this user")
		}
	} else if _, ok := s.vpcs.get(vpc); !ok {
		return nil, newAPIError(http.StatusBadRequest, "InvalidVpcID.NotFound", "The vpc ID '%s' does not exist", vpc)
	}
	for _, sg := range s.securityGroups.list() {
		if sg.Name == name && sg.VPCID == vpc {
			return nil, newAPIError(http.StatusBadRequest, "InvalidGroup.Duplicate",
				"The security group '%s' already exists for VPC '%s'", name, vpc)
		}
	}
	sg := &SecurityGroup{
		ID: s.newID("sg"), Name: name, Description: desc, VPCID: vpc, Tags: tags,
		Egress: []Permission{{Protocol: "-1", CIDRs: []string{"0.0.0.0/0"}}},
	}
	s.securityGroups.put(sg.ID, sg)
	return createSecurityGroupResult{
		GroupID:          sg.ID,
		SecurityGroupArn: "arn:" + awsPartition(s.region) + ":ec2:" + s.region + ":" + s.account + ":security-group/" + sg.ID,
		Tags:             xmlTags(tags),
	}, nil
}

type deleteSecurityGroupResult struct {
	Return  bool   `xml:"return"`
	GroupID string `xml:"groupId"`
}

func (s *ec2State) deleteSecurityGroup(form url.Values) (res any, apiErr *apiError) {
	// Holding the ELB read lock (taken before the EC2 lock, as ELB calls
	// do) keeps load balancers from taking the group between the check
	// and the delete.
	s.lbs.withGroupUsers(func(lbUsing func(sgID string) string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		sg, err := s.sgByParam(form)
		if err != nil {
			apiErr = err
			return
		}
		if user := s.sgUser(sg.ID, lbUsing); user != "" {
			apiErr = newAPIError(http.StatusBadRequest, "DependencyViolation",
				"resource %s has a dependent object (%s)", sg.ID, user)
			return
		}
		s.securityGroups.remove(sg.ID)
		res = deleteSecurityGroupResult{Return: true, GroupID: sg.ID}
	})
	return res, apiErr
}

// sgUser names something that keeps a security group from being deleted:
// another group's rule, an instance or a load balancer (lbUsing). Callers
// hold s.mu.
func (s *ec2State) sgUser(id string, lbUsing func(sgID string) string) string {
	for _, other := range s.securityGroups.list() {
		if other.ID == id {
			continue
		}
		for _, r := range flattenRules(slices.Concat(other.Ingress, other.Egress)) {
			if r.kind == "group" && r.source == id {
				return "a rule of " + other.ID
			}
		}
	}
	for _, in := range s.instances.list() {
		if in.State != "terminated" && slices.Contains(in.SecurityGroupIDs, id) {
			return "instance " + in.ID
		}
	}
	if lb := lbUsing(id); lb != "" {
		return "load balancer " + lb
	}
	return ""
}

type xmlSGRule struct {
	SecurityGroupRuleID string  `xml:"securityGroupRuleId"`
	GroupID             string  `xml:"groupId"`
	GroupOwnerID        string  `xml:"groupOwnerId"`
	IsEgress            bool    `xml:"isEgress"`
	IPProtocol          string  `xml:"ipProtocol"`
	FromPort            *int32  `xml:"fromPort,omitempty"`
	ToPort              *int32  `xml:"toPort,omitempty"`
	CIDRIPv4            string  `xml:"cidrIpv4,omitempty"`
	CIDRIPv6            string  `xml:"cidrIpv6,omitempty"`
	Description         string  `xml:"description,omitempty"`
	Referenced          *xmlRef `xml:"referencedGroupInfo,omitempty"`
}

type xmlRef struct {
	GroupID string `xml:"groupId"`
	UserID  string `xml:"userId"`
}

type authorizeIngressResult struct {
	Return bool        `xml:"return"`
	Rules  []xmlSGRule `xml:"securityGroupRuleSet>item"`
}

func (s *ec2State) authorizeSecurityGroupIngress(form url.Values) (any, *apiError) {
	rules, apiErr := parseIPPermissions(form)
	if apiErr != nil {
		return nil, apiErr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sg, apiErr := s.sgByParam(form)
	if apiErr != nil {
		return nil, apiErr
	}
	existing := flattenRules(sg.Ingress)
	seen := map[string]bool{}
	for _, r := range existing {
		seen[r.key()] = true
	}
	for _, r := range rules {
		if r.kind == "group" {
			if _, ok := s.securityGroups.get(r.source); !ok {
				return nil, errGroupNotFound(r.source)
			}
		}
		if seen[r.key()] {
			return nil, newAPIError(http.StatusBadRequest, "InvalidPermission.Duplicate",
				"the specified rule \"%s\" already exists", r)
		}
		seen[r.key()] = true
	}
	limit := s.sgRuleLimit
	if limit <= 0 {
		limit = DefaultSecurityGroupRuleLimit
	}
	if v4, v6 := ruleCounts(slices.Concat(existing, rules)); v4 > limit || v6 > limit {
		return nil, newAPIError(http.StatusBadRequest, "RulesPerSecurityGroupLimitExceeded",
			"The maximum number of rules per security group has been reached.")
	}
	sg.Ingress = groupRules(append(existing, rules...))
	res := authorizeIngressResult{Return: true}
	for _, r := range rules {
		x := xmlSGRule{SecurityGroupRuleID: s.newID("sgr"), GroupID: sg.ID, GroupOwnerID: s.account,
			IPProtocol: r.protocol, FromPort: r.from, ToPort: r.to, Description: r.description}
		switch r.kind {
		case "cidr":
			x.CIDRIPv4 = r.source
		case "ipv6":
			x.CIDRIPv6 = r.source
		case "group":
			x.Referenced = &xmlRef{GroupID: r.source, UserID: s.account}
		}
		res.Rules = append(res.Rules, x)
	}
	return res, nil
}

// ruleCounts counts rules against the IPv4 and IPv6 quotas, which AWS
// enforces separately; a rule referencing a group counts against both.
func ruleCounts(rules []sgRule) (v4, v6 int) {
	for _, r := range rules {
		switch r.kind {
		case "cidr":
			v4++
		case "ipv6":
			v6++
		default:
			v4++
			v6++
		}
	}
	return v4, v6
}

func (s *ec2State) revokeSecurityGroupIngress(form url.Values) (any, *apiError) {
	rules, apiErr := parseIPPermissions(form)
	if apiErr != nil {
		return nil, apiErr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sg, apiErr := s.sgByParam(form)
	if apiErr != nil {
		return nil, apiErr
	}
	existing := flattenRules(sg.Ingress)
	var unknown []sgRule
	for _, r := range rules {
		i := slices.IndexFunc(existing, func(e sgRule) bool { return e.key() == r.key() })
		switch {
		case i < 0 && sg.VPCID != "" && sg.VPCID == s.defaultVPC():
			// In a default VPC AWS revokes what matches and lists the
			// rest as unknown; in other VPCs nothing is revoked.
			unknown = append(unknown, r)
		case i < 0:
			return nil, newAPIError(http.StatusBadRequest, "InvalidPermission.NotFound",
				"The specified rule does not exist in this security group.")
		default:
			existing = slices.Delete(existing, i, i+1)
		}
	}
	sg.Ingress = groupRules(existing)
	return revokeIngressResult{Return: true, Unknown: s.xmlPermissions(groupRules(unknown))}, nil
}

type revokeIngressResult struct {
	Return  bool              `xml:"return"`
	Unknown []xmlIPPermission `xml:"unknownIpPermissionSet>item"`
}
