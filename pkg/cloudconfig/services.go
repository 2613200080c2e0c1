package cloudconfig

import (
	"sort"
	"strings"
)

// Canonical service IDs for ServiceOverride and Endpoint. They are the AWS
// SDK for Go v2 service IDs, which is what upstream matches exactly.
const (
	ServiceEC2         = "EC2"
	ServiceELB         = "Elastic Load Balancing"
	ServiceELBv2       = "Elastic Load Balancing v2"
	ServiceSTS         = "STS"
	ServiceIAM         = "IAM"
	ServiceKMS         = "KMS"
	ServiceIMDS        = "ec2imds"
	ServiceAutoScaling = "Auto Scaling"
)

// sdkV1ELB is the SDK v1 endpoints ID of both Elastic Load Balancing
// clients: in aws-sdk-go, elb and elbv2 both resolve endpoints as
// "elasticloadbalancing", so an in-tree override with this spelling
// redirected Classic ELB and NLB calls alike.
const sdkV1ELB = "elasticloadbalancing"

// serviceAliases maps normalised spellings (see normaliseService) to the
// canonical ID: SDK v2 service IDs, SDK v1 endpoints IDs and the
// AWS_ENDPOINT_URL_<SERVICE> spelling all normalise to one of these keys.
var serviceAliases = map[string]string{
	"ec2":                    ServiceEC2,
	"elasticloadbalancing":   ServiceELB,
	"elasticloadbalancingv2": ServiceELBv2,
	"sts":                    ServiceSTS,
	"iam":                    ServiceIAM,
	"kms":                    ServiceKMS,
	"ec2imds":                ServiceIMDS,
	"ec2metadata":            ServiceIMDS, // SDK v1 / in-tree
	"autoscaling":            ServiceAutoScaling,
}

// knownServices lists the canonical IDs in the order error messages show.
var knownServices = []string{
	ServiceEC2, ServiceELB, ServiceELBv2, ServiceSTS, ServiceIAM, ServiceKMS, ServiceIMDS, ServiceAutoScaling,
}

func normaliseService(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		switch r {
		case ' ', '\t', '_', '-':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// CanonicalService returns the canonical service ID (one of the Service*
// constants) for a ServiceOverride Service value, or false when the service
// is not one this CCM knows. Matching ignores case, surrounding space,
// spaces, '-' and '_', so the SDK v2 IDs ("EC2", "Elastic Load Balancing v2",
// "ec2imds"), the SDK v1 endpoints IDs the in-tree provider used ("ec2",
// "elasticloadbalancing", "ec2metadata", "autoscaling") and the
// AWS_ENDPOINT_URL_<SERVICE> spelling ("ELASTIC_LOAD_BALANCING_V2") are all
// accepted.
func CanonicalService(name string) (string, bool) {
	id, ok := serviceAliases[normaliseService(name)]
	return id, ok
}

// coversELBv2 reports whether an override's Service is the SDK v1 spelling
// that the in-tree provider applied to both ELB and ELBv2 clients.
func coversELBv2(service string) bool {
	return strings.EqualFold(strings.TrimSpace(service), sdkV1ELB)
}

// Endpoint returns the [ServiceOverride] for a service (any spelling
// CanonicalService accepts) in a region: its URL, SigningRegion and
// SigningName (empty means "keep the SDK's"), and whether one matched.
// Region matches exactly, after trimming surrounding space.
//
// Two rules keep in-tree and upstream files working:
//   - for Elastic Load Balancing v2, an override written with the SDK v1 ID
//     "elasticloadbalancing" applies when no v2-specific one does, as it did
//     in-tree;
//   - IMDS is not regional: an ec2imds/ec2metadata override for the exact
//     region wins, else any one applies (the first by section name), since
//     the region may not be known before IMDS is asked. Upstream ignores the
//     region of IMDS overrides entirely.
func (c *Config) Endpoint(serviceID, region string) (url string, signingRegion string, signingName string, ok bool) {
	if c == nil || len(c.ServiceOverride) == 0 {
		return "", "", "", false
	}
	want, known := CanonicalService(serviceID)
	if !known {
		return "", "", "", false
	}
	region = strings.TrimSpace(region)

	names := make([]string, 0, len(c.ServiceOverride))
	for name := range c.ServiceOverride {
		names = append(names, name)
	}
	sort.Strings(names)

	var fallback *ServiceOverride
	for _, name := range names {
		o := c.ServiceOverride[name]
		if o == nil {
			continue
		}
		got, known := CanonicalService(o.Service)
		if !known {
			continue
		}
		sameRegion := strings.TrimSpace(o.Region) == region
		switch {
		case got == want && sameRegion:
			return overrideResult(o)
		case fallback != nil:
		case want == ServiceELBv2 && sameRegion && coversELBv2(o.Service):
			fallback = o
		case want == ServiceIMDS && got == ServiceIMDS:
			fallback = o
		}
	}
	if fallback != nil {
		return overrideResult(fallback)
	}
	return "", "", "", false
}

func overrideResult(o *ServiceOverride) (string, string, string, bool) {
	return strings.TrimSpace(o.URL), strings.TrimSpace(o.SigningRegion), strings.TrimSpace(o.SigningName), true
}
