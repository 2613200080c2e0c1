package ecrcredential

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestParseImage covers every partition and endpoint form: the registry's
// account, region and partition come from the host, and FIPS and
// dual-stack hosts select those endpoint variants.
func TestParseImage(t *testing.T) {
	cases := []struct {
		name, image string
		want        Registry
	}{
		{"aws", "123456789012.dkr.ecr.us-west-2.amazonaws.com/app:v1",
			Registry{Host: "123456789012.dkr.ecr.us-west-2.amazonaws.com", AccountID: "123456789012", Region: "us-west-2", Partition: "aws"}},
		{"aws with https and digest", "https://123456789012.dkr.ecr.eu-central-1.amazonaws.com/team/app@sha256:0123",
			Registry{Host: "123456789012.dkr.ecr.eu-central-1.amazonaws.com", AccountID: "123456789012", Region: "eu-central-1", Partition: "aws"}},
		{"aws fips", "123456789012.dkr.ecr-fips.us-east-1.amazonaws.com/app",
			Registry{Host: "123456789012.dkr.ecr-fips.us-east-1.amazonaws.com", AccountID: "123456789012", Region: "us-east-1", Partition: "aws", FIPS: true}},
		{"aws dual-stack", "123456789012.dkr-ecr.ap-southeast-2.on.aws/app",
			Registry{Host: "123456789012.dkr-ecr.ap-southeast-2.on.aws", AccountID: "123456789012", Region: "ap-southeast-2", Partition: "aws", DualStack: true}},
		{"aws dual-stack fips", "123456789012.dkr-ecr-fips.us-east-2.on.aws/app",
			Registry{Host: "123456789012.dkr-ecr-fips.us-east-2.on.aws", AccountID: "123456789012", Region: "us-east-2", Partition: "aws", FIPS: true, DualStack: true}},
		{"GovCloud", "123456789012.dkr.ecr.us-gov-west-1.amazonaws.com/app",
			Registry{Host: "123456789012.dkr.ecr.us-gov-west-1.amazonaws.com", AccountID: "123456789012", Region: "us-gov-west-1", Partition: "aws-us-gov"}},
		{"GovCloud fips", "123456789012.dkr.ecr-fips.us-gov-east-1.amazonaws.com/app",
			Registry{Host: "123456789012.dkr.ecr-fips.us-gov-east-1.amazonaws.com", AccountID: "123456789012", Region: "us-gov-east-1", Partition: "aws-us-gov", FIPS: true}},
		{"GovCloud dual-stack", "123456789012.dkr-ecr.us-gov-west-1.on.aws/app",
			Registry{Host: "123456789012.dkr-ecr.us-gov-west-1.on.aws", AccountID: "123456789012", Region: "us-gov-west-1", Partition: "aws-us-gov", DualStack: true}},
		{"China", "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/app",
			Registry{Host: "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn", AccountID: "123456789012", Region: "cn-north-1", Partition: "aws-cn"}},
		{"China dual-stack", "123456789012.dkr-ecr.cn-northwest-1.on.amazonwebservices.com.cn/app",
			Registry{Host: "123456789012.dkr-ecr.cn-northwest-1.on.amazonwebservices.com.cn", AccountID: "123456789012", Region: "cn-northwest-1", Partition: "aws-cn", DualStack: true}},
		{"EU sovereign cloud", "123456789012.dkr.ecr.eusc-de-east-1.amazonaws.eu/app",
			Registry{Host: "123456789012.dkr.ecr.eusc-de-east-1.amazonaws.eu", AccountID: "123456789012", Region: "eusc-de-east-1", Partition: "aws-eusc"}},
		{"ISO", "123456789012.dkr.ecr.us-iso-east-1.c2s.ic.gov/app",
			Registry{Host: "123456789012.dkr.ecr.us-iso-east-1.c2s.ic.gov", AccountID: "123456789012", Region: "us-iso-east-1", Partition: "aws-iso"}},
		{"ISO-B", "123456789012.dkr.ecr.us-isob-east-1.sc2s.sgov.gov/app",
			Registry{Host: "123456789012.dkr.ecr.us-isob-east-1.sc2s.sgov.gov", AccountID: "123456789012", Region: "us-isob-east-1", Partition: "aws-iso-b"}},
		{"ISO-E", "123456789012.dkr.ecr.eu-isoe-west-1.cloud.adc-e.uk/app",
			Registry{Host: "123456789012.dkr.ecr.eu-isoe-west-1.cloud.adc-e.uk", AccountID: "123456789012", Region: "eu-isoe-west-1", Partition: "aws-iso-e"}},
		{"ISO-F", "123456789012.dkr.ecr.us-isof-south-1.csp.hci.ic.gov/app",
			Registry{Host: "123456789012.dkr.ecr.us-isof-south-1.csp.hci.ic.gov", AccountID: "123456789012", Region: "us-isof-south-1", Partition: "aws-iso-f"}},
		{"upper case host keeps its spelling", "123456789012.DKR.ECR.US-WEST-2.AMAZONAWS.COM/app",
			Registry{Host: "123456789012.DKR.ECR.US-WEST-2.AMAZONAWS.COM", AccountID: "123456789012", Region: "us-west-2", Partition: "aws"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseImage(c.image)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
			if !matchesAny(MatchImages(), got.Host) {
				t.Errorf("no matchImages pattern sends %s to the plugin: %v", got.Host, MatchImages())
			}
		})
	}
}

