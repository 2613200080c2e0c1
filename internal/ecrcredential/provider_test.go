package ecrcredential

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	ecrtypes "github.com/aws/aws-sdk-go-v2/service/ecr/types"
	credv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
)

// TestCacheDuration: half the token's time left in whole Unix seconds,
// as upstream's getCacheDuration; no expiry, or no time left, means no
// caching.
func TestCacheDuration(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	for _, c := range []struct {
		name      string
		expiresAt *time.Time
		want      time.Duration
	}{
		{"12 hours", at(12 * time.Hour), 6 * time.Hour},
		{"odd seconds round down", at(time.Hour + time.Second), 30 * time.Minute},
		{"fractions dropped", at(3*time.Second + 900*time.Millisecond), time.Second},
		{"one second left", at(time.Second), 0},
		{"expired", at(-time.Hour), 0},
		{"no expiry", nil, 0},
	} {
		if got := CacheDuration(c.expiresAt, now); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestCredentialsRejectsBadTokens: a token that is not base64 user:password
// is an error naming the image, and never quoting the token.
func TestCredentialsRejectsBadTokens(t *testing.T) {
	for _, token := range []string{"not-base64!", base64.StdEncoding.EncodeToString([]byte("no-colon-secret")), base64.StdEncoding.EncodeToString([]byte("AWS:"))} {
		p := Provider{NewECR: func(context.Context, Registry) (ECR, error) {
			return ECR{GetAuthorizationToken: func(context.Context, *ecr.GetAuthorizationTokenInput, ...func(*ecr.Options)) (*ecr.GetAuthorizationTokenOutput, error) {
				return &ecr.GetAuthorizationTokenOutput{AuthorizationData: []ecrtypes.AuthorizationData{{AuthorizationToken: aws.String(token)}}}, nil
			}}, nil
		}}
		const image = "123456789012.dkr.ecr.us-west-2.amazonaws.com/app"
		_, err := p.Credentials(context.Background(), &credv1.CredentialProviderRequest{Image: image})
		if err == nil || !strings.Contains(err.Error(), `image "`+image+`"`) || strings.Contains(err.Error(), token) || strings.Contains(err.Error(), "secret") {
			t.Errorf("token %q: %v", token, err)
		}
	}
}
