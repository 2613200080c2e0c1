package awsapi

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/awsccmctl/awsccmctl/internal/awsapi/bufferedbody"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

// DefaultHTTPTimeout bounds one HTTP attempt, as upstream does.
const DefaultHTTPTimeout = 30 * time.Second

// Options configure the clients.
type Options struct {
	// Region all regional clients use. Required for NewClients.
	Region string
	// CloudConfig supplies ServiceOverride endpoints and RoleARN/SourceARN.
	// Nil means none.
	CloudConfig *cloudconfig.Config
	// Metrics records every attempt; nil records nothing.
	Metrics *Metrics
	// HTTPTimeout bounds one attempt (default DefaultHTTPTimeout).
	HTTPTimeout time.Duration
	// MaxAttempts overrides the attempts per call. 0 leaves the SDK's own
	// retry settings in force: AWS_MAX_ATTEMPTS and AWS_RETRY_MODE, or
	// max_attempts and retry_mode in the shared config file, else the
	// standard mode's 3 attempts.
	MaxAttempts int
}

// Clients are the AWS clients the CCM (and preflight) uses.
type Clients struct {
	Config aws.Config
	EC2    *ec2.Client
	STS    *sts.Client
	// ELB is Classic Elastic Load Balancing, ELBv2 serves Network load
	// balancers.
	ELB   *elb.Client
	ELBv2 *elbv2.Client
}

func (o Options) apiOptions() []func(*middleware.Stack) error {
	fns := []func(*middleware.Stack) error{guardMiddleware}
	if o.Metrics != nil {
		fns = append(fns, o.Metrics.middleware)
	}
	return fns
}

// httpClient is the SDK's own buildable client (so AWS_CA_BUNDLE still
// applies) with the attempt timeout.
func (o Options) httpClient() *awshttp.BuildableClient {
	timeout := o.HTTPTimeout
	if timeout == 0 {
		timeout = DefaultHTTPTimeout
	}
	return awshttp.NewBuildableClient().WithTimeout(timeout)
}

// loadConfig builds the SDK config: the default credential chain (env,
// shared files, web identity, container and instance roles) and the SDK's
// own endpoint settings (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_<SERVICE>).
func (o Options) loadConfig(ctx context.Context, region string) (aws.Config, error) {
	opts := []func(*config.LoadOptions) error{
		config.WithHTTPClient(o.httpClient()),
		config.WithAPIOptions(o.apiOptions()),
	}
	// No retryer of our own: the SDK builds its own from AWS_RETRY_MODE
	// (adaptive mode slows a whole account's callers down when AWS
	// throttles) and AWS_MAX_ATTEMPTS, which a retryer given here would
	// override.
	if o.MaxAttempts != 0 {
		opts = append(opts, config.WithRetryMaxAttempts(o.MaxAttempts))
	}
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS SDK configuration: %w", err)
	}
	cfg.HTTPClient = bufferedbody.Client{Inner: cfg.HTTPClient}
	return cfg, nil
}

// NewClients builds the regional clients. With RoleARN in the cloud config
// every regional client acts as that role, assumed through STS with the
// confused-deputy headers (x-amz-source-account, and x-amz-source-arn when
// SourceARN is set), as upstream does.
func NewClients(ctx context.Context, o Options) (*Clients, error) {
	if o.Region == "" {
		return nil, fmt.Errorf("AWS region is not known: set Region in the cloud config or run where IMDS answers")
	}
	cfg, err := o.loadConfig(ctx, o.Region)
	if err != nil {
		return nil, err
	}
	stsClient := sts.NewFromConfig(cfg, o.stsOverride())
	if cc := o.CloudConfig; cc != nil && cc.Global.RoleARN != "" {
		assumer := sts.NewFromConfig(cfg, o.stsOverride(), sourceHeaders(cc.Global.RoleARN, cc.Global.SourceARN))
		cfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(assumer, cc.Global.RoleARN))
	}
	return &Clients{
		Config: cfg,
		EC2:    ec2.NewFromConfig(cfg, o.ec2Override()),
		STS:    stsClient,
		ELB:    elb.NewFromConfig(cfg, o.elbOverride()),
		ELBv2:  elbv2.NewFromConfig(cfg, o.elbv2Override()),
	}, nil
}

