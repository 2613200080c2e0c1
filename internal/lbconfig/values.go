package lbconfig

import (
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

// This file holds the value parsers. Each returns the parsed value or an
// error whose text is the Reason of a Problem (the caller adds the key).

// maxShown bounds how much of a bad value is quoted back in a message.
const maxShown = 64

// quote quotes v for a message, shortened when long.
func quote(v string) string {
	if len(v) > maxShown {
		v = v[:maxShown] + "..."
	}
	return strconv.Quote(v)
}

// parseBool accepts what strconv.ParseBool accepts, as upstream does.
func parseBool(v string) (bool, error) {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return false, fmt.Errorf("%s is not a boolean (want true or false)", quote(v))
	}
	return b, nil
}

// parseInt parses a decimal integer in [lo, hi]; what names the unit in the
// message ("a number of seconds").
func parseInt(v string, lo, hi int32, what string) (int32, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil || int32(n) < lo || int32(n) > hi {
		return 0, fmt.Errorf("%s is not %s (want %d-%d)", quote(v), what, lo, hi)
	}
	return int32(n), nil
}

// parseList splits a comma list, trimming spaces and dropping empty entries
// (upstream tolerates "a, b," as well).
func parseList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// KeyValue is one entry of a `k=v,k2=,k3` list, in annotation order.
type KeyValue struct {
	Key   string
	Value string
}

// parseKeyValues parses `k=v,k2=,k3`: "k2=" and "k3" both give an empty
// value. Spaces around entries, keys and values are trimmed and empty
// entries skipped. An empty key or a repeated key is an error. The value is
// everything after the first "=" (upstream drops the text after a second
// "=", so "a=b=c" there is a=b; such values are rejected here so the two
// never disagree).
func parseKeyValues(v string) ([]KeyValue, error) {
	var out []KeyValue
	seen := map[string]bool{}
	for _, entry := range strings.Split(v, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		k, val, _ := strings.Cut(entry, "=")
		k, val = strings.TrimSpace(k), strings.TrimSpace(val)
		if k == "" {
			return nil, fmt.Errorf("entry %s has no key (want k=v,k2=,k3)", quote(entry))
		}
		if strings.Contains(val, "=") {
			return nil, fmt.Errorf("entry %s has more than one \"=\" (want k=v,k2=,k3)", quote(entry))
		}
		if seen[k] {
			return nil, fmt.Errorf("key %s is set twice", quote(k))
		}
		seen[k] = true
		out = append(out, KeyValue{k, val})
	}
	return out, nil
}

// parseTags parses the additional-resource-tags value and checks AWS tag
// limits and the tag keys this CCM owns.
func parseTags(v string) ([]KeyValue, error) {
	kvs, err := parseKeyValues(v)
	if err != nil {
		return nil, err
	}
	for _, kv := range kvs {
		switch {
		case len(kv.Key) > 128:
			return nil, fmt.Errorf("tag key %s is longer than 128 characters", quote(kv.Key))
		case len(kv.Value) > 256:
			return nil, fmt.Errorf("value of tag %s is longer than 256 characters", quote(kv.Key))
		case strings.HasPrefix(strings.ToLower(kv.Key), "aws:"):
			return nil, fmt.Errorf("tag key %s uses the reserved prefix \"aws:\"", quote(kv.Key))
		case kv.Key == lbnames.ServiceNameTagKey || kv.Key == clustertag.LegacyKey ||
			strings.HasPrefix(kv.Key, clustertag.Prefix):
			return nil, fmt.Errorf("tag key %s is set by the controller and cannot be overridden", quote(kv.Key))
		}
	}
	return kvs, nil
}

// parseLabelSelector parses the target-node-labels value: `k=v,k2=` where an
// empty value means the label must exist. Keys and values must be valid
// Kubernetes label keys and values.
func parseLabelSelector(v string) (map[string]string, error) {
	kvs, err := parseKeyValues(v)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		if errs := validation.IsQualifiedName(kv.Key); len(errs) > 0 {
			return nil, fmt.Errorf("%s is not a valid label key: %s", quote(kv.Key), errs[0])
		}
		if errs := validation.IsValidLabelValue(kv.Value); len(errs) > 0 {
			return nil, fmt.Errorf("%s is not a valid value for label %s: %s", quote(kv.Value), quote(kv.Key), errs[0])
		}
		out[kv.Key] = kv.Value
	}
	return out, nil
}

