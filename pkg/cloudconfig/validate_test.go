package cloudconfig

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func override(service, region string) *ServiceOverride {
	return &ServiceOverride{Service: service, Region: region, URL: "https://endpoint.example", SigningRegion: region}
}

func TestDefault(t *testing.T) {
	tests := []struct {
		name string
		in   Global
		want Global
	}{
		{
			name: "empty",
			in:   Global{},
			want: Global{NodeIPFamilies: []string{"ipv4"}, SupportedTopologyInstanceTypePattern: DefaultTopologyInstanceTypePattern},
		},
		{
			name: "shared mode gets probe port and path",
			in:   Global{ClusterServiceLoadBalancerHealthProbeMode: ProbeModeShared},
			want: Global{
				ClusterServiceLoadBalancerHealthProbeMode:       ProbeModeShared,
				ClusterServiceSharedLoadBalancerHealthProbePort: 10256,
				ClusterServiceSharedLoadBalancerHealthProbePath: "/healthz",
				NodeIPFamilies:                       []string{"ipv4"},
				SupportedTopologyInstanceTypePattern: DefaultTopologyInstanceTypePattern,
			},
		},
		{
			name: "node-port mode gets no probe defaults",
			in:   Global{ClusterServiceLoadBalancerHealthProbeMode: ProbeModeServiceNodePort},
			want: Global{
				ClusterServiceLoadBalancerHealthProbeMode: ProbeModeServiceNodePort,
				NodeIPFamilies:                       []string{"ipv4"},
				SupportedTopologyInstanceTypePattern: DefaultTopologyInstanceTypePattern,
			},
		},
		{
			name: "set values are kept",
			in: Global{
				ClusterServiceLoadBalancerHealthProbeMode:       ProbeModeShared,
				ClusterServiceSharedLoadBalancerHealthProbePort: 8080,
				ClusterServiceSharedLoadBalancerHealthProbePath: "/livez",
				NodeIPFamilies:                       []string{"ipv6"},
				SupportedTopologyInstanceTypePattern: "^p5",
			},
			want: Global{
				ClusterServiceLoadBalancerHealthProbeMode:       ProbeModeShared,
				ClusterServiceSharedLoadBalancerHealthProbePort: 8080,
				ClusterServiceSharedLoadBalancerHealthProbePath: "/livez",
				NodeIPFamilies:                       []string{"ipv6"},
				SupportedTopologyInstanceTypePattern: "^p5",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{Global: tc.in}
			c.Default()
			if !reflect.DeepEqual(c.Global, tc.want) {
				t.Errorf("Default =\n%+v\nwant\n%+v", c.Global, tc.want)
			}
			c.Default()
			if !reflect.DeepEqual(c.Global, tc.want) {
				t.Errorf("second Default changed the config:\n%+v", c.Global)
			}
		})
	}
	t.Run("trims override values", func(t *testing.T) {
		c := &Config{ServiceOverride: map[string]*ServiceOverride{"1": {Service: " EC2 ", Region: "us-east-1 ", URL: " https://x "}}}
		c.Default()
		if o := c.ServiceOverride["1"]; o.Service != "EC2" || o.Region != "us-east-1" || o.URL != "https://x" {
			t.Errorf("override = %+v", o)
		}
	})
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []string // substrings; none means valid
	}{
		{name: "empty", cfg: Config{}},
		{name: "standard region", cfg: Config{Global: Global{Region: "us-east-1"}}},
		{name: "china region", cfg: Config{Global: Global{Region: "cn-north-1"}}},
		{name: "govcloud region", cfg: Config{Global: Global{Region: "us-gov-west-1"}}},
		{name: "iso-e region", cfg: Config{Global: Global{Region: "eu-isoe-west-1"}}},
		{name: "zone and matching region", cfg: Config{Global: Global{Zone: "us-east-1a", Region: "us-east-1"}}},
		{name: "local zone", cfg: Config{Global: Global{Zone: "us-west-2-lax-1a", Region: "us-west-2"}}},
		{name: "wavelength zone", cfg: Config{Global: Global{Zone: "us-east-1-wl1-bos-wlz-1"}}},
		{
			name: "region that is a zone",
			cfg:  Config{Global: Global{Region: "us-east-1a"}},
			want: []string{`[Global] Region "us-east-1a" is not an AWS region name; "us-east-1a" is a zone; use its region us-east-1`},
		},
		{
			name: "bad region",
			cfg:  Config{Global: Global{Region: "US East"}},
			want: []string{`[Global] Region "US East" is not an AWS region name; use a region name such as us-east-1`},
		},
		{
			name: "bad zone",
			cfg:  Config{Global: Global{Zone: "east"}},
			want: []string{`[Global] Zone "east" is not an availability-zone name`},
		},
		{
			name: "zone ID",
			cfg:  Config{Global: Global{Zone: "use1-az1"}},
			want: []string{`[Global] Zone "use1-az1" is a zone ID`},
		},
		{
			name: "zone contradicts region",
			cfg:  Config{Global: Global{Zone: "us-west-2a", Region: "us-east-1"}},
			want: []string{`[Global] Zone "us-west-2a" is in region us-west-2 but Region is "us-east-1"; remove Zone`},
		},
		{
			name: "cluster tag and ID agree",
			cfg:  Config{Global: Global{KubernetesClusterTag: "c1", KubernetesClusterID: "c1"}},
		},
		{
			name: "cluster tag and ID differ",
			cfg:  Config{Global: Global{KubernetesClusterTag: "c1", KubernetesClusterID: "c2"}},
			want: []string{`KubernetesClusterTag "c1" and KubernetesClusterID "c2" name different clusters`},
		},
		{
			name: "cluster ID with space",
			cfg:  Config{Global: Global{KubernetesClusterID: "my cluster"}},
			want: []string{`[Global] KubernetesClusterID "my cluster" contains white space`},
		},
		{
			name: "cluster ID too long for a tag key",
			cfg:  Config{Global: Global{KubernetesClusterID: strings.Repeat("c", 107)}},
			want: []string{"KubernetesClusterID is 107 characters long; AWS tag keys are at most 128, so the cluster ID must be at most 106"},
		},
		{name: "dual stack", cfg: Config{Global: Global{NodeIPFamilies: []string{"ipv6", "ipv4"}}}},
		{
			name: "bad and duplicate families",
			cfg:  Config{Global: Global{NodeIPFamilies: []string{"ipv4", "ipv5", "ipv4", "IPv6"}}},
			want: []string{`NodeIPFamilies value "ipv5" is not supported`, "NodeIPFamilies lists ipv4 twice", `"IPv6" is not supported (write ipv6)`},
		},
		{
			name: "resource IDs",
			cfg:  Config{Global: Global{VPC: "vpc-0123abcd", SubnetID: "subnet-0123abcd", RouteTableID: "rtb-0123abcd", ElbSecurityGroup: "sg-0123abcd"}},
		},
		{
			name: "wrong resource IDs",
			cfg:  Config{Global: Global{VPC: "subnet-1", SubnetID: "subnet-", RouteTableID: "rt-1", ElbSecurityGroup: "my-sg"}},
			want: []string{
				`[Global] VPC "subnet-1" is not a vpc ID; use the ID, e.g. vpc-0123456789abcdef0`,
				`[Global] SubnetID "subnet-" is not a subnet ID`,
				`[Global] RouteTableID "rt-1" is not a rtb ID`,
				`[Global] ElbSecurityGroup "my-sg" is not a sg ID`,
			},
		},
		{name: "role ARN", cfg: Config{Global: Global{RoleARN: "arn:aws:iam::123456789012:role/path/ccm", Region: "us-east-1"}}},
		{name: "role ARN in China", cfg: Config{Global: Global{RoleARN: "arn:aws-cn:iam::123456789012:role/ccm", Region: "cn-north-1"}}},
		{name: "role ARN in GovCloud", cfg: Config{Global: Global{RoleARN: "arn:aws-us-gov:iam::123456789012:role/ccm", Zone: "us-gov-east-1a"}}},
		{name: "role ARN in ISO-B", cfg: Config{Global: Global{RoleARN: "arn:aws-iso-b:iam::123456789012:role/ccm", Region: "us-isob-east-1"}}},
		{
			name: "not an ARN",
			cfg:  Config{Global: Global{RoleARN: "k8s-ccm"}},
			want: []string{`[Global] RoleARN "k8s-ccm" is not an ARN`},
		},
		{
			name: "user, not role",
			cfg:  Config{Global: Global{RoleARN: "arn:aws:iam::123456789012:user/ccm"}},
			want: []string{"is not an IAM role ARN"},
		},
		{
			name: "bad partition",
			cfg:  Config{Global: Global{RoleARN: "arn:azure:iam::123456789012:role/ccm"}},
			want: []string{`has unknown partition "azure"`},
		},
		{
			name: "short account",
			cfg:  Config{Global: Global{RoleARN: "arn:aws:iam::1234:role/ccm"}},
			want: []string{`has account "1234", not 12 digits`},
		},
		{
			name: "role partition contradicts region",
			cfg:  Config{Global: Global{RoleARN: "arn:aws:iam::123456789012:role/ccm", Region: "cn-north-1"}},
			want: []string{"is in partition aws but region cn-north-1 is in aws-cn"},
		},
		{
			name: "role partition contradicts zone",
			cfg:  Config{Global: Global{RoleARN: "arn:aws-cn:iam::123456789012:role/ccm", Zone: "us-gov-east-1a"}},
			want: []string{"is in partition aws-cn but region us-gov-east-1 is in aws-us-gov"},
		},
		{name: "source ARN", cfg: Config{Global: Global{SourceARN: "arn:aws:eks:us-east-1:123456789012:cluster/c1"}}},
		{
			name: "bad source ARN",
			cfg:  Config{Global: Global{SourceARN: "arn:aws:eks"}},
			want: []string{`[Global] SourceARN "arn:aws:eks" is not an ARN`},
		},
		{
			name: "probe settings",
			cfg: Config{Global: Global{
				ClusterServiceLoadBalancerHealthProbeMode:       "NodePort",
				ClusterServiceSharedLoadBalancerHealthProbePort: 70000,
				ClusterServiceSharedLoadBalancerHealthProbePath: "healthz",
			}},
			want: []string{
				`ClusterServiceLoadBalancerHealthProbeMode "NodePort" is not supported; use ServiceNodePort or Shared`,
				"ClusterServiceSharedLoadBalancerHealthProbePort 70000 is not a port; use 1-65535",
				`ClusterServiceSharedLoadBalancerHealthProbePath "healthz" must start with /`,
			},
		},
		{
			name: "bad pattern",
			cfg:  Config{Global: Global{SupportedTopologyInstanceTypePattern: "^(p"}},
			want: []string{"SupportedTopologyInstanceTypePattern is not a valid regular expression"},
		},
		{
			name: "NLB security group mode",
			cfg:  Config{Global: Global{NLBSecurityGroupMode: "managed"}},
			want: []string{`NLBSecurityGroupMode "managed" is not supported; use Managed`},
		},
		{
			name: "overrides in several regions",
			cfg: Config{ServiceOverride: map[string]*ServiceOverride{
				"1": override("EC2", "us-east-1"), "2": override("EC2", "us-west-2"), "3": override("ELASTIC_LOAD_BALANCING_V2", "us-east-1"),
			}},
		},
		{
			name: "incomplete override",
			cfg:  Config{ServiceOverride: map[string]*ServiceOverride{"1": {Service: " "}}},
			want: []string{
				`[ServiceOverride "1"] Service is missing`,
				`[ServiceOverride "1"] Region is missing`,
				`[ServiceOverride "1"] URL is missing`,
				`[ServiceOverride "1"] SigningRegion is missing`,
			},
		},
		{
			name: "override with relative URL and unknown service",
			cfg: Config{ServiceOverride: map[string]*ServiceOverride{
				"1": {Service: "s3", Region: "us-east-1", URL: "ftp://x", SigningRegion: "us-east-1"},
				"2": {Service: "EC2", Region: "us-east-1", URL: "http://", SigningRegion: "us-east-1"},
			}},
			want: []string{
				`[ServiceOverride "1"] Service "s3" is not a service this CCM calls; use one of: EC2, Elastic Load Balancing, Elastic Load Balancing v2, STS, IAM, KMS, ec2imds, Auto Scaling`,
				`[ServiceOverride "1"] URL "ftp://x" is not an absolute http or https URL`,
				`[ServiceOverride "2"] URL "http://" has no host`,
			},
		},
		{
			name: "duplicate after normalisation",
			cfg: Config{ServiceOverride: map[string]*ServiceOverride{
				"a": override("Elastic Load Balancing", "us-east-1"), "b": override("elasticloadbalancing", "us-east-1"),
			}},
			want: []string{`[ServiceOverride "b"] overrides Elastic Load Balancing in us-east-1, as [ServiceOverride "a"] already does`},
		},
		{
			name: "nil override",
			cfg:  Config{ServiceOverride: map[string]*ServiceOverride{"x": nil}},
			want: []string{`[ServiceOverride "x"] is empty`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate succeeded, want errors")
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error is %T, want *Error", err)
			}
			if len(ce.Problems) != len(tc.want) {
				t.Errorf("%d problems, want %d:\n%v", len(ce.Problems), len(tc.want), err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestValidateReportsAllProblemsOnePerLine(t *testing.T) {
	c := &Config{Global: Global{Region: "nowhere", VPC: "x", RoleARN: "y", NLBSecurityGroupMode: "z"}}
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate succeeded")
	}
	lines := strings.Split(err.Error(), "\n")
	if lines[0] != "cloud config: 4 problems:" || len(lines) != 5 {
		t.Fatalf("want a header and one line per problem, got:\n%v", err)
	}
	for i, key := range []string{"Region", "VPC", "RoleARN", "NLBSecurityGroupMode"} {
		if !strings.HasPrefix(lines[i+1], "  - [Global] "+key+" ") {
			t.Errorf("line %d = %q, want it to name %s", i+1, lines[i+1], key)
		}
	}
}

func TestWarnings(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		{name: "none", cfg: Config{Global: Global{Region: "us-east-1"}}},
		{
			name: "in-tree strict zone check",
			cfg:  Config{Global: Global{DisableStrictZoneCheck: true}},
			want: []string{"[Global] DisableStrictZoneCheck has no effect"},
		},
		{
			name: "probe settings without shared mode",
			cfg:  Config{Global: Global{ClusterServiceSharedLoadBalancerHealthProbePort: 1, ClusterServiceSharedLoadBalancerHealthProbePath: "/x"}},
			want: []string{
				"ClusterServiceSharedLoadBalancerHealthProbePort has no effect unless ClusterServiceLoadBalancerHealthProbeMode = Shared",
				"ClusterServiceSharedLoadBalancerHealthProbePath has no effect",
			},
		},
		{
			name: "VPC without the rest of off-EC2 mode",
			cfg:  Config{Global: Global{VPC: "vpc-1", Region: "us-east-1"}},
			want: []string{"[Global] VPC is set but Region (or Zone) or KubernetesClusterID is not"},
		},
		{
			name: "override spellings and ignored fields",
			cfg: Config{ServiceOverride: map[string]*ServiceOverride{
				"1": {Service: "EC2", SigningMethod: "v4"},
				"2": {Service: "elasticloadbalancing"},
				"3": {Service: "kms"},
				"4": {Service: "autoscaling"},
				"":  {Service: "STS"},
			}},
			want: []string{
				"[ServiceOverride] has no name",
				`[ServiceOverride "1"] SigningMethod is ignored`,
				`[ServiceOverride "2"] Service "elasticloadbalancing" is the SDK v1 name; here, as in-tree, it covers both`,
				`[ServiceOverride "3"] Service "kms" is matched as "KMS" here`,
				`[ServiceOverride "4"] Service "autoscaling" is matched as "Auto Scaling"`,
				`[ServiceOverride "4"] overrides Auto Scaling, which this CCM never calls`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.cfg.Warnings()
			if len(got) != len(tc.want) {
				t.Errorf("Warnings() = %d notes, want %d:\n%s", len(got), len(tc.want), strings.Join(got, "\n"))
			}
			all := strings.Join(got, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("Warnings() lacks %q:\n%s", w, all)
				}
			}
		})
	}
}

func TestClusterID(t *testing.T) {
	tests := []struct {
		name, tag, id, want string
	}{
		{name: "none"},
		{name: "legacy tag", tag: "old", want: "old"},
		{name: "ID", id: "new", want: "new"},
		{name: "ID wins", tag: "old", id: "new", want: "new"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{Global: Global{KubernetesClusterTag: tc.tag, KubernetesClusterID: tc.id}}
			if got := c.ClusterID(); got != tc.want {
				t.Errorf("ClusterID() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRegionFromConfig(t *testing.T) {
	tests := []struct {
		name, zone, region, want string
		ok                       bool
	}{
		{name: "nothing"},
		{name: "region", region: "eu-west-1", want: "eu-west-1", ok: true},
		{name: "zone", zone: "us-east-1a", want: "us-east-1", ok: true},
		{name: "govcloud zone", zone: "us-gov-west-1b", want: "us-gov-west-1", ok: true},
		{name: "local zone", zone: "us-west-2-lax-1a", want: "us-west-2", ok: true},
		{name: "wavelength zone", zone: "us-east-1-wl1-bos-wlz-1", want: "us-east-1", ok: true},
		{name: "region wins", zone: "us-east-1a", region: "us-east-1", want: "us-east-1", ok: true},
		{name: "unparseable zone", zone: "zone-a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{Global: Global{Zone: tc.zone, Region: tc.region}}
			got, ok := c.RegionFromConfig()
			if got != tc.want || ok != tc.ok {
				t.Errorf("RegionFromConfig() = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestOffEC2(t *testing.T) {
	tests := []struct {
		name string
		g    Global
		want bool
	}{
		{name: "nothing"},
		{name: "region, VPC, cluster ID", g: Global{Region: "us-east-1", VPC: "vpc-1", KubernetesClusterID: "c"}, want: true},
		{name: "zone, VPC, legacy tag", g: Global{Zone: "us-east-1a", VPC: "vpc-1", KubernetesClusterTag: "c"}, want: true},
		{name: "no VPC", g: Global{Region: "us-east-1", KubernetesClusterID: "c"}},
		{name: "no cluster ID", g: Global{Region: "us-east-1", VPC: "vpc-1"}},
		{name: "no region", g: Global{VPC: "vpc-1", KubernetesClusterID: "c", SubnetID: "subnet-1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{Global: tc.g}
			if got := c.OffEC2(); got != tc.want {
				t.Errorf("OffEC2() = %v, want %v", got, tc.want)
			}
		})
	}
}