// TestParseImageRefuses: other registries are *NotECRError; ECR-shaped
// hosts the plugin cannot serve say why.
func TestParseImageRefuses(t *testing.T) {
	notECR := []string{
		"nginx:1.27",
		"docker.io/library/nginx:1.27",
		"public.ecr.aws.example.com/eks/aws-load-balancer-controller:v2",
		"public.ecr.aws:443/eks/aws-load-balancer-controller:v2",
		"registry.k8s.io/pause:3.10",
		"123456789012.dkr.ecr.us-west-2.amazonaws.com:443/app",
		"12345678901.dkr.ecr.us-west-2.amazonaws.com/app",
		"/app",
		"",
	}
	for _, image := range notECR {
		_, err := ParseImage(image)
		var ne *NotECRError
		if !errors.As(err, &ne) || !strings.Contains(err.Error(), "is not an ECR image") {
			t.Errorf("%q: %v, want a NotECRError", image, err)
		}
	}
	for _, c := range []struct{ image, want string }{
		{"123456789012.dkr.ecr.us-west-2.example.com/app", `unknown partition: ECR registries end in amazonaws.com, on.aws, amazonaws.com.cn, on.amazonwebservices.com.cn, amazonaws.eu, c2s.ic.gov, sc2s.sgov.gov, cloud.adc-e.uk, csp.hci.ic.gov, not "example.com"`},
		{"123456789012.dkr.ecr.cn-north-1.amazonaws.com/app", "region cn-north-1 is not in the aws partition that amazonaws.com serves; its registries are under amazonaws.com.cn"},
		{"123456789012.dkr.ecr.us-west-2.amazonaws.com.cn/app", "region us-west-2 is not in the aws-cn partition that amazonaws.com.cn serves; its registries are under amazonaws.com"},
		{"123456789012.dkr.ecr.us-isob-east-1.c2s.ic.gov/app", "region us-isob-east-1 is not in the aws-iso partition that c2s.ic.gov serves; its registries are under sc2s.sgov.gov"},
		{"123456789012.dkr.ecr.eusc-de-east-1.amazonaws.com/app", "its registries are under amazonaws.eu"},
		{"123456789012.dkr-ecr.us-west-2.amazonaws.com/app", "the dual-stack form dkr-ecr is served under on.aws, not amazonaws.com; write 123456789012.dkr.ecr.us-west-2.amazonaws.com"},
		{"123456789012.dkr.ecr.us-west-2.on.aws/app", "on.aws is the dual-stack domain, whose hosts are 123456789012.dkr-ecr.us-west-2.on.aws"},
		{"123456789012.dkr.ecr.uswest2.amazonaws.com/app", `"uswest2" is not an AWS region name`},
		{"123456789012.dkr.ecr.amazonaws.com/app", `"amazonaws" is not an AWS region name`},
	} {
		_, err := ParseImage(c.image)
		var ne *NotECRError
		if err == nil || errors.As(err, &ne) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.image) {
			t.Errorf("%s:\n got %v\nwant an error naming the image with %q", c.image, err, c.want)
		}
	}
}

