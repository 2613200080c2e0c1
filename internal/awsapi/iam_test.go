package awsapi

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
)

func TestNewIAMEndpointFromEnvironment(t *testing.T) {
	srv, url := emulator(t)
	t.Setenv("AWS_ENDPOINT_URL_IAM", url) // the IAM-specific variable only
	c, err := NewIAM(context.Background(), Options{Region: "eu-west-1"})
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Options().Region; r != "us-east-1" {
		t.Errorf("IAM client region %s, want us-east-1 (IAM is global in the aws partition)", r)
	}
	var nse interface{ ErrorCode() string }
	_, err = c.GetRole(context.Background(), &iam.GetRoleInput{RoleName: aws.String("nobody")})
	if !errors.As(err, &nse) || nse.ErrorCode() != "NoSuchEntity" {
		t.Fatalf("GetRole through AWS_ENDPOINT_URL_IAM: %v", err)
	}
	if srv.Calls("iam", "GetRole") != 1 {
		t.Fatal("the call did not reach the emulator")
	}
	// The guard covers IAM too.
	_, err = c.ListRoles(context.Background(), &iam.ListRolesInput{})
	var unreg *UnregisteredActionError
	if !errors.As(err, &unreg) || srv.Calls("iam", "ListRoles") != 0 {
		t.Fatalf("ListRoles: %v (emulator saw %d calls)", err, srv.Calls("iam", "ListRoles"))
	}
}

func TestNewIAMServiceOverride(t *testing.T) {
	srv, url := emulator(t)
	// The override is keyed by the cluster's region, not IAM's us-east-1.
	conf := "[Global]\nRegion = eu-west-1\n[ServiceOverride \"iam\"]\nService = iam\nRegion = eu-west-1\nURL = " + url + "\nSigningRegion = us-east-1\n"
	cc := loadCloudConfig(t, conf)
	c, err := NewIAM(context.Background(), Options{Region: "eu-west-1", CloudConfig: cc})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.GetRole(context.Background(), &iam.GetRoleInput{RoleName: aws.String("nobody")})
	if srv.Calls("iam", "GetRole") != 1 {
		t.Fatal("the call did not reach the overridden endpoint")
	}
}

func TestIAMRegion(t *testing.T) {
	for region, want := range map[string]string{"": "us-east-1", "eu-west-1": "us-east-1", "us-east-1": "us-east-1",
		"cn-north-1": "cn-north-1", "us-gov-west-1": "us-gov-west-1"} {
		if got := iamRegion(region); got != want {
			t.Errorf("iamRegion(%q) = %s, want %s", region, got, want)
		}
	}
}
