package cloudconfig

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// normalised makes nil and empty lists and maps compare equal.
func normalised(c *Config) Config {
	out := *c
	if len(out.Global.NodeIPFamilies) == 0 {
		out.Global.NodeIPFamilies = nil
	}
	if len(out.ServiceOverride) == 0 {
		out.ServiceOverride = nil
	}
	return out
}

func assertRoundTrip(t *testing.T, c *Config) []byte {
	t.Helper()
	out, err := Render(c)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	back, err := Parse(out)
	if err != nil {
		t.Fatalf("Parse(Render(c)): %v\n%s", err, out)
	}
	if got, want := normalised(back), normalised(c); !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip changed the config:\n got %+v\nwant %+v\nrendered:\n%s", got, want, out)
	}
	return out
}

func TestRenderRoundTripsFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "valid-*.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			parsed, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			assertRoundTrip(t, parsed)
			parsed.Default()
			out := assertRoundTrip(t, parsed)
			if _, err := load(out); err != nil {
				t.Errorf("rendered file does not load: %v\n%s", err, out)
			}
		})
	}
}

func TestRender(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // exact output when set
	}{
		{
			name: "empty",
			cfg:  Config{},
			want: "[Global]\n",
		},
		{
			name: "keys in field order, lists repeated, sections sorted",
			cfg: Config{
				Global: Global{
					Region: "us-east-1", Zone: "us-east-1a", NodeIPFamilies: []string{"ipv6", "ipv4"},
					DisableSecurityGroupIngress: true, ClusterServiceSharedLoadBalancerHealthProbePort: 10256,
				},
				ServiceOverride: map[string]*ServiceOverride{
					"b": {Service: "Elastic Load Balancing v2", Region: "us-east-1"},
					"a": {Service: "EC2", URL: "https://ec2.example:8443/path?x=1"},
				},
			},
			want: `[Global]
Zone = us-east-1a
Region = us-east-1
DisableSecurityGroupIngress = true
NodeIPFamilies = ipv6
NodeIPFamilies = ipv4
ClusterServiceSharedLoadBalancerHealthProbePort = 10256

[ServiceOverride "a"]
Service = EC2
URL = https://ec2.example:8443/path?x=1

[ServiceOverride "b"]
Service = Elastic Load Balancing v2
Region = us-east-1
`,
		},
		{
			name: "values that need quotes",
			cfg: Config{Global: Global{
				SupportedTopologyInstanceTypePattern: `^p[0-9]\.(x|y)"; # \`,
				SourceARN:                            " leading and trailing ",
				Zone:                                 "tab\there\nnewline",
				NodeIPFamilies:                       []string{"", "ipv4"},
			}},
		},
		{
			name: "odd section names",
			cfg: Config{ServiceOverride: map[string]*ServiceOverride{
				`quote " and \ back`: {Service: "EC2"},
				"":                   {Service: "STS"},
			}},
		},
		{
			name: "negative and large numbers",
			cfg:  Config{Global: Global{ClusterServiceSharedLoadBalancerHealthProbePort: -1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cfg
			out := assertRoundTrip(t, &c)
			if tc.want != "" && string(out) != tc.want {
				t.Errorf("Render =\n%s\nwant\n%s", out, tc.want)
			}
		})
	}
}

func TestRenderNilSectionIsEmpty(t *testing.T) {
	out, err := Render(&Config{ServiceOverride: map[string]*ServiceOverride{"x": nil}})
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if o := back.ServiceOverride["x"]; o == nil || *o != (ServiceOverride{}) {
		t.Errorf("nil section came back as %+v", o)
	}
}

func TestRenderRejectsUnrepresentableValues(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "carriage return", cfg: Config{Global: Global{Region: "a\rb"}}, want: "Region: value contains a carriage return"},
		{name: "NUL", cfg: Config{Global: Global{NodeIPFamilies: []string{"\x00"}}}, want: "NodeIPFamilies"},
		{name: "invalid UTF-8", cfg: Config{ServiceOverride: map[string]*ServiceOverride{"1": {URL: "\xff"}}}, want: "URL: value is not valid UTF-8"},
		{name: "newline in section name", cfg: Config{ServiceOverride: map[string]*ServiceOverride{"a\nb": {}}}, want: "without newline"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render(&tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Render error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
