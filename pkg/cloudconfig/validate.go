package cloudconfig

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/aws/aws-sdk-go-v2/aws/arn"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
)

var (
	// regionName: us-east-1, cn-north-1, us-gov-west-1, eu-isoe-west-1,
	// eusc-de-east-1.
	regionName = regexp.MustCompile(`^[a-z]{2,4}(-[a-z]+){1,3}-[0-9]{1,2}$`)
	// zoneName: a region plus a letter (us-east-1a), or plus a local or
	// wavelength zone suffix (us-west-2-lax-1a, us-east-1-wl1-bos-wlz-1).
	zoneName = regexp.MustCompile(`^[a-z]{2,4}(-[a-z]+){1,3}-[0-9]{1,2}([a-z]|(-[a-z0-9]+)+)$`)
	// zoneID: use1-az1, which is not a zone name.
	zoneID = regexp.MustCompile(`^[a-z]+[0-9]+-(az|[a-z]+[0-9]*-az)[0-9]+$`)
	// partitions: aws, aws-cn, aws-us-gov, aws-iso, aws-iso-b/e/f, aws-eusc.
	partitionName = regexp.MustCompile(`^aws(-cn|-us-gov|-iso(-[a-z])?|-eusc)?$`)
	accountID     = regexp.MustCompile(`^[0-9]{12}$`)
	resourceID    = regexp.MustCompile(`^[0-9a-zA-Z]+$`)
)

// Validate checks the file's values and returns every problem at once as an
// *Error (nil when there is none). Call it after Default.
func (c *Config) Validate() error {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	g := &c.Global

	if g.Region != "" && !regionName.MatchString(g.Region) {
		hint := "use a region name such as us-east-1, cn-north-1 or us-gov-west-1"
		if zoneName.MatchString(g.Region) {
			hint = fmt.Sprintf("%q is a zone; use its region %s", g.Region, regionOfZone(g.Region))
		}
		add("[Global] Region %q is not an AWS region name; %s", g.Region, hint)
	}
	if g.Zone != "" {
		switch {
		case zoneID.MatchString(g.Zone):
			add("[Global] Zone %q is a zone ID, not a zone name; use the name (e.g. us-east-1a) or remove Zone and set Region", g.Zone)
		case !zoneName.MatchString(g.Zone):
			add("[Global] Zone %q is not an availability-zone name; use a name such as us-east-1a, or remove Zone and set Region", g.Zone)
		case g.Region != "" && regionName.MatchString(g.Region) && regionOfZone(g.Zone) != g.Region:
			add("[Global] Zone %q is in region %s but Region is %q; remove Zone (it is legacy) or make them agree",
				g.Zone, regionOfZone(g.Zone), g.Region)
		}
	}
	if g.KubernetesClusterTag != "" && g.KubernetesClusterID != "" && g.KubernetesClusterTag != g.KubernetesClusterID {
		add("[Global] KubernetesClusterTag %q and KubernetesClusterID %q name different clusters; keep KubernetesClusterID only, or set both to the same value",
			g.KubernetesClusterTag, g.KubernetesClusterID)
	}
	for _, key := range []struct{ name, value string }{
		{"KubernetesClusterID", g.KubernetesClusterID},
		{"KubernetesClusterTag", g.KubernetesClusterTag},
	} {
		if key.value == "" {
			continue
		}
		if strings.IndexFunc(key.value, unicode.IsSpace) >= 0 {
			add("[Global] %s %q contains white space; use the cluster ID exactly as in the kubernetes.io/cluster/<id> tag", key.name, key.value)
		} else if n := len([]rune(clustertag.Key(key.value))); n > maxTagKeyLength {
			add("[Global] %s is %d characters long; AWS tag keys are at most %d, so the cluster ID must be at most %d",
				key.name, len([]rune(key.value)), maxTagKeyLength, maxTagKeyLength-len(clustertag.Prefix))
		}
	}

	p = append(p, validateNodeIPFamilies(g.NodeIPFamilies)...)

	for _, id := range []struct{ key, value, prefix, example string }{
		{"VPC", g.VPC, "vpc-", "vpc-0123456789abcdef0"},
		{"SubnetID", g.SubnetID, "subnet-", "subnet-0123456789abcdef0"},
		{"RouteTableID", g.RouteTableID, "rtb-", "rtb-0123456789abcdef0"},
		{"ElbSecurityGroup", g.ElbSecurityGroup, "sg-", "sg-0123456789abcdef0"},
	} {
		if id.value == "" {
			continue
		}
		if !strings.HasPrefix(id.value, id.prefix) || !resourceID.MatchString(strings.TrimPrefix(id.value, id.prefix)) {
			add("[Global] %s %q is not a %s ID; use the ID, e.g. %s", id.key, id.value, strings.TrimSuffix(id.prefix, "-"), id.example)
		}
	}

	if g.RoleARN != "" {
		region, _ := c.RegionFromConfig()
		if problem := checkRoleARN(g.RoleARN, region); problem != "" {
			add("[Global] RoleARN %q %s", g.RoleARN, problem)
		}
	}
	if g.SourceARN != "" {
		if _, problem := parseARN(g.SourceARN); problem != "" {
			add("[Global] SourceARN %q %s", g.SourceARN, problem)
		}
	}

	switch mode := g.ClusterServiceLoadBalancerHealthProbeMode; mode {
	case "", ProbeModeServiceNodePort, ProbeModeShared:
	default:
		hint := ""
		for _, m := range []string{ProbeModeServiceNodePort, ProbeModeShared} {
			if strings.EqualFold(mode, m) {
				hint = fmt.Sprintf(" (values are case-sensitive: write %s)", m)
			}
		}
		add("[Global] ClusterServiceLoadBalancerHealthProbeMode %q is not supported%s; use %s or %s, or leave it empty",
			mode, hint, ProbeModeServiceNodePort, ProbeModeShared)
	}
	if port := g.ClusterServiceSharedLoadBalancerHealthProbePort; port < 0 || port > 65535 {
		add("[Global] ClusterServiceSharedLoadBalancerHealthProbePort %d is not a port; use 1-65535 (default %d)", port, DefaultSharedProbePort)
	}
	if path := g.ClusterServiceSharedLoadBalancerHealthProbePath; path != "" && !strings.HasPrefix(path, "/") {
		add("[Global] ClusterServiceSharedLoadBalancerHealthProbePath %q must start with /, e.g. %s", path, DefaultSharedProbePath)
	}
	if pat := g.SupportedTopologyInstanceTypePattern; pat != "" {
		if _, err := regexp.Compile(pat); err != nil {
			add("[Global] SupportedTopologyInstanceTypePattern is not a valid regular expression (%v); fix it or remove the key to use the default", err)
		}
	}
	if mode := g.NLBSecurityGroupMode; mode != "" && mode != NLBSecurityGroupModeManaged {
		add("[Global] NLBSecurityGroupMode %q is not supported; use %s or leave it empty", mode, NLBSecurityGroupModeManaged)
	}

	p = append(p, c.validateOverrides()...)

	if len(p) > 0 {
		return &Error{Problems: p}
	}
	return nil
}

