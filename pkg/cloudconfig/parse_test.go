package cloudconfig

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Config
	}{
		{
			name: "empty file",
			in:   "",
			want: Config{},
		},
		{
			name: "names are case-insensitive",
			in:   "[gLoBaL]\nREGION = us-east-1\nkubernetesclusterid = c1\n",
			want: Config{Global: Global{Region: "us-east-1", KubernetesClusterID: "c1"}},
		},
		{
			name: "repeated list key builds a list in order",
			in:   "[Global]\nNodeIPFamilies = ipv6\nNodeIPFamilies = ipv4\n",
			want: Config{Global: Global{NodeIPFamilies: []string{"ipv6", "ipv4"}}},
		},
		{
			name: "list key repeated across comments and blank lines, any case",
			in:   "[Global]\nNodeIPFamilies = ipv4 ; first\n\n# more\nnodeipfamilies = ipv6\n",
			want: Config{Global: Global{NodeIPFamilies: []string{"ipv4", "ipv6"}}},
		},
		{
			name: "same key in different override sections",
			in:   "[ServiceOverride \"a\"]\nService = EC2\n[ServiceOverride \"A\"]\nService = ELB\n",
			want: Config{ServiceOverride: map[string]*ServiceOverride{"a": {Service: "EC2"}, "A": {Service: "ELB"}}},
		},
		{
			name: "quoting, escapes and comments",
			in:   "[Global]\nSourceARN = \"arn:aws:s3:::a;b#c\" ; comment\nRouteTableID = rtb-1 # comment\nZone = \"  padded\\t\"\n",
			want: Config{Global: Global{SourceARN: "arn:aws:s3:::a;b#c", RouteTableID: "rtb-1", Zone: "  padded\t"}},
		},
		{
			name: "bools: bare key, yes/no, on/off, 1/0",
			in:   "[Global]\nDisableSecurityGroupIngress\nDisableStrictZoneCheck = Yes\n",
			want: Config{Global: Global{DisableSecurityGroupIngress: true, DisableStrictZoneCheck: true}},
		},
		{
			name: "ints accept hex as gcfg does",
			in:   "[Global]\nClusterServiceSharedLoadBalancerHealthProbePort = 0x2810\n",
			want: Config{Global: Global{ClusterServiceSharedLoadBalancerHealthProbePort: 10256}},
		},
		{
			name: "CRLF line endings",
			in:   "[Global]\r\nRegion = us-east-1\r\n",
			want: Config{Global: Global{Region: "us-east-1"}},
		},
		{
			name: "service overrides by name",
			in:   "[ServiceOverride \"a b\"]\nService = EC2\n[serviceoverride \"2\"]\nservice = KMS\nsigningname = kms\n",
			want: Config{ServiceOverride: map[string]*ServiceOverride{
				"a b": {Service: "EC2"},
				"2":   {Service: "KMS", SigningName: "kms"},
			}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("Parse =\n%+v\nwant\n%+v", *got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{
			name: "unknown key lists known keys",
			in:   "[Global]\nFoo = bar\n",
			want: []string{`cloud config: unknown key "Foo" in [Global]; known keys: Zone, Region, VPC, SubnetID, RouteTableID, RoleARN, SourceARN, KubernetesClusterTag, KubernetesClusterID, DisableSecurityGroupIngress, ElbSecurityGroup, NodeIPFamilies, ClusterServiceLoadBalancerHealthProbeMode, ClusterServiceSharedLoadBalancerHealthProbePort, ClusterServiceSharedLoadBalancerHealthProbePath, SupportedTopologyInstanceTypePattern, NLBSecurityGroupMode, DisableStrictZoneCheck`},
		},
		{
			name: "unknown key suggests the close one",
			in:   "[Global]\nRegoin = us-east-1\n",
			want: []string{`unknown key "Regoin" in [Global] (did you mean "Region"?)`},
		},
		{
			name: "unknown section",
			in:   "[Globl]\nRegion = us-east-1\n",
			want: []string{`cloud config: unknown section [Globl] (did you mean "Global"?); known sections: [Global], [ServiceOverride "<name>"]`},
		},
		{
			name: "unknown key in a service override",
			in:   "[ServiceOverride \"x\"]\nEndpoint = https://a\n",
			want: []string{`unknown key "Endpoint" in [ServiceOverride "x"]; known keys: Service, Region, URL, SigningRegion, SigningMethod, SigningName`},
		},
		{
			name: "named Global",
			in:   "[Global \"x\"]\nRegion = us-east-1\n",
			want: []string{`[Global] takes no name`},
		},
		{
			name: "every unknown key at once, each once",
			in:   "[Global]\nA1 = 1\nB2 = 2\n[Other \"x\"]\nC = 3\n[Other \"y\"]\n",
			want: []string{"cloud config: 3 problems:", `unknown key "A1"`, `unknown key "B2"`, `unknown section [Other]`},
		},
		{
			name: "single-valued key set twice names both lines",
			in:   "[Global]\nRegion = us-east-1\nZone = us-east-1a\nVPC = vpc-1\n\n; later\nZone = us-east-1b\n",
			want: []string{"cloud config: [Global] Zone set twice, lines 3 and 7; keep the one you mean; only list keys (NodeIPFamilies) may repeat"},
		},
		{
			name: "key spelt in another case is the same key",
			in:   "[global]\nregion = a\nREGION = b\nRegion = c\n",
			want: []string{"[Global] Region set 3 times, lines 2, 3 and 4"},
		},
		{
			name: "bare boolean repeated",
			in:   "[Global]\nDisableSecurityGroupIngress\nDisableSecurityGroupIngress = false\n",
			want: []string{"[Global] DisableSecurityGroupIngress set twice, lines 2 and 3"},
		},
		{
			name: "Global section twice",
			in:   "[Global]\nRegion = us-east-1\n[ServiceOverride \"x\"]\nService = EC2\n[Global]\nVPC = vpc-1\n",
			want: []string{"cloud config: [Global] appears twice, lines 1 and 5; merge them into one section"},
		},
		{
			name: "override section twice, and its key",
			in:   "[ServiceOverride \"ec2 \\\"x\\\"\"]\nURL = https://a\n[serviceoverride \"ec2 \\\"x\\\"\"]\nurl = https://b\n",
			want: []string{"cloud config: 2 problems:", `[ServiceOverride "ec2 \"x\""] appears twice, lines 1 and 3`, `[ServiceOverride "ec2 \"x\""] URL set twice, lines 2 and 4`},
		},
		{
			name: "duplicates reported with unknown keys",
			in:   "[Global]\nZone = a\nFoo = 1\nZone = b\n",
			want: []string{"cloud config: 2 problems:", `unknown key "Foo"`, "[Global] Zone set twice, lines 2 and 4"},
		},
		{
			name: "bad bool",
			in:   "[Global]\nDisableSecurityGroupIngress = maybe\n",
			want: []string{"[Global] DisableSecurityGroupIngress: invalid value", "use true or false"},
		},
		{
			name: "bad int",
			in:   "[Global]\nclusterservicesharedloadbalancerhealthprobeport = 10256x\n",
			want: []string{"[Global] ClusterServiceSharedLoadBalancerHealthProbePort: invalid value", "use a whole number"},
		},
		{
			name: "string key without value",
			in:   "[Global]\nRegion\n",
			want: []string{"[Global] Region has no value; write Region = <value>"},
		},
		{
			name: "key before any section",
			in:   "Region = us-east-1\n",
			want: []string{"cloud config: line 1, column 1: expected section header"},
		},
		{
			name: "unterminated string names the line",
			in:   "[Global]\n\nRegion = \"us-east-1\n",
			want: []string{"cloud config: line 3, column 10: string not terminated"},
		},
		{
			name: "unclosed section header",
			in:   "[Global\n",
			want: []string{"line 1, column 8"},
		},
		{
			name: "illegal character",
			in:   "[Global]\n@Region = x\n",
			want: []string{"line 2, column 1: illegal character"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.in))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", c)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("error is %T, want *Error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestKnownKeysMatchUpstreamAndInTree(t *testing.T) {
	// Union of upstream cloud-provider-aws's and the in-tree provider's
	// [Global] keys: every one must parse.
	for _, key := range []string{
		"Zone", "Region", "VPC", "SubnetID", "RouteTableID", "RoleARN", "SourceARN",
		"KubernetesClusterTag", "KubernetesClusterID", "DisableSecurityGroupIngress", "ElbSecurityGroup",
		"NodeIPFamilies", "ClusterServiceLoadBalancerHealthProbeMode", "ClusterServiceSharedLoadBalancerHealthProbePort",
		"ClusterServiceSharedLoadBalancerHealthProbePath", "SupportedTopologyInstanceTypePattern", "NLBSecurityGroupMode",
		"DisableStrictZoneCheck",
	} {
		t.Run(key, func(t *testing.T) {
			value := "x"
			switch key {
			case "DisableSecurityGroupIngress", "DisableStrictZoneCheck":
				value = "false"
			case "ClusterServiceSharedLoadBalancerHealthProbePort":
				value = "1"
			}
			if _, err := Parse([]byte("[Global]\n" + key + " = " + value + "\n")); err != nil {
				t.Error(err)
			}
		})
	}
}