// TestParseImagePublic: ECR Public's two hosts, in any case, are
// registries served from us-east-1, keyed by the host as written.
func TestParseImagePublic(t *testing.T) {
	for _, image := range []string{"public.ecr.aws/eks-distro/kubernetes/pause:3.10", "ecr-public.aws.com/nginx/nginx:1.27", "https://Public.ECR.aws/x/y"} {
		r, err := ParseImage(image)
		host, _, _ := strings.Cut(strings.TrimPrefix(image, "https://"), "/")
		if err != nil || !r.Public || r.Host != host || r.Region != "us-east-1" || r.Partition != "aws" || r.AccountID != "" || r.FIPS || r.DualStack {
			t.Errorf("%s: %+v %v", image, r, err)
		}
		if !matchesAny(MatchImages(), strings.ToLower(host)) {
			t.Errorf("no matchImages pattern sends %s to the plugin", host)
		}
	}
}

// TestMatchImagesAreTheKubeletsGlobs: every private pattern has the
// kubelet's shape (a * per account and region label), ECR Public's hosts
// are listed literally, and none matches a host the plugin refuses, so
// the kubelet never runs it for another registry.
func TestMatchImagesAreTheKubeletsGlobs(t *testing.T) {
	pats := MatchImages()
	if len(pats) != 2*len(suffixes)+len(PublicHosts) {
		t.Fatalf("%d patterns for %d domains and %d public hosts", len(pats), len(suffixes), len(PublicHosts))
	}
	for _, p := range pats[:2*len(suffixes)] {
		if !strings.HasPrefix(p, "*.dkr") || strings.Count(p, "*") != 2 {
			t.Errorf("pattern %q: want *.<form>.*.<domain>", p)
		}
	}
	if !slices.Equal(pats[2*len(suffixes):], PublicHosts) {
		t.Errorf("patterns end with %v, want ECR Public's hosts %v", pats[2*len(suffixes):], PublicHosts)
	}
	for _, host := range []string{"public.ecr.aws.example.com", "x.public.ecr.aws", "registry.k8s.io", "123456789012.dkr.ecr.us-west-2.example.com", "123456789012.dkr-ecr.us-west-2.amazonaws.com"} {
		if matchesAny(pats, host) {
			t.Errorf("%s matches a pattern", host)
		}
	}
}

// matchesAny matches host as the kubelet matches matchImages without a
// path or port: the same number of dot-separated labels, each matched with
// filepath.Match (k8s.io/kubernetes pkg/credentialprovider URLsMatch).
func matchesAny(patterns []string, host string) bool {
	for _, p := range patterns {
		pl, hl := strings.Split(p, "."), strings.Split(strings.ToLower(host), ".")
		if len(pl) != len(hl) {
			continue
		}
		ok := true
		for i := range pl {
			if m, err := filepath.Match(pl[i], hl[i]); err != nil || !m {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// FuzzParseImage: never panics; a parsed registry is one a kubelet pattern
// sends to the plugin, in a region of its partition, and parsing its host
// again gives the same registry.
func FuzzParseImage(f *testing.F) {
	for _, s := range []string{
		"123456789012.dkr.ecr.us-west-2.amazonaws.com/app:v1", "123456789012.dkr-ecr-fips.us-east-2.on.aws/a",
		"123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/a", "https://123456789012.dkr.ecr.us-iso-east-1.c2s.ic.gov/a",
		"nginx", "123456789012.dkr.ecr..amazonaws.com/", "123456789012.dkr.ecr.a-b-1.on.amazonwebservices.com.cn/x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, image string) {
		r, err := ParseImage(image)
		if err != nil {
			if !strings.Contains(err.Error(), "image ") {
				t.Errorf("error does not name the image: %v", err)
			}
			return
		}
		if !matchesAny(MatchImages(), r.Host) {
			t.Errorf("%q parsed as %+v, which no matchImages pattern covers", image, r)
		}
		if len(r.AccountID) != 12 || r.Region == "" || r.Partition == "" {
			t.Errorf("%q parsed as incomplete %+v", image, r)
		}
		again, err := ParseImage(r.Host + "/x")
		if err != nil || again != r {
			t.Errorf("host %q does not parse back: %+v, %v", r.Host, again, err)
		}
	})
}
