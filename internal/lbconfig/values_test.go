package lbconfig

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

// Fuzz tests for every value parser (house style rule 23). Each checks the
// parser never panics, and that what it accepts satisfies the documented
// syntax (and round-trips where there is a canonical form).

func FuzzParseKeyValues(f *testing.F) {
	for _, s := range []string{"", "k=v", "k=v,k2=,k3", " a = b , ,c", "=v", "a=b=c", "a,a", "k=v,", ",,,", "é=ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		kvs, err := parseKeyValues(s)
		if err != nil {
			if kvs != nil {
				t.Fatalf("parseKeyValues(%q) returned values and error", s)
			}
			return
		}
		seen := map[string]bool{}
		var parts []string
		for _, kv := range kvs {
			if kv.Key == "" || seen[kv.Key] || strings.ContainsAny(kv.Key, "=,") || strings.ContainsAny(kv.Value, "=,") {
				t.Fatalf("parseKeyValues(%q) accepted %q", s, kvs)
			}
			if kv.Key != strings.TrimSpace(kv.Key) || kv.Value != strings.TrimSpace(kv.Value) {
				t.Fatalf("parseKeyValues(%q) did not trim %q", s, kv)
			}
			seen[kv.Key] = true
			parts = append(parts, kv.Key+"="+kv.Value)
		}
		// The canonical form parses to the same list.
		again, err := parseKeyValues(strings.Join(parts, ","))
		if err != nil || len(again) != len(kvs) {
			t.Fatalf("canonical form of %q does not round-trip: %v %v", s, again, err)
		}
		for i := range again {
			if again[i] != kvs[i] {
				t.Fatalf("canonical form of %q does not round-trip: %v", s, again)
			}
		}
	})
}

func FuzzParseTags(f *testing.F) {
	for _, s := range []string{"team=shop,env=,owner", "aws:x=1", "kubernetes.io/cluster/x=owned", "KubernetesCluster=x", "a=" + strings.Repeat("v", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tags, err := parseTags(s)
		if err != nil {
			return
		}
		for _, kv := range tags {
			if len(kv.Key) > 128 || len(kv.Value) > 256 || strings.HasPrefix(strings.ToLower(kv.Key), "aws:") ||
				strings.HasPrefix(kv.Key, clustertag.Prefix) || kv.Key == lbnames.ServiceNameTagKey {
				t.Fatalf("parseTags(%q) accepted %q", s, kv)
			}
		}
	})
}

func FuzzParseLabelSelector(f *testing.F) {
	for _, s := range []string{"a=b", "node-role.kubernetes.io/lb=", "bad key=x", "a=-b", "example.com/x=y,z", "a/b/c=d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := parseLabelSelector(s)
		if err != nil {
			return
		}
		for k, v := range sel {
			if len(validation.IsQualifiedName(k)) > 0 || len(validation.IsValidLabelValue(v)) > 0 {
				t.Fatalf("parseLabelSelector(%q) accepted %q=%q", s, k, v)
			}
		}
	})
}

func FuzzParsePortSet(f *testing.F) {
	for _, s := range []string{"", "*", "443", "443,https", "HTTPS, 8443", "0", "65536", "443,*", "-1", "00443"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := parsePortSet(s)
		if err != nil {
			return
		}
		if ps.All {
			if v := strings.TrimSpace(s); v != "" && v != "*" {
				t.Fatalf("parsePortSet(%q) means all ports", s)
			}
			return
		}
		for n := range ps.Numbers {
			if n < 1 || n > 65535 {
				t.Fatalf("parsePortSet(%q) accepted port %d", s, n)
			}
		}
		for name := range ps.Names {
			if name == "" || name != strings.ToLower(name) || isDigits(name) || name == "*" {
				t.Fatalf("parsePortSet(%q) accepted name %q", s, name)
			}
		}
	})
}

func FuzzParseCIDRs(f *testing.F) {
	for _, s := range []string{"10.0.0.0/8", "10.0.0.1/8", "0.0.0.0/0", "2001:db8::/32", "10.0.0.0", "10.0.0.0/33", "fe80::1%eth0/64", " 192.0.2.0/24 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := parseCIDRs([]string{s})
		if err != nil {
			return
		}
		p, err := netip.ParsePrefix(out[0])
		if err != nil || p != p.Masked() || p.String() != out[0] {
			t.Fatalf("parseCIDRs(%q) = %q, not a canonical prefix", s, out[0])
		}
	})
}

func FuzzParseBool(f *testing.F) {
	for _, s := range []string{"true", "false", "True", "1", "0", "yes", " true ", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := parseBool(s)
		if err != nil {
			if !utf8.ValidString(err.Error()) {
				t.Fatalf("message for %q is not valid UTF-8", s)
			}
			return
		}
		if want, _ := strconv.ParseBool(strings.TrimSpace(s)); b != want {
			t.Fatalf("parseBool(%q) = %v", s, b)
		}
	})
}

func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"5", "300", "301", "4", "abc", "30s", "-1", "+10", " 10 ", "99999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseInt(s, 5, 300, "a number of seconds")
		if err != nil {
			if !strings.Contains(err.Error(), "want 5-300") {
				t.Fatalf("message for %q does not say the range: %v", s, err)
			}
			return
		}
		if n < 5 || n > 300 {
			t.Fatalf("parseInt(%q) = %d, out of range", s, n)
		}
	})
}

