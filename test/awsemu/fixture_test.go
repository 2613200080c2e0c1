package awsemu

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestLoadDemoFixture(t *testing.T) {
	f, err := LoadFixture("testdata/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if f.Region != "us-east-1" || len(f.Zones) != 3 || len(f.Subnets) != 3 || len(f.Instances) != 5 {
		t.Fatalf("fixture: region %s, %d zones, %d subnets, %d instances", f.Region, len(f.Zones), len(f.Subnets), len(f.Instances))
	}
	s := New(f)
	stopped, _ := s.Instance(demoStopped)
	// Defaults derived from the subnet and the private IP.
	if stopped.VPCID != demoVPC || stopped.AvailabilityZone != "us-east-1a" || stopped.PrivateDNSName != "ip-10-0-1-40.ec2.internal" ||
		len(stopped.ENIs) != 1 || !slices.Equal(stopped.ENIs[0].PrivateIPs, []string{"10.0.1.40"}) || stopped.ENIs[0].MAC == "" {
		t.Errorf("stopped instance defaults: %+v", stopped)
	}
	if c, _ := s.Instance(demoC); c.PrivateIP != "10.0.3.30" || c.ENIs[0].ID == "" || c.HTTPTokens != "required" || c.HopLimit != 1 {
		t.Errorf("instance C: %+v", c)
	}
	// New copies the fixture: changing it later does not change the server.
	f.Instances[0].Tags["Name"] = "changed"
	if a, _ := s.Instance(demoA); a.Tags["Name"] != "demo-node-a" {
		t.Errorf("server shares fixture maps: %v", a.Tags)
	}
}

func TestLoadFixtureErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown field", "region: us-east-1\ninstances:\n  - id: i-1\n    availabilityZone: us-east-1a\n    bogus: 1\n",
			[]string{`unknown field "bogus"`}},
		{"dangling subnet", "instances:\n  - id: i-1\n    subnetId: subnet-missing\n",
			[]string{`instances[0] (i-1): subnetId "subnet-missing" does not exist`}},
		{"subnet without vpc", "subnets:\n  - {id: subnet-1, vpcId: vpc-missing, availabilityZone: us-east-1a}\n",
			[]string{`subnets[0] (subnet-1): vpcId "vpc-missing" does not exist`}},
		{"bad state and zone", "instances:\n  - {id: i-1, state: exploded, availabilityZone: eu-west-1a}\n",
			[]string{`state "exploded"`, `availabilityZone "eu-west-1a" does not exist`}},
		{"duplicate id", "instances:\n  - {id: i-1, availabilityZone: us-east-1a}\n  - {id: i-1, availabilityZone: us-east-1a}\n",
			[]string{`duplicate id "i-1"`}},
		{"bad prefix", "vpcs:\n  - {id: net-1}\n", []string{`id "net-1" must start with "vpc-"`}},
		{"dangling imds instance", "imdsInstanceId: i-9\n", []string{`imdsInstanceId "i-9"`}},
		{"not yaml", "instances: [\n", []string{"fixture"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadFixture(path)
			if err == nil {
				t.Fatal("LoadFixture succeeded")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
	if _, _, _, err := Start(&Fixture{Instances: []Instance{{ID: "i-1", SubnetID: "subnet-x"}}}); err == nil {
		t.Error("Start accepted an invalid fixture")
	}
}

func TestDefaultZones(t *testing.T) {
	tests := []struct{ region, first string }{
		{"us-east-1", "us-east-1a=use1-az1"},
		{"eu-west-2", "eu-west-2a=euw2-az1"},
	}
	for _, tc := range tests {
		t.Run(tc.region, func(t *testing.T) {
			z := defaultZones(tc.region)
			if got := z[0].Name + "=" + z[0].ID; len(z) != 3 || got != tc.first {
				t.Errorf("zones %v", z)
			}
		})
	}
}

// TestDemoFixtureIsTheYAML: the demo fixture decoded from its cached JSON is
// what the YAML says, and each call returns a copy of its own.
func TestDemoFixtureIsTheYAML(t *testing.T) {
	want, err := parseFixture(demoYAML)
	if err != nil {
		t.Fatal(err)
	}
	a, b := DemoFixture(), DemoFixture()
	if !reflect.DeepEqual(a, want) {
		t.Errorf("DemoFixture differs from testdata/demo.yaml parsed directly")
	}
	a.Instances[0].Tags["changed"] = "x"
	if _, ok := b.Instances[0].Tags["changed"]; ok {
		t.Errorf("two DemoFixture calls share their maps")
	}
}
