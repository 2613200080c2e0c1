package awscloud

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// startEmulator runs the demo fixture and points the SDK (and IMDS) at it.
func startEmulator(t *testing.T) *awsemu.Server {
	t.Helper()
	e := awsemu.StartT(t, awsemu.DemoFixture())
	e.IMDSEnv().Set(t)
	return e.Server
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cloud.conf")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNewOffEC2MakesNoIMDSOrEC2Call(t *testing.T) {
	srv := startEmulator(t)
	path := writeConfig(t, "[Global]\nRegion = us-east-1\nVPC = vpc-0demo000000000001\nKubernetesClusterID = demo\n")
	c, err := New(context.Background(), Config{CloudConfigPath: path})
	if err != nil {
		t.Fatal(err)
	}
	if c.env != (environment{Region: "us-east-1", VPCID: "vpc-0demo000000000001", ClusterID: "demo"}) {
		t.Fatalf("environment = %+v", c.env)
	}
	if calls := srv.CallCounts(); len(calls) != 0 {
		t.Fatalf("off-EC2 start made calls: %v", calls)
	}
}

func TestNewFillsRegionVPCAndClusterFromIMDSAndOwnInstance(t *testing.T) {
	srv := startEmulator(t)
	c, err := New(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	want := environment{Region: "us-east-1", VPCID: "vpc-0demo000000000001", ClusterID: "demo"}
	if c.env != want {
		t.Fatalf("environment = %+v, want %+v", c.env, want)
	}
	if srv.Calls("imds", "") == 0 || srv.Calls("ec2", "DescribeInstances") != 1 {
		t.Fatalf("calls = %v; want IMDS and one DescribeInstances of the CCM's own instance", srv.CallCounts())
	}
}

func TestNewWithoutIMDSSaysWhatToConfigure(t *testing.T) {
	srv := startEmulator(t)
	srv.SetIMDSAvailable(false)
	path := writeConfig(t, "[Global]\nRegion = us-east-1\n")
	_, err := New(context.Background(), Config{CloudConfigPath: path})
	if err == nil {
		t.Fatal("New succeeded without VPC, cluster ID or IMDS")
	}
	for _, want := range []string{"VPC, KubernetesClusterID", "IMDSv2", "hostNetwork"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestNewRejectsBadCloudConfig(t *testing.T) {
	startEmulator(t)
	path := writeConfig(t, "[Global]\nRegion = us-east-1\nKubernetesClusterTag = a\nKubernetesClusterID = b\nNoSuchKey = 1\n")
	_, err := New(context.Background(), Config{CloudConfigPath: path})
	if err == nil || !strings.Contains(err.Error(), "NoSuchKey") {
		t.Fatalf("New with a bad cloud config: %v", err)
	}
}

func TestFlagsValidate(t *testing.T) {
	f := NewFlags()
	if err := f.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	f.AbsenceGracePeriod = f.InstanceCacheMaxAge / 2
	if err := f.Validate(); err == nil || !strings.Contains(err.Error(), "--aws-instance-absence-grace-period") {
		t.Fatalf("grace shorter than cache age: %v", err)
	}
}
