package awsemu

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

func TestGetCallerIdentity(t *testing.T) {
	tests := []struct {
		name             string
		fixture          *Fixture
		account, arn, id string
	}{
		{"defaults", nil, "123456789012", "arn:aws:iam::123456789012:role/control-plane", "AROAEMULATOREXAMPLEID:control-plane"},
		{"from fixture", &Fixture{Account: "210987654321", CallerArn: "arn:aws:iam::210987654321:role/ccm", CallerUserID: "AROAXYZ:ccm"},
			"210987654321", "arn:aws:iam::210987654321:role/ccm", "AROAXYZ:ccm"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, url := start(t, tc.fixture)
			out, err := stsClient(t, url).GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{})
			if err != nil {
				t.Fatal(err)
			}
			if aws.ToString(out.Account) != tc.account || aws.ToString(out.Arn) != tc.arn || aws.ToString(out.UserId) != tc.id {
				t.Errorf("got %s %s %s", aws.ToString(out.Account), aws.ToString(out.Arn), aws.ToString(out.UserId))
			}
		})
	}
}

func TestAssumeRole(t *testing.T) {
	_, url := start(t, nil)
	client := stsClient(t, url)
	out, err := client.AssumeRole(context.Background(), &sts.AssumeRoleInput{
		RoleArn: aws.String("arn:aws:iam::111122223333:role/path/ccm"), RoleSessionName: aws.String("ccm-session"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(out.AssumedRoleUser.Arn); got != "arn:aws:sts::111122223333:assumed-role/ccm/ccm-session" {
		t.Errorf("assumed role arn %q", got)
	}
	if !strings.HasPrefix(aws.ToString(out.Credentials.AccessKeyId), "ASIA") || out.Credentials.Expiration == nil {
		t.Errorf("credentials %+v", out.Credentials)
	}
	_, err = client.AssumeRole(context.Background(), &sts.AssumeRoleInput{RoleArn: aws.String("not-an-arn-but-long-enough"), RoleSessionName: aws.String("s1")})
	wantCode(t, err, "ValidationError")
}