// PortSet is the parsed ssl-ports value: all ports, or the listed numbers
// and names.
type PortSet struct {
	All     bool
	Numbers map[int32]bool
	Names   map[string]bool
}

// Has reports whether the service port number/name is in the set. Names
// compare case-insensitively, as upstream does.
func (p PortSet) Has(port int32, name string) bool {
	return p.All || p.Numbers[port] || (name != "" && p.Names[strings.ToLower(name)])
}

// parsePortSet parses the ssl-ports value: empty or `*` means all ports;
// otherwise a comma list where entries that are all digits are port numbers
// (1-65535) and the rest port names.
func parsePortSet(v string) (PortSet, error) {
	if s := strings.TrimSpace(v); s == "" || s == "*" {
		return PortSet{All: true}, nil
	}
	ps := PortSet{Numbers: map[int32]bool{}, Names: map[string]bool{}}
	// The in-tree provider and the upstream CCM split on "," without
	// trimming, so " 8443" never matched port 8443 and its listener stayed
	// plain on every load balancer they built. Trimming here would turn
	// that listener into SSL on adoption; so such an entry is a problem to
	// fix, and the listeners stay as they are until it is.
	for _, raw := range strings.Split(v, ",") {
		if raw != strings.TrimSpace(raw) && strings.TrimSpace(raw) != "" {
			return PortSet{}, fmt.Errorf("entry %q has spaces: the in-tree provider and upstream CCM never matched it, so that port's listener is not SSL on load balancers they built; write the list without spaces to make it SSL", raw)
		}
	}
	for _, e := range parseList(v) {
		if isDigits(e) {
			n, err := parseInt(e, 1, 65535, "a port number")
			if err != nil {
				return PortSet{}, err
			}
			ps.Numbers[n] = true
			continue
		}
		if e == "*" {
			return PortSet{}, fmt.Errorf("\"*\" must be the whole value, not a list entry")
		}
		ps.Names[strings.ToLower(e)] = true
	}
	return ps, nil
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// parseCIDRs parses CIDRs (IPv4 or IPv6) and returns them masked to their
// network, as net.ParseCIDR does upstream ("10.0.0.1/8" → "10.0.0.0/8").
func parseCIDRs(entries []string) ([]string, error) {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		p, err := netip.ParsePrefix(strings.TrimSpace(e))
		if err != nil || p.Addr().Zone() != "" {
			return nil, fmt.Errorf("%s is not a CIDR (want e.g. 203.0.113.0/24)", quote(e))
		}
		out = append(out, p.Masked().String())
	}
	return out, nil
}

var (
	securityGroupIDRE = regexp.MustCompile(`^sg-[0-9a-f]{8}([0-9a-f]{9})?$`)
	eipAllocationRE   = regexp.MustCompile(`^eipalloc-[0-9a-f]{8}([0-9a-f]{9})?$`)
	subnetIDRE        = regexp.MustCompile(`^subnet-[0-9a-f]{8}([0-9a-f]{9})?$`)
	certARNRE         = regexp.MustCompile(`^arn:aws[a-z-]*:(acm|iam):[a-z0-9-]*:[0-9]{12}:(certificate|server-certificate)/\S+$`)
)

// parseIDs parses a comma list of AWS IDs matching re; what names the kind
// of ID in the message.
func parseIDs(v string, re *regexp.Regexp, what string) ([]string, error) {
	ids := parseList(v)
	if len(ids) == 0 {
		return nil, fmt.Errorf("%s lists no %s", quote(v), what)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if !re.MatchString(id) {
			return nil, fmt.Errorf("%s is not a %s", quote(id), what)
		}
		if seen[id] {
			return nil, fmt.Errorf("%s is listed twice", quote(id))
		}
		seen[id] = true
	}
	return ids, nil
}

// parseSubnets parses the subnets value: subnet IDs (validated) or Name
// tag values (anything else, resolved later against AWS).
func parseSubnets(v string) ([]string, error) {
	subnets := parseList(v)
	if len(subnets) == 0 {
		return nil, fmt.Errorf("%s lists no subnets", quote(v))
	}
	seen := map[string]bool{}
	for _, s := range subnets {
		if strings.HasPrefix(s, "subnet-") && !subnetIDRE.MatchString(s) {
			return nil, fmt.Errorf("%s is not a subnet ID (want subnet- and 8 or 17 hex digits)", quote(s))
		}
		if seen[s] {
			return nil, fmt.Errorf("%s is listed twice", quote(s))
		}
		seen[s] = true
	}
	return subnets, nil
}

