package ecrcredential

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
)

// A private ECR registry host is
//
//	<account>.<form>.<region>.<suffix>
//
// where form is dkr.ecr (IPv4) or dkr-ecr (dual-stack), either with -fips,
// and suffix names the partition. These are the forms AWS documents ("Amazon
// ECR endpoints", "Making requests to Amazon ECR registries") and the ones
// kubernetes/cloud-provider-aws's ecr-credential-provider accepts; unlike
// upstream, a dual-stack form must use a dual-stack suffix and the region
// must belong to the suffix's partition, so a typo fails here with the
// reason instead of as a DNS error in the container runtime.

// suffix is one registry domain of a partition.
type suffix struct {
	domain    string
	partition string
	// regionPrefix is what every region of the partition starts with; ""
	// for the aws partition (any region no other partition claims).
	regionPrefix string
	// also is a second partition sharing the domain and its prefix
	// (GovCloud regions use amazonaws.com and on.aws).
	alsoPartition, alsoPrefix string
	// dualStack domains serve only the dkr-ecr form, the others only
	// dkr.ecr.
	dualStack bool
}

// suffixes are the registry domains (matched whole, so their order is
// only the order of MatchImages and of error messages).
var suffixes = []suffix{
	{domain: "amazonaws.com", partition: "aws", alsoPartition: "aws-us-gov", alsoPrefix: "us-gov-"},
	{domain: "on.aws", partition: "aws", alsoPartition: "aws-us-gov", alsoPrefix: "us-gov-", dualStack: true},
	{domain: "amazonaws.com.cn", partition: "aws-cn", regionPrefix: "cn-"},
	{domain: "on.amazonwebservices.com.cn", partition: "aws-cn", regionPrefix: "cn-", dualStack: true},
	{domain: "amazonaws.eu", partition: "aws-eusc", regionPrefix: "eusc-"},
	{domain: "c2s.ic.gov", partition: "aws-iso", regionPrefix: "us-iso-"},
	{domain: "sc2s.sgov.gov", partition: "aws-iso-b", regionPrefix: "us-isob-"},
	{domain: "cloud.adc-e.uk", partition: "aws-iso-e", regionPrefix: "eu-isoe-"},
	{domain: "csp.hci.ic.gov", partition: "aws-iso-f", regionPrefix: "us-isof-"},
}

// PublicHosts are ECR Public's registry hosts, as upstream's provider
// serves them: public.ecr.aws and its dual-stack name ecr-public.aws.com.
// Their token comes from ECR Public's API in awsapi.ECRPublicRegion
// (us-east-1) whatever the node's region.
var PublicHosts = []string{"public.ecr.aws", "ecr-public.aws.com"}

// Registry is an ECR registry, parsed from an image's host: a private one,
// or ECR Public (Public).
type Registry struct {
	// Host is the registry host as the image names it: the key of the
	// response's auth map.
	Host string
	// AccountID is the registry's 12-digit AWS account.
	AccountID string
	// Region and Partition are where the registry lives.
	Region, Partition string
	// FIPS and DualStack say which endpoint variant the host is; the ECR
	// API call uses the same variant. Both are false for ECR Public.
	FIPS, DualStack bool
	// Public is ECR Public (PublicHosts): no account, Region is
	// us-east-1, where its API serves tokens.
	Public bool
}

var (
	// ecrHost is the shape of every form: account, the dkr.ecr / dkr-ecr
	// form with an optional -fips, region, and the rest (the suffix).
	ecrHost = regexp.MustCompile(`^([0-9]{12})\.(dkr[.-]ecr)(-fips)?\.([^.]+)\.(.+)$`)
	// regionName is an AWS region name: us-east-1, us-gov-west-1,
	// eusc-de-east-1, us-isob-east-1.
	regionName = regexp.MustCompile(`^[a-z]{2,4}(-[a-z]+)+-[0-9]+$`)
)

// NotECRError says an image is not in an ECR registry at all (as opposed
// to an ECR-shaped host with a problem).
type NotECRError struct{ Image, Host, Reason string }

func (e *NotECRError) Error() string {
	if e.Host == "" {
		return fmt.Sprintf("image %q is not an ECR image: %s", e.Image, e.Reason)
	}
	return fmt.Sprintf("image %q is not an ECR image: host %q %s", e.Image, e.Host, e.Reason)
}

