package awscloud

import (
	"context"
	"strings"
	"testing"
)

// TestNewReportsEveryCloudConfigProblem: the CCM's start lists every
// problem of its cloud config at once; a value that does not parse
// (gcfg stops at it) no longer hides the unknown key, the bad VPC and the
// unknown section after it.
func TestNewReportsEveryCloudConfigProblem(t *testing.T) {
	startEmulator(t)
	path := writeConfig(t, "[Global]\nDisableSecurityGroupIngress = maybe\nRegion = us-east-1\nRegoin = us-east-1\n"+
		"VPC = 0123456789abcdef0\nKubernetesClusterID = demo\n[Kubernetes]\nx = 1\n")
	_, err := New(context.Background(), Config{CloudConfigPath: path})
	if err == nil {
		t.Fatal("New succeeded with a bad cloud config")
	}
	for _, want := range []string{"4 problems", "DisableSecurityGroupIngress: invalid value", `unknown key "Regoin"`,
		"unknown section [Kubernetes]", `VPC "0123456789abcdef0" is not a vpc ID`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