func validateNodeIPFamilies(families []string) []string {
	var p []string
	seen := map[string]bool{}
	for _, f := range families {
		switch {
		case f != IPFamilyIPv4 && f != IPFamilyIPv6:
			hint := ""
			if l := strings.ToLower(strings.TrimSpace(f)); l == IPFamilyIPv4 || l == IPFamilyIPv6 {
				hint = fmt.Sprintf(" (write %s)", l)
			}
			p = append(p, fmt.Sprintf("[Global] NodeIPFamilies value %q is not supported%s; use %s and/or %s, one per line",
				f, hint, IPFamilyIPv4, IPFamilyIPv6))
		case seen[f]:
			p = append(p, fmt.Sprintf("[Global] NodeIPFamilies lists %s twice; list each family once, in the order wanted", f))
		}
		seen[f] = true
	}
	return p
}

// parseARN checks the common shape of an ARN and its partition.
func parseARN(s string) (arn.ARN, string) {
	a, err := arn.Parse(s)
	if err != nil {
		return a, "is not an ARN; use arn:<partition>:<service>:<region>:<account>:<resource>"
	}
	if !partitionName.MatchString(a.Partition) {
		return a, fmt.Sprintf("has unknown partition %q; use aws, aws-cn, aws-us-gov or aws-iso*", a.Partition)
	}
	if a.Service == "" || a.Resource == "" {
		return a, "is missing its service or resource; use arn:<partition>:<service>:<region>:<account>:<resource>"
	}
	return a, ""
}

func checkRoleARN(s, region string) string {
	a, problem := parseARN(s)
	if problem != "" {
		return problem
	}
	const want = "; use arn:aws:iam::<12-digit account>:role/<name>"
	if a.Service != "iam" || !strings.HasPrefix(a.Resource, "role/") || len(a.Resource) == len("role/") {
		return "is not an IAM role ARN" + want
	}
	if a.Region != "" {
		return "has a region, but IAM ARNs have none" + want
	}
	if !accountID.MatchString(a.AccountID) {
		return fmt.Sprintf("has account %q, not 12 digits%s", a.AccountID, want)
	}
	if region != "" && regionName.MatchString(region) {
		if p := partitionOfRegion(region); p != a.Partition {
			return fmt.Sprintf("is in partition %s but region %s is in %s; use a role of the region's partition", a.Partition, region, p)
		}
	}
	return ""
}