// ParseImage returns the ECR registry of an image reference
// ("<account>.dkr.ecr.<region>.amazonaws.com/repo:tag" or
// "public.ecr.aws/repo:tag", optionally with https://). It fails with a
// *NotECRError for any other registry, and with an error naming the
// problem for an ECR-shaped host it cannot serve (a region of another
// partition, an unknown suffix).
func ParseImage(image string) (Registry, error) {
	ref := strings.TrimPrefix(image, "https://")
	host, _, found := strings.Cut(ref, "/")
	if !found || host == "" {
		return Registry{}, &NotECRError{Image: image, Reason: "it names no registry host (want <account>.dkr.ecr.<region>.amazonaws.com/<repository> or public.ecr.aws/<repository>)"}
	}
	if slices.Contains(PublicHosts, strings.ToLower(host)) {
		return Registry{Host: host, Region: awsapi.ECRPublicRegion, Partition: "aws", Public: true}, nil
	}
	return parseHost(image, host)
}

func parseHost(image, host string) (Registry, error) {
	lower := strings.ToLower(host)
	if strings.Contains(lower, ":") {
		return Registry{}, &NotECRError{Image: image, Host: host, Reason: "has a port; ECR registry hosts have none"}
	}
	m := ecrHost.FindStringSubmatch(lower)
	if m == nil {
		return Registry{}, &NotECRError{Image: image, Host: host, Reason: "is not <12-digit account>.dkr.ecr.<region>.<AWS domain>, " + strings.Join(PublicHosts, " or ")}
	}
	account, form, fips, region, domain := m[1], m[2], m[3] != "", m[4], m[5]
	if !regionName.MatchString(region) {
		return Registry{}, fmt.Errorf("image %q: host %q: %q is not an AWS region name (e.g. us-east-1)", image, host, region)
	}
	sfx, ok := findSuffix(domain)
	if !ok {
		return Registry{}, fmt.Errorf("image %q: host %q: unknown partition: ECR registries end in %s, not %q",
			image, host, strings.Join(Domains(), ", "), domain)
	}
	dualStack := form == "dkr-ecr"
	switch {
	case dualStack && !sfx.dualStack:
		return Registry{}, fmt.Errorf("image %q: host %q: the dual-stack form dkr-ecr is served under %s, not %s; write %s.dkr.ecr.%s.%s",
			image, host, dualStackDomain(sfx.partition), domain, account, region, domain)
	case !dualStack && sfx.dualStack:
		return Registry{}, fmt.Errorf("image %q: host %q: %s is the dual-stack domain, whose hosts are %s.dkr-ecr.%s.%s",
			image, host, domain, account, region, domain)
	}
	partition, ok := sfx.partitionOf(region)
	if !ok {
		return Registry{}, fmt.Errorf("image %q: host %q: region %s is not in the %s partition that %s serves; its registries are under %s",
			image, host, region, sfx.partition, domain, domainFor(region, sfx.dualStack))
	}
	return Registry{Host: host, AccountID: account, Region: region, Partition: partition, FIPS: fips, DualStack: dualStack}, nil
}

func findSuffix(domain string) (suffix, bool) {
	for _, s := range suffixes {
		if domain == s.domain {
			return s, true
		}
	}
	return suffix{}, false
}

// partitionOf returns the partition of region under s, if s serves it.
func (s suffix) partitionOf(region string) (string, bool) {
	if s.alsoPrefix != "" && strings.HasPrefix(region, s.alsoPrefix) {
		return s.alsoPartition, true
	}
	if s.regionPrefix != "" {
		return s.partition, strings.HasPrefix(region, s.regionPrefix)
	}
	// The aws partition: any region no other partition claims.
	for _, o := range suffixes {
		if o.regionPrefix != "" && strings.HasPrefix(region, o.regionPrefix) {
			return "", false
		}
	}
	return s.partition, true
}

// domainFor names the domain region's registries use, for error messages.
func domainFor(region string, dualStack bool) string {
	for _, s := range suffixes {
		if s.dualStack != dualStack {
			continue
		}
		if _, ok := s.partitionOf(region); ok {
			return s.domain
		}
	}
	return "no known domain"
}

func dualStackDomain(partition string) string {
	for _, s := range suffixes {
		if s.dualStack && s.partition == partition {
			return s.domain
		}
	}
	return "no dual-stack domain in the " + partition + " partition"
}

// Domains lists every registry domain, in the order of the table.
func Domains() []string {
	out := make([]string, len(suffixes))
	for i, s := range suffixes {
		out[i] = s.domain
	}
	return out
}

// MatchImages are the kubelet CredentialProviderConfig matchImages patterns
// of every host form ParseImage accepts: each `*` stands for one DNS label
// (the account, the region), as the kubelet matches them; ECR Public's
// hosts come last, literally.
func MatchImages() []string {
	var out []string
	for _, s := range suffixes {
		form := "dkr.ecr"
		if s.dualStack {
			form = "dkr-ecr"
		}
		out = append(out, "*."+form+".*."+s.domain, "*."+form+"-fips.*."+s.domain)
	}
	return append(out, PublicHosts...)
}
