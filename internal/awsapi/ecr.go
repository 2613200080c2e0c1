package awsapi

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/aws/aws-sdk-go-v2/service/ecrpublic"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// ECREndpoint selects the ECR API endpoint variant matching the registry
// host an image names: a FIPS registry host (dkr.ecr-fips) is served by
// the FIPS API endpoint, a dual-stack one (dkr-ecr....on.aws) by the
// dual-stack API endpoint.
type ECREndpoint struct {
	FIPS, DualStack bool
}

// NewECR builds the ECR client ecr-credential-provider uses for o.Region,
// with the guard, retryer and HTTP client of NewClients and the SDK's
// standard credential chain (environment, shared files, web identity,
// container and instance roles).
//
// An endpoint set with AWS_ENDPOINT_URL_ECR or AWS_ENDPOINT_URL (or the
// shared config's endpoint_url) wins over the FIPS and dual-stack variants:
// the SDK's endpoint rules refuse both together, and a configured endpoint
// (a VPC endpoint, the emulator) is where the user wants the call to go.
func NewECR(ctx context.Context, o Options, ep ECREndpoint) (*ecr.Client, error) {
	cfg, err := o.loadConfig(ctx, o.Region)
	if err != nil {
		return nil, err
	}
	return ecr.NewFromConfig(cfg, func(eo *ecr.Options) {
		if eo.BaseEndpoint != nil {
			return
		}
		if ep.FIPS {
			eo.EndpointOptions.UseFIPSEndpoint = aws.FIPSEndpointStateEnabled
		}
		if ep.DualStack {
			eo.EndpointOptions.UseDualStackEndpoint = aws.DualStackEndpointStateEnabled
		}
	}), nil
}

// ECRPublicRegion is the only region ECR Public's API serves
// GetAuthorizationToken in, whatever region the node is in (the aws
// partition only).
const ECRPublicRegion = "us-east-1"

// NewECRPublic builds the ECR Public client ecr-credential-provider uses
// for public.ecr.aws, in ECRPublicRegion, as NewECR does otherwise
// (AWS_ENDPOINT_URL_ECR_PUBLIC or AWS_ENDPOINT_URL wins).
func NewECRPublic(ctx context.Context, o Options) (*ecrpublic.Client, error) {
	cfg, err := o.loadConfig(ctx, ECRPublicRegion)
	if err != nil {
		return nil, err
	}
	return ecrpublic.NewFromConfig(cfg), nil
}

// NewWebIdentitySTS builds the STS client ecr-credential-provider calls
// AssumeRoleWithWebIdentity with, in o.Region (the regional endpoint, as
// upstream's provider uses the image's region). The call is unsigned, so
// the node's credentials play no part in it.
func NewWebIdentitySTS(ctx context.Context, o Options) (*sts.Client, error) {
	cfg, err := o.loadConfig(ctx, o.Region)
	if err != nil {
		return nil, err
	}
	return sts.NewFromConfig(cfg), nil
}