func (c *Config) validateOverrides() []string {
	var p []string
	names := make([]string, 0, len(c.ServiceOverride))
	for name := range c.ServiceOverride {
		names = append(names, name)
	}
	sort.Strings(names)
	known := strings.Join(knownServices, ", ")
	claimed := map[string]string{} // canonical service + region -> section name
	for _, name := range names {
		o := c.ServiceOverride[name]
		where := overrideHeader(name)
		if o == nil {
			p = append(p, fmt.Sprintf("%s is empty; set Service, Region, URL and SigningRegion, or remove the section", where))
			continue
		}
		service, region := strings.TrimSpace(o.Service), strings.TrimSpace(o.Region)
		canonical, isKnown := CanonicalService(service)
		switch {
		case service == "":
			p = append(p, fmt.Sprintf("%s Service is missing; set it to one of: %s", where, known))
		case !isKnown:
			p = append(p, fmt.Sprintf("%s Service %q is not a service this CCM calls; use one of: %s", where, service, known))
		}
		if region == "" {
			p = append(p, fmt.Sprintf("%s Region is missing; set the client region the override applies to, e.g. us-east-1", where))
		}
		if u := strings.TrimSpace(o.URL); u == "" {
			p = append(p, fmt.Sprintf("%s URL is missing; set the endpoint, e.g. https://ec2.example.internal", where))
		} else if problem := checkURL(u); problem != "" {
			p = append(p, fmt.Sprintf("%s URL %q %s", where, u, problem))
		}
		if strings.TrimSpace(o.SigningRegion) == "" {
			p = append(p, fmt.Sprintf("%s SigningRegion is missing; set the region requests are signed for (usually the same as Region)", where))
		}
		if isKnown && region != "" {
			key := canonical + "\x00" + region
			if other, dup := claimed[key]; dup {
				p = append(p, fmt.Sprintf("%s overrides %s in %s, as %s already does; keep one of them",
					where, canonical, region, overrideHeader(other)))
			} else {
				claimed[key] = name
			}
		}
	}
	return p
}

func checkURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Sprintf("does not parse (%v); use an absolute URL such as https://host:port", err)
	}
	if scheme := strings.ToLower(u.Scheme); scheme != "http" && scheme != "https" {
		return "is not an absolute http or https URL; use e.g. https://host:port"
	}
	if u.Host == "" {
		return "has no host; use e.g. https://host:port"
	}
	return ""
}

// Warnings returns notes about settings that are accepted but have no effect
// or behave differently elsewhere. They never stop the CCM; it logs them.
func (c *Config) Warnings() []string {
	var w []string
	g := &c.Global
	if g.DisableStrictZoneCheck {
		w = append(w, "[Global] DisableStrictZoneCheck has no effect: it is an in-tree (Kubernetes <= 1.26) key, accepted so old files load; this CCM checks the format of Region and Zone, not a list of known regions. Remove it.")
	}
	if g.ClusterServiceLoadBalancerHealthProbeMode != ProbeModeShared {
		if g.ClusterServiceSharedLoadBalancerHealthProbePort != 0 {
			w = append(w, "[Global] ClusterServiceSharedLoadBalancerHealthProbePort has no effect unless ClusterServiceLoadBalancerHealthProbeMode = Shared")
		}
		if g.ClusterServiceSharedLoadBalancerHealthProbePath != "" {
			w = append(w, "[Global] ClusterServiceSharedLoadBalancerHealthProbePath has no effect unless ClusterServiceLoadBalancerHealthProbeMode = Shared")
		}
	}
	if g.VPC != "" && !c.OffEC2() {
		w = append(w, "[Global] VPC is set but Region (or Zone) or KubernetesClusterID is not, so the CCM still asks IMDS; set all three to run without IMDS")
	}

	names := make([]string, 0, len(c.ServiceOverride))
	for name := range c.ServiceOverride {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		o := c.ServiceOverride[name]
		if o == nil {
			continue
		}
		where := overrideHeader(name)
		if name == "" {
			w = append(w, "[ServiceOverride] has no name; several unnamed sections merge into one. Name each: [ServiceOverride \"1\"]")
		}
		if strings.TrimSpace(o.SigningMethod) != "" {
			w = append(w, where+" SigningMethod is ignored (requests are always signed with SigV4); remove it")
		}
		service := strings.TrimSpace(o.Service)
		canonical, ok := CanonicalService(service)
		switch {
		case !ok:
		case coversELBv2(service):
			w = append(w, fmt.Sprintf("%s Service %q is the SDK v1 name; here, as in-tree, it covers both %q and %q, but upstream cloud-provider-aws ignores it: write one override per service with the SDK v2 names",
				where, service, ServiceELB, ServiceELBv2))
		case service != canonical:
			w = append(w, fmt.Sprintf("%s Service %q is matched as %q here, but upstream cloud-provider-aws only matches the exact SDK v2 ID; write Service = %s",
				where, service, canonical, canonical))
		}
		if ok && canonical == ServiceAutoScaling {
			w = append(w, where+" overrides Auto Scaling, which this CCM never calls (the in-tree provider did); it has no effect")
		}
	}
	return w
}