// NewIMDS builds the instance metadata client. The SDK honours
// AWS_EC2_METADATA_SERVICE_ENDPOINT and AWS_EC2_METADATA_DISABLED; a
// ServiceOverride for ec2imds wins over both.
func NewIMDS(ctx context.Context, o Options) (*imds.Client, error) {
	cfg, err := o.loadConfig(ctx, o.Region)
	if err != nil {
		return nil, err
	}
	return imds.NewFromConfig(cfg, func(io *imds.Options) {
		if cc := o.CloudConfig; cc != nil {
			if url, _, _, ok := cc.Endpoint(cloudconfig.ServiceIMDS, o.Region); ok {
				io.Endpoint = url
			}
		}
		// IMDS is not an IAM action; keep only the metrics middleware.
		io.APIOptions = nil
		if o.Metrics != nil {
			io.APIOptions = append(io.APIOptions, o.Metrics.middleware)
		}
	}), nil
}

// endpoint returns the [ServiceOverride] for service in the client region.
func (o Options) endpoint(service string) (url, signingRegion string, ok bool) {
	if o.CloudConfig == nil {
		return "", "", false
	}
	url, signingRegion, _, ok = o.CloudConfig.Endpoint(service, o.Region)
	return url, signingRegion, ok
}

// override applies a [ServiceOverride] endpoint to a client's options. The
// signing region replaces the client region: with a fixed endpoint the
// region only feeds the signature.
func (o Options) override(service string, baseEndpoint **string, region *string) {
	if url, signingRegion, ok := o.endpoint(service); ok {
		*baseEndpoint = aws.String(url)
		if signingRegion != "" {
			*region = signingRegion
		}
	}
}

func (o Options) ec2Override() func(*ec2.Options) {
	return func(eo *ec2.Options) { o.override(cloudconfig.ServiceEC2, &eo.BaseEndpoint, &eo.Region) }
}

func (o Options) stsOverride() func(*sts.Options) {
	return func(so *sts.Options) { o.override(cloudconfig.ServiceSTS, &so.BaseEndpoint, &so.Region) }
}

// elbOverride and elbv2Override: an override for "elasticloadbalancing"
// (the SDK v1 ID the in-tree provider used) applies to both, as it did
// in-tree, unless ELBv2 has its own (see cloudconfig.Config.Endpoint).
func (o Options) elbOverride() func(*elb.Options) {
	return func(eo *elb.Options) { o.override(cloudconfig.ServiceELB, &eo.BaseEndpoint, &eo.Region) }
}

func (o Options) elbv2Override() func(*elbv2.Options) {
	return func(eo *elbv2.Options) { o.override(cloudconfig.ServiceELBv2, &eo.BaseEndpoint, &eo.Region) }
}

// sourceHeaders adds the confused-deputy headers to AssumeRole calls.
func sourceHeaders(roleARN, sourceARN string) func(*sts.Options) {
	account := ""
	if a, err := arn.Parse(roleARN); err == nil {
		account = a.AccountID
	}
	return func(so *sts.Options) {
		so.APIOptions = append(so.APIOptions, func(stack *middleware.Stack) error {
			return stack.Build.Add(middleware.BuildMiddlewareFunc("awsccm.sourceHeaders",
				func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
					if req, ok := in.Request.(*smithyhttp.Request); ok {
						if account != "" {
							req.Header.Set("x-amz-source-account", account)
						}
						if sourceARN != "" {
							req.Header.Set("x-amz-source-arn", sourceARN)
						}
					}
					return next.HandleBuild(ctx, in)
				}), middleware.After)
		})
	}
}
