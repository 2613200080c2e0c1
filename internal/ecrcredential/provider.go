package ecrcredential

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/aws/smithy-go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	credv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
)

// SafetyMargin is taken off a token's remaining lifetime for the
// cacheDuration the kubelet keeps it: a pull that starts just before the
// cache entry expires still has this long before ECR refuses the token.
// ECR tokens last 12 hours, so the kubelet asks again every 11.5 hours.
const SafetyMargin = 30 * time.Minute

// GetAuthorizationTokenFunc is ecr.Client.GetAuthorizationToken as a value
// (see internal/awsapi/calls.go for why method values, not interfaces).
type GetAuthorizationTokenFunc func(context.Context, *ecr.GetAuthorizationTokenInput, ...func(*ecr.Options)) (*ecr.GetAuthorizationTokenOutput, error)

// ECR lists the ECR operations the plugin calls.
type ECR struct {
	GetAuthorizationToken GetAuthorizationTokenFunc
}

// Provider answers credential requests for private ECR images.
type Provider struct {
	// NewECR returns ECR for a registry's region and endpoint variant
	// (awsapi.NewECR's client in the binary).
	NewECR func(ctx context.Context, r Registry) (ECR, error)
	// Now is the clock cacheDuration is computed with (nil: time.Now).
	Now func() time.Time
}

// Credentials returns the kubelet's response for req: the registry's
// username and password, cached per registry for the token's lifetime
// less SafetyMargin. Errors name the image and the reason; they never hold
// the token.
func (p Provider) Credentials(ctx context.Context, req *credv1.CredentialProviderRequest) (*credv1.CredentialProviderResponse, error) {
	reg, err := ParseImage(req.Image)
	if err != nil {
		return nil, err
	}
	api, err := p.NewECR(ctx, reg)
	if err != nil {
		return nil, fmt.Errorf("image %q: ECR client for %s: %w", req.Image, reg.Region, err)
	}
	klog.V(2).InfoS("Getting an ECR authorization token", "image", req.Image, "registry", reg.Host, "region", reg.Region, "fips", reg.FIPS, "dualStack", reg.DualStack)
	// No RegistryIds: the parameter is deprecated, and the token is
	// valid for every registry the caller's role may pull from.
	out, err := api.GetAuthorizationToken(ctx, &ecr.GetAuthorizationTokenInput{})
	if err != nil {
		return nil, fmt.Errorf("image %q: %s", req.Image, describeAWSError(reg, err))
	}
	if len(out.AuthorizationData) == 0 || out.AuthorizationData[0].AuthorizationToken == nil {
		return nil, fmt.Errorf("image %q: ECR GetAuthorizationToken in %s returned no authorization data", req.Image, reg.Region)
	}
	data := out.AuthorizationData[0]
	user, password, err := decodeToken(*data.AuthorizationToken)
	if err != nil {
		return nil, fmt.Errorf("image %q: ECR GetAuthorizationToken in %s: %w", req.Image, reg.Region, err)
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	return &credv1.CredentialProviderResponse{
		CacheKeyType:  credv1.RegistryPluginCacheKeyType,
		CacheDuration: &metav1.Duration{Duration: CacheDuration(data.ExpiresAt, now())},
		Auth:          map[string]credv1.AuthConfig{reg.Host: {Username: user, Password: password}},
	}, nil
}

// CacheDuration is how long the kubelet may keep a token expiring at
// expiresAt: the time left less SafetyMargin, in whole seconds, never
// negative. Zero (no caching) when ECR did not say when it expires.
func CacheDuration(expiresAt *time.Time, now time.Time) time.Duration {
	if expiresAt == nil {
		return 0
	}
	d := expiresAt.Sub(now) - SafetyMargin
	if d <= 0 {
		return 0
	}
	return d.Truncate(time.Second)
}

// decodeToken splits ECR's base64 "user:password" token. Its errors never
// hold the token.
func decodeToken(token string) (user, password string, err error) {
	raw, err := base64.StdEncoding.DecodeString(token)
	if err != nil {
		return "", "", errors.New("the authorization token is not base64")
	}
	user, password, ok := strings.Cut(string(raw), ":")
	if !ok || user == "" || password == "" {
		return "", "", errors.New("the authorization token is not <user>:<password>")
	}
	return user, password, nil
}

// describeAWSError names the call, the AWS error code and the request ID.
func describeAWSError(reg Registry, err error) string {
	msg := "ECR GetAuthorizationToken in " + reg.Region + " failed"
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return fmt.Sprintf("%s: %v", msg, err)
	}
	msg += ": " + ae.ErrorCode()
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.ServiceRequestID() != "" {
		msg += " (request ID " + re.ServiceRequestID() + ")"
	}
	if m := ae.ErrorMessage(); m != "" {
		msg += ": " + m
	}
	if ae.ErrorCode() == "AccessDeniedException" {
		msg += "; allow ecr:GetAuthorizationToken to the node's instance role (iam/node-policy.json)"
	}
	return msg
}