func FuzzParseIDs(f *testing.F) {
	for _, s := range []string{"sg-01234567", "sg-0123456789abcdef0, sg-89abcdef", "sg-123", "sg-01234567,sg-01234567", "", "subnet-01234567,name"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ids, err := parseIDs(s, securityGroupIDRE, "security group ID"); err == nil {
			for _, id := range ids {
				if !securityGroupIDRE.MatchString(id) {
					t.Fatalf("parseIDs(%q) accepted %q", s, id)
				}
			}
		}
		if subnets, err := parseSubnets(s); err == nil {
			for _, sn := range subnets {
				if sn == "" || strings.Contains(sn, ",") || (strings.HasPrefix(sn, "subnet-") && !subnetIDRE.MatchString(sn)) {
					t.Fatalf("parseSubnets(%q) accepted %q", s, sn)
				}
			}
		}
		if ips, err := parseIPv4s(s); err == nil {
			for _, ip := range ips {
				if a, err := netip.ParseAddr(ip); err != nil || !a.Is4() {
					t.Fatalf("parseIPv4s(%q) accepted %q", s, ip)
				}
			}
		}
	})
}

func FuzzParseTargetGroupAttributes(f *testing.F) {
	for _, s := range []string{"preserve_client_ip.enabled=false", "proxy_protocol_v2.enabled=true,preserve_client_ip.enabled=true",
		"stickiness.enabled=true", "proxy_protocol_v2.enabled=", "proxy_protocol_v2.enabled=TRUE"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, udp bool) {
		a, err := parseTargetGroupAttributes(s, udp)
		if err != nil {
			return
		}
		if udp && a.PreserveClientIP != nil && !*a.PreserveClientIP {
			t.Fatalf("%q disabled client IP preservation on UDP", s)
		}
	})
}

func FuzzParseHealthCheckValues(f *testing.F) {
	for _, s := range []string{"traffic-port", "8080", "0", "65536", "/healthz", "healthz", "/a b", "/ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if port, err := parseHealthCheckPort(s); err == nil && port != HealthCheckTrafficPort {
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				t.Fatalf("parseHealthCheckPort(%q) = %q", s, port)
			}
		}
		if path, err := parseHealthCheckPath(s); err == nil && (!strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \t\n")) {
			t.Fatalf("parseHealthCheckPath(%q) = %q", s, path)
		}
		_, _ = parseS3BucketName(s)
		_, _ = parseCertARN(s)
	})
}

// FuzzParse sets fuzzed values on two registered annotations of a Service
// with fuzzed port protocols and traffic policy, and checks that Parse never
// panics, always returns a Config, reports only registered annotations or
// spec fields, and marks them invalid.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "true", "*", "10", "nlb", "a=b", "sg-01234567", "10.0.0.0/8"} {
		f.Add(s, "", false, uint8(0), uint8(1), uint8(0))
		f.Add(s, s, true, uint8(3), uint8(27), uint8(5))
	}
	keys := Annotations()
	protocols := []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP, ""}
	f.Fuzz(func(t *testing.T, v1, v2 string, isNLB bool, k1, k2, shape uint8) {
		ann := map[string]string{keys[int(k1)%len(keys)].Key: v1, keys[int(k2)%len(keys)].Key: v2}
		if isNLB {
			ann[KeyType] = lbnames.TypeNLB
		}
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Annotations: ann}, Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{
				{Name: "a", Port: 443, NodePort: 30443, Protocol: protocols[shape%4]},
				{Name: "b", Port: 80, NodePort: 30080, Protocol: protocols[(shape/4)%4]},
			},
		}}
		if shape&16 != 0 {
			svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			svc.Spec.HealthCheckNodePort = 32000
		}
		kind := lbnames.Kind(svc)
		cfg, problems := Parse(svc, kind)
		if kind == lbnames.KindNotOurs {
			if cfg != nil || problems != nil {
				t.Fatal("Parse returned a Config for a Service that is not ours")
			}
			return
		}
		if cfg == nil {
			t.Fatal("no Config")
		}
		for _, p := range problems {
			if _, ok := Lookup(p.Annotation); !ok && !strings.HasPrefix(p.Annotation, "spec.") {
				t.Fatalf("problem on unknown key %q", p.Annotation)
			}
			if cfg.Valid(p.Annotation) || p.Reason == "" || !utf8.ValidString(p.String()) {
				t.Fatalf("bad problem %v", p)
			}
		}
		if cfg.Valid(KeySourceRanges) && len(cfg.SourceRanges) == 0 {
			t.Fatal("valid source ranges but none set")
		}
		if hc := cfg.HealthCheck; hc.Interval < 5 || hc.HealthyThreshold < 2 || hc.UnhealthyThreshold < 2 || hc.Port == "" {
			t.Fatalf("health check out of range: %+v", hc)
		}
	})
}

// TestPortSetSpacesAreAProblem: upstream never matched " 8443"; accepting
// it would change an adopted load balancer's listener.
func TestPortSetSpacesAreAProblem(t *testing.T) {
	if _, err := parsePortSet("443, 8443"); err == nil || !strings.Contains(err.Error(), `entry " 8443" has spaces`) {
		t.Errorf("parsePortSet(\"443, 8443\") = %v, want the spaces reported", err)
	}
	ps, err := parsePortSet("443,8443")
	if err != nil || !ps.Numbers[443] || !ps.Numbers[8443] {
		t.Errorf("parsePortSet(\"443,8443\") = %+v, %v", ps, err)
	}
}