// parseIPv4s parses a comma list of IPv4 addresses.
func parseIPv4s(v string) ([]string, error) {
	ips := parseList(v)
	if len(ips) == 0 {
		return nil, fmt.Errorf("%s lists no addresses", quote(v))
	}
	out := make([]string, 0, len(ips))
	seen := map[netip.Addr]bool{}
	for _, s := range ips {
		a, err := netip.ParseAddr(s)
		if err != nil || !a.Is4() {
			return nil, fmt.Errorf("%s is not an IPv4 address", quote(s))
		}
		if seen[a] {
			return nil, fmt.Errorf("%s is listed twice", quote(s))
		}
		seen[a] = true
		out = append(out, a.String())
	}
	return out, nil
}

// parseCertARN checks that v is an ACM or IAM server certificate ARN.
func parseCertARN(v string) (string, error) {
	v = strings.TrimSpace(v)
	if !certARNRE.MatchString(v) {
		return "", fmt.Errorf("%s is not an ACM or IAM certificate ARN (want arn:aws:acm:<region>:<account>:certificate/<id>)", quote(v))
	}
	return v, nil
}

// TargetGroupAttributes is the parsed target-group-attributes value; nil
// fields are left as AWS has them.
type TargetGroupAttributes struct {
	PreserveClientIP *bool
	ProxyProtocolV2  *bool
}

// parseTargetGroupAttributes accepts only the two attributes upstream
// allows, each true or false, each at most once. hasUDP says whether the
// Service has UDP ports, which cannot disable client IP preservation.
func parseTargetGroupAttributes(v string, hasUDP bool) (TargetGroupAttributes, error) {
	kvs, err := parseKeyValues(v)
	if err != nil {
		return TargetGroupAttributes{}, err
	}
	var out TargetGroupAttributes
	for _, kv := range kvs {
		var b bool
		switch kv.Value {
		case "true":
			b = true
		case "false":
		default:
			return TargetGroupAttributes{}, fmt.Errorf("%s=%s: want true or false", quote(kv.Key), quote(kv.Value))
		}
		switch kv.Key {
		case TGAttrPreserveClientIP:
			if hasUDP && !b {
				return TargetGroupAttributes{}, fmt.Errorf("%s=false: client IP preservation cannot be disabled for UDP ports", kv.Key)
			}
			out.PreserveClientIP = &b
		case TGAttrProxyProtocolV2:
			out.ProxyProtocolV2 = &b
		default:
			return TargetGroupAttributes{}, fmt.Errorf("attribute %s is not supported (want %s or %s)", quote(kv.Key), TGAttrPreserveClientIP, TGAttrProxyProtocolV2)
		}
	}
	return out, nil
}

// parseHealthCheckPort accepts "traffic-port" or a port number.
func parseHealthCheckPort(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == HealthCheckTrafficPort {
		return v, nil
	}
	n, err := parseInt(v, 1, 65535, "a port number")
	if err != nil {
		return "", fmt.Errorf("%s is neither %s nor a port number (want 1-65535)", quote(v), HealthCheckTrafficPort)
	}
	return strconv.Itoa(int(n)), nil
}

// parseHealthCheckPath accepts an HTTP path: starts with "/", printable
// ASCII without spaces, at most 1024 characters (the AWS limit).
func parseHealthCheckPath(v string) (string, error) {
	if !strings.HasPrefix(v, "/") || len(v) > 1024 {
		return "", fmt.Errorf("%s is not a path starting with \"/\" (at most 1024 characters)", quote(v))
	}
	for _, r := range v {
		if r <= ' ' || r > '~' {
			return "", fmt.Errorf("%s contains a space or a character that is not printable ASCII", quote(v))
		}
	}
	return v, nil
}

// parseS3BucketName checks the S3 bucket naming rules (3-63 characters of
// lower-case letters, digits, dots and hyphens, starting and ending with a
// letter or digit).
func parseS3BucketName(v string) (string, error) {
	v = strings.TrimSpace(v)
	ok := len(v) >= 3 && len(v) <= 63
	for i, r := range v {
		alnum := (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')
		if !alnum && ((r != '.' && r != '-') || i == 0 || i == len(v)-1) {
			ok = false
		}
	}
	if !ok {
		return "", fmt.Errorf("%s is not an S3 bucket name (3-63 lower-case letters, digits, dots, hyphens)", quote(v))
	}
	return v, nil
}
