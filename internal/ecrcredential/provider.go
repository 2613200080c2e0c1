package ecrcredential

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/aws/aws-sdk-go-v2/service/ecrpublic"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	credv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
)

// GetAuthorizationTokenFunc is ecr.Client.GetAuthorizationToken as a value
// (see internal/awsapi/calls.go for why method values, not interfaces).
type GetAuthorizationTokenFunc func(context.Context, *ecr.GetAuthorizationTokenInput, ...func(*ecr.Options)) (*ecr.GetAuthorizationTokenOutput, error)

// ECR lists the ECR operations the plugin calls.
type ECR struct {
	GetAuthorizationToken GetAuthorizationTokenFunc
}

// ECRPublic lists the ECR Public operations the plugin calls.
type ECRPublic struct {
	GetAuthorizationToken func(context.Context, *ecrpublic.GetAuthorizationTokenInput, ...func(*ecrpublic.Options)) (*ecrpublic.GetAuthorizationTokenOutput, error)
}

// STS lists the STS operations the plugin calls.
type STS struct {
	AssumeRoleWithWebIdentity func(context.Context, *sts.AssumeRoleWithWebIdentityInput, ...func(*sts.Options)) (*sts.AssumeRoleWithWebIdentityOutput, error)
}

// The service-account token contract of upstream's provider
// (kubernetes/cloud-provider-aws cmd/ecr-credential-provider): when the
// kubelet passes a Pod's service-account token (KEP-4412, tokenAttributes
// in the CredentialProviderConfig), the role named by the service
// account's RoleARNAnnotation, or else by RoleARNEnv in the plugin's
// environment, is assumed with AssumeRoleWithWebIdentity (session name
// RoleSessionName, STS in the image's region) and the token is got with
// its credentials: the Pod pulls with its own role, not the node's. With
// no token, or a token and neither an annotation nor the variable (or an
// empty value), the node's credentials are used, as upstream does: set
// requiredServiceAccountAnnotationKeys in tokenAttributes to refuse such
// Pods instead (the kubelet then does not pull for them).
const (
	RoleARNAnnotation = "eks.amazonaws.com/ecr-role-arn"
	RoleARNEnv        = "AWS_ECR_ROLE_ARN"
	RoleSessionName   = "ecr-credential-provider"
)

