package awsemu

import (
	"context"
	"net/http"
	"os"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

// TestStartTServesUntilCleanup checks that StartT serves the fixture, that
// the SDK finds the emulator through Env alone, and that the server stops
// with the test.
func TestStartTServesUntilCleanup(t *testing.T) {
	var e *Emulator
	t.Run("serve", func(t *testing.T) {
		e = StartT(t, DemoFixture())
		e.Env().Set(t)
		cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("us-east-1"))
		if err != nil {
			t.Fatal(err)
		}
		c := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.HTTPClient = HTTPClient() })
		out, err := c.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{})
		if err != nil {
			t.Fatalf("DescribeInstances through Env: %v", err)
		}
		if len(out.Reservations) == 0 || e.Calls("ec2", "DescribeInstances") != 1 {
			t.Fatalf("%d reservations, calls %v", len(out.Reservations), e.CallCounts())
		}
		if v := os.Getenv("AWS_EC2_METADATA_DISABLED"); v != "true" {
			t.Errorf("AWS_EC2_METADATA_DISABLED=%q off EC2", v)
		}
	})
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, e.URL+"/latest/api/token", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_ = resp.Body.Close()
		t.Fatal("the emulator still serves after the test's cleanup")
	}
}

func TestStartTEmpty(t *testing.T) {
	e := StartT(t)
	if e.Region() != DefaultRegion || len(e.Instances()) != 0 {
		t.Fatalf("region %s, %d instances; want an empty %s", e.Region(), len(e.Instances()), DefaultRegion)
	}
}

func TestIMDSEnv(t *testing.T) {
	e := StartT(t)
	env := e.IMDSEnv()
	if env["AWS_EC2_METADATA_SERVICE_ENDPOINT"] != e.URL || env["AWS_EC2_METADATA_DISABLED"] != "false" || env["AWS_ENDPOINT_URL"] != e.URL {
		t.Fatalf("IMDSEnv = %v", env)
	}
	l := env.List()
	if !slices.IsSorted(l) || !slices.Contains(l, "AWS_ENDPOINT_URL="+e.URL) || !slices.Contains(l, "AWS_PROFILE=") {
		t.Fatalf("List = %v", l)
	}
}

func TestDemoFixtureIsFresh(t *testing.T) {
	a := DemoFixture()
	a.Instances = nil
	if b := DemoFixture(); len(b.Instances) == 0 || b.IMDSInstanceID != "i-0a1b2c3d4e5f60001" {
		t.Fatalf("DemoFixture shares state or changed: %d instances, IMDS %q", len(b.Instances), b.IMDSInstanceID)
	}
}
