package cloudconfig

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestFixtures loads every testdata file: valid-*.conf must load, and
// invalid-*.conf must fail with every line of its sibling .err file in the
// message.
func TestFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no fixtures in testdata")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".conf")
		t.Run(name, func(t *testing.T) {
			c, err := Load(file)
			switch {
			case strings.HasPrefix(name, "valid-"):
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if c == nil {
					t.Fatal("Load returned nil config and nil error")
				}
			case strings.HasPrefix(name, "invalid-"):
				want, rerr := os.ReadFile(strings.TrimSuffix(file, ".conf") + ".err")
				if rerr != nil {
					t.Fatalf("every invalid fixture needs a .err file: %v", rerr)
				}
				if err == nil {
					t.Fatal("Load succeeded, want an error")
				}
				if !strings.Contains(err.Error(), file) {
					t.Errorf("error does not name the file %s: %v", file, err)
				}
				var ce *Error
				if !errors.As(err, &ce) {
					t.Errorf("error is %T, want it to wrap *Error", err)
				}
				for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n") {
					if line = strings.TrimSpace(line); line != "" && !strings.Contains(err.Error(), line) {
						t.Errorf("error lacks %q:\n%v", line, err)
					}
				}
			default:
				t.Fatalf("fixture names start with valid- or invalid-: %s", file)
			}
		})
	}
}

func TestLoadKopsInTreeFile(t *testing.T) {
	c, err := Load(filepath.Join("testdata", "valid-intree-kops.conf"))
	if err != nil {
		t.Fatal(err)
	}
	want := Global{
		Zone:                                 "us-east-1a",
		VPC:                                  "vpc-0a1b2c3d4e5f67890",
		KubernetesClusterTag:                 "k8s.example.com",
		SubnetID:                             "subnet-0123456789abcdef0",
		RouteTableID:                         "rtb-0123456789abcdef0",
		DisableSecurityGroupIngress:          true,
		ElbSecurityGroup:                     "sg-0123456789abcdef0",
		DisableStrictZoneCheck:               true,
		NodeIPFamilies:                       []string{"ipv4"},
		SupportedTopologyInstanceTypePattern: DefaultTopologyInstanceTypePattern,
	}
	if !reflect.DeepEqual(c.Global, want) {
		t.Errorf("Global =\n%+v\nwant\n%+v", c.Global, want)
	}
	if got := c.ClusterID(); got != "k8s.example.com" {
		t.Errorf("ClusterID() = %q", got)
	}
	if r, ok := c.RegionFromConfig(); r != "us-east-1" || !ok {
		t.Errorf("RegionFromConfig() = %q, %v", r, ok)
	}
	if !c.OffEC2() {
		t.Error("OffEC2() = false, want true (Zone, VPC and cluster tag are set)")
	}
	if w := strings.Join(c.Warnings(), "\n"); !strings.Contains(w, "DisableStrictZoneCheck has no effect") {
		t.Errorf("Warnings() lacks the DisableStrictZoneCheck note: %q", w)
	}
}

func TestLoadUpstreamFile(t *testing.T) {
	c, err := Load(filepath.Join("testdata", "valid-upstream-sdkv2-overrides.conf"))
	if err != nil {
		t.Fatal(err)
	}
	g := c.Global
	if !reflect.DeepEqual(g.NodeIPFamilies, []string{"ipv6", "ipv4"}) {
		t.Errorf("NodeIPFamilies = %v, want repeated keys in order", g.NodeIPFamilies)
	}
	if g.ClusterServiceSharedLoadBalancerHealthProbePort != 10256 || g.ClusterServiceSharedLoadBalancerHealthProbePath != "/healthz" {
		t.Errorf("shared probe = %d %q, want defaults", g.ClusterServiceSharedLoadBalancerHealthProbePort, g.ClusterServiceSharedLoadBalancerHealthProbePath)
	}
	if len(c.ServiceOverride) != 4 {
		t.Errorf("%d overrides, want 4", len(c.ServiceOverride))
	}
	url, sr, sn, ok := c.Endpoint(ServiceELBv2, "us-west-2")
	if !ok || url != "https://elbv2.us-west-2.example.internal:8443" || sr != "us-west-2" || sn != "elasticloadbalancing" {
		t.Errorf("Endpoint(ELBv2) = %q %q %q %v", url, sr, sn, ok)
	}
	if c.OffEC2() {
		t.Error("OffEC2() = true without VPC")
	}
	if w := c.Warnings(); len(w) != 0 {
		t.Errorf("Warnings() = %q, want none for an upstream file", w)
	}
}

func TestLoadV1LowercaseFile(t *testing.T) {
	c, err := Load(filepath.Join("testdata", "valid-v1-lowercase-overrides.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ service, url string }{
		{ServiceEC2, "https://ec2.us-gov-west-1.amazonaws.com"},
		{ServiceELB, "https://elasticloadbalancing.us-gov-west-1.amazonaws.com"},
		{ServiceELBv2, "https://elasticloadbalancing.us-gov-west-1.amazonaws.com"},
		{ServiceSTS, "https://sts.us-gov-west-1.amazonaws.com"},
		{ServiceIMDS, "http://169.254.169.254"},
	} {
		t.Run(tc.service, func(t *testing.T) {
			url, _, _, ok := c.Endpoint(tc.service, "us-gov-west-1")
			if !ok || url != tc.url {
				t.Errorf("Endpoint = %q, %v; want %q", url, ok, tc.url)
			}
		})
	}
	w := strings.Join(c.Warnings(), "\n")
	for _, want := range []string{
		`[ServiceOverride "1"] SigningMethod is ignored`,
		`[ServiceOverride "1"] Service "ec2" is matched as "EC2"`,
		`[ServiceOverride "2"] Service "elasticloadbalancing" is the SDK v1 name`,
		`[ServiceOverride "4"] Service "ec2metadata" is matched as "ec2imds"`,
	} {
		if !strings.Contains(w, want) {
			t.Errorf("Warnings() lacks %q:\n%s", want, w)
		}
	}
}

func TestLoad(t *testing.T) {
	t.Run("empty path means defaults", func(t *testing.T) {
		c, err := Load("")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(c.Global.NodeIPFamilies, []string{"ipv4"}) {
			t.Errorf("NodeIPFamilies = %v", c.Global.NodeIPFamilies)
		}
		if _, ok := c.RegionFromConfig(); ok {
			t.Error("an empty config has no region")
		}
	})
	t.Run("missing file names the path", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "nope.conf")
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Load(missing) = %v", err)
		}
	})
	t.Run("byte order mark is skipped", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "bom.conf")
		if err := os.WriteFile(path, []byte("\ufeff[Global]\nRegion = us-east-1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path)
		if err != nil || c.Global.Region != "us-east-1" {
			t.Errorf("Load = %+v, %v", c, err)
		}
	})
}