// roleARN is the shape of an IAM role ARN in any partition.
var roleARN = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:role/[\w+=,.@/-]+$`)

// Provider answers credential requests for ECR images.
type Provider struct {
	// NewECR returns ECR for a private registry's region and endpoint
	// variant (awsapi.NewECR's client in the binary).
	NewECR func(ctx context.Context, r Registry) (ECR, error)
	// NewECRPublic returns ECR Public (awsapi.NewECRPublic's client).
	NewECRPublic func(ctx context.Context) (ECRPublic, error)
	// NewSTS returns STS in region for AssumeRoleWithWebIdentity
	// (awsapi.NewWebIdentitySTS's client).
	NewSTS func(ctx context.Context, region string) (STS, error)
	// Getenv reads RoleARNEnv (nil: os.Getenv).
	Getenv func(string) string
	// Now is the clock cacheDuration is computed with (nil: time.Now).
	Now func() time.Time
}

// token is a registry token as ECR or ECR Public returns it.
type token struct {
	data      *string
	expiresAt *time.Time
}

// Credentials returns the kubelet's response for req: the registry's
// username and password, cached per registry (the kubelet adds the
// service account to the key when it passes tokens) for half the token's
// remaining lifetime. Errors name the image and the reason; they never
// hold a token.
func (p Provider) Credentials(ctx context.Context, req *credv1.CredentialProviderRequest) (*credv1.CredentialProviderResponse, error) {
	reg, err := ParseImage(req.Image)
	if err != nil {
		return nil, err
	}
	creds, err := p.podCredentials(ctx, req, reg)
	if err != nil {
		return nil, err
	}
	var tok token
	if reg.Public {
		tok, err = p.publicToken(ctx, req.Image, creds)
	} else {
		tok, err = p.privateToken(ctx, req.Image, reg, creds)
	}
	if err != nil {
		return nil, err
	}
	api := "ECR GetAuthorizationToken in " + reg.Region
	if reg.Public {
		api = "ECR Public GetAuthorizationToken in " + reg.Region
	}
	if tok.data == nil {
		return nil, fmt.Errorf("image %q: %s returned no authorization data", req.Image, api)
	}
	user, password, err := decodeToken(*tok.data)
	if err != nil {
		return nil, fmt.Errorf("image %q: %s: %w", req.Image, api, err)
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	return &credv1.CredentialProviderResponse{
		CacheKeyType:  credv1.RegistryPluginCacheKeyType,
		CacheDuration: &metav1.Duration{Duration: CacheDuration(tok.expiresAt, now())},
		Auth:          map[string]credv1.AuthConfig{reg.Host: {Username: user, Password: password}},
	}, nil
}

// podCredentials returns the credentials of the role the request's
// service account names (see RoleARNAnnotation), or nil for the node's.
func (p Provider) podCredentials(ctx context.Context, req *credv1.CredentialProviderRequest, reg Registry) (aws.CredentialsProvider, error) {
	if req.ServiceAccountToken == "" {
		return nil, nil
	}
	arn, annotated := req.ServiceAccountAnnotations[RoleARNAnnotation]
	source := "the service account's annotation " + RoleARNAnnotation
	if !annotated {
		getenv := os.Getenv
		if p.Getenv != nil {
			getenv = p.Getenv
		}
		arn, source = getenv(RoleARNEnv), RoleARNEnv
	}
	if arn == "" {
		klog.V(2).InfoS("A service-account token came without a role to assume: using the node's credentials", "image", req.Image, "annotation", RoleARNAnnotation, "env", RoleARNEnv)
		return nil, nil
	}
	if !roleARN.MatchString(arn) {
		return nil, fmt.Errorf("image %q: %s is %q, not an IAM role ARN (arn:aws:iam::<account>:role/<name>)", req.Image, source, arn)
	}
	if p.NewSTS == nil {
		return nil, fmt.Errorf("image %q: no STS client to assume %s with", req.Image, arn)
	}
	api, err := p.NewSTS(ctx, reg.Region)
	if err != nil {
		return nil, fmt.Errorf("image %q: STS client for %s: %w", req.Image, reg.Region, err)
	}
	klog.V(2).InfoS("Assuming the service account's role", "image", req.Image, "role", arn, "from", source, "region", reg.Region)
	out, err := api.AssumeRoleWithWebIdentity(ctx, &sts.AssumeRoleWithWebIdentityInput{
		RoleArn:          aws.String(arn),
		RoleSessionName:  aws.String(RoleSessionName),
		WebIdentityToken: aws.String(req.ServiceAccountToken),
	})
	if err != nil {
		return nil, fmt.Errorf("image %q: role %s (from %s): %s; its trust policy must allow sts:AssumeRoleWithWebIdentity to the cluster's OIDC provider for the kubelet's serviceAccountTokenAudience and this service account",
			req.Image, arn, source, describeAWSError("STS AssumeRoleWithWebIdentity in "+reg.Region, err))
	}
	c := out.Credentials
	if c == nil || c.AccessKeyId == nil || c.SecretAccessKey == nil || c.SessionToken == nil {
		return nil, fmt.Errorf("image %q: STS AssumeRoleWithWebIdentity of %s returned no credentials", req.Image, arn)
	}
	return credentials.NewStaticCredentialsProvider(*c.AccessKeyId, *c.SecretAccessKey, *c.SessionToken), nil
}

// privateToken calls ecr:GetAuthorizationToken in the registry's region.
func (p Provider) privateToken(ctx context.Context, image string, reg Registry, creds aws.CredentialsProvider) (token, error) {
	api, err := p.NewECR(ctx, reg)
	if err != nil {
		return token{}, fmt.Errorf("image %q: ECR client for %s: %w", image, reg.Region, err)
	}
	klog.V(2).InfoS("Getting an ECR authorization token", "image", image, "registry", reg.Host, "region", reg.Region, "fips", reg.FIPS, "dualStack", reg.DualStack, "podRole", creds != nil)
	var opts []func(*ecr.Options)
	if creds != nil {
		opts = append(opts, func(o *ecr.Options) { o.Credentials = creds })
	}
	// No RegistryIds: the parameter is deprecated, and the token is
	// valid for every registry the caller's role may pull from.
	out, err := api.GetAuthorizationToken(ctx, &ecr.GetAuthorizationTokenInput{}, opts...)
	if err != nil {
		return token{}, fmt.Errorf("image %q: %s", image, describeECRError("ECR GetAuthorizationToken in "+reg.Region, "ecr:GetAuthorizationToken", creds != nil, err))
	}
	if len(out.AuthorizationData) == 0 {
		return token{}, nil
	}
	return token{out.AuthorizationData[0].AuthorizationToken, out.AuthorizationData[0].ExpiresAt}, nil
}

// publicToken calls ecr-public:GetAuthorizationToken (in us-east-1).
func (p Provider) publicToken(ctx context.Context, image string, creds aws.CredentialsProvider) (token, error) {
	if p.NewECRPublic == nil {
		return token{}, fmt.Errorf("image %q: no ECR Public client", image)
	}
	api, err := p.NewECRPublic(ctx)
	if err != nil {
		return token{}, fmt.Errorf("image %q: ECR Public client: %w", image, err)
	}
	klog.V(2).InfoS("Getting an ECR Public authorization token", "image", image, "region", awsapi.ECRPublicRegion, "podRole", creds != nil)
	var opts []func(*ecrpublic.Options)
	if creds != nil {
		opts = append(opts, func(o *ecrpublic.Options) { o.Credentials = creds })
	}
	out, err := api.GetAuthorizationToken(ctx, &ecrpublic.GetAuthorizationTokenInput{}, opts...)
	if err != nil {
		return token{}, fmt.Errorf("image %q: %s", image, describeECRError("ECR Public GetAuthorizationToken in "+awsapi.ECRPublicRegion,
			"ecr-public:GetAuthorizationToken and sts:GetServiceBearerToken", creds != nil, err))
	}
	if out.AuthorizationData == nil {
		return token{}, nil
	}
	return token{out.AuthorizationData.AuthorizationToken, out.AuthorizationData.ExpiresAt}, nil
}

// CacheDuration is how long the kubelet may keep a token expiring at
// expiresAt: half its remaining lifetime in whole seconds, as upstream
// computes it ((expiresAt - now in Unix seconds) / 2; about 6 hours for
// ECR's 12-hour tokens), the half covering the time between the token's
// creation and its use. Zero (no caching) when ECR did not say when it
// expires, as upstream; zero too for a token with no time left, where
// upstream sets no cacheDuration and the kubelet would keep it for the
// config's defaultCacheDuration.
func CacheDuration(expiresAt *time.Time, now time.Time) time.Duration {
	if expiresAt == nil {
		return 0
	}
	half := (expiresAt.Unix() - now.Unix()) / 2
	if half <= 0 {
		return 0
	}
	return time.Duration(half) * time.Second
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
func describeAWSError(call string, err error) string {
	msg := call + " failed"
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
	return msg
}

// describeECRError is describeAWSError with, on a denial, whose
// permission is missing: the node's instance role, or the Pod's role.
func describeECRError(call, permissions string, podRole bool, err error) string {
	msg := describeAWSError(call, err)
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "AccessDeniedException" {
		if podRole {
			msg += "; allow " + permissions + " to the role the service account names (" + RoleARNAnnotation + ")"
		} else {
			msg += "; allow " + permissions + " to the node's instance role (iam/node-policy.json)"
		}
	}
	return msg
}
