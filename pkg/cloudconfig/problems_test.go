package cloudconfig

import (
	"errors"
	"strings"
	"testing"
)

// TestEveryProblemAtOnce: a value that does not parse stops gcfg, but every
// problem after it (unknown keys and sections, other bad values, and what
// Validate finds in the values that did parse) is reported with it, by
// Load and Check; Parse reports the decoding problems.
func TestEveryProblemAtOnce(t *testing.T) {
	cases := []struct {
		name string
		in   string
		// parse are the problems Parse reports; load adds Validate's.
		parse, load []string
	}{
		{
			name: "bad bool hides nothing",
			in: "[Global]\nDisableSecurityGroupIngress = maybe\nRegoin = us-east-1\nVPC = 0123456789abcdef0\n" +
				"[Extra]\nKey = value\n[ServiceOverride \"ec2\"]\nService = EC2\nEndpoint = https://ec2.example\n",
			parse: []string{
				"[Global] DisableSecurityGroupIngress: invalid value: failed to parse bool `maybe`",
				`unknown key "Regoin" in [Global] (did you mean "Region"?)`,
				"unknown section [Extra]",
				`unknown key "Endpoint" in [ServiceOverride "ec2"]`,
			},
			load: []string{
				`[Global] VPC "0123456789abcdef0" is not a vpc ID`,
				`[ServiceOverride "ec2"] Region is missing`,
				`[ServiceOverride "ec2"] URL is missing`,
				`[ServiceOverride "ec2"] SigningRegion is missing`,
			},
		},
		{
			name: "two bad values, then an unknown key",
			in:   "[Global]\nClusterServiceSharedLoadBalancerHealthProbePort = x\nDisableStrictZoneCheck = perhaps\nZonee = us-east-1a\n",
			parse: []string{
				`[Global] ClusterServiceSharedLoadBalancerHealthProbePort: invalid value: failed to parse "x" as int`,
				"[Global] DisableStrictZoneCheck: invalid value: failed to parse bool `perhaps`",
				`unknown key "Zonee" in [Global] (did you mean "Zone"?)`,
			},
		},
		{
			name: "a key without a value in a named section, and [Global] read after it",
			in:   "[ServiceOverride \"a\"]\nService\nURL = https://x.example\nSigningNam = ec2\n[Global]\nRegion = us-east\n",
			parse: []string{
				`[ServiceOverride "a"] Service has no value; write Service = <value>`,
				`unknown key "SigningNam" in [ServiceOverride "a"] (did you mean "SigningName"?)`,
			},
			// Not "Service is missing": its problem is already said.
			load: []string{
				`[Global] Region "us-east" is not an AWS region name`,
				`[ServiceOverride "a"] Region is missing`,
				`[ServiceOverride "a"] SigningRegion is missing`,
			},
		},
		{
			name: "a bad value on a continued line, and a repeated key",
			in:   "[Global]\nDisableSecurityGroupIngress = ma\\\nybe ; comment\nRegion = us-east-1\nRegion = eu-west-1\nFoo = 1\n",
			parse: []string{
				"[Global] DisableSecurityGroupIngress: invalid value: failed to parse bool `maybe`",
				`unknown key "Foo" in [Global]`,
				"[Global] Region set twice, lines 4 and 5",
			},
		},
		{
			name: "a syntax error after a bad value ends the reading, with both",
			in:   "[Global]\nDisableSecurityGroupIngress = maybe\n[Global\nRegoin = x\n",
			parse: []string{
				"[Global] DisableSecurityGroupIngress: invalid value: failed to parse bool `maybe`",
				"line 3, column 8",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, perr := Parse([]byte(tc.in))
			assertProblems(t, "Parse", perr, tc.parse)
			for _, p := range tc.load {
				if perr != nil && strings.Contains(perr.Error(), p) {
					t.Errorf("Parse reports the validation problem %q: it only decodes", p)
				}
			}
			want := append(append([]string(nil), tc.parse...), tc.load...)
			_, lerr := load([]byte(tc.in))
			assertProblems(t, "Load", lerr, want)
			assertProblems(t, "Check", Check([]byte(tc.in)), want)
		})
	}
}

// assertProblems: err is an *Error with exactly len(want) problems, each
// containing its want in order.
func assertProblems(t *testing.T, what string, err error, want []string) {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("%s: error %v (%T), want an *Error", what, err, err)
	}
	if len(ce.Problems) != len(want) {
		t.Fatalf("%s: %d problems, want %d:\n%v", what, len(ce.Problems), len(want), err)
	}
	for i, w := range want {
		if !strings.Contains(ce.Problems[i], w) {
			t.Errorf("%s: problem %d is %q, want it to contain %q", what, i+1, ce.Problems[i], w)
		}
	}
}
