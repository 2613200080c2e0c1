package awsapi

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

// NewIAM builds the IAM client preflight uses, with the same guard, metrics,
// retryer and HTTP client as NewClients.
//
// IAM is global: in the aws partition the client is signed for us-east-1
// whatever o.Region is; in other partitions the SDK's endpoint rules map
// o.Region to the partition's global endpoint. A [ServiceOverride] for IAM
// is looked up for o.Region (the cluster's region, the one the cloud config
// names) and wins; AWS_ENDPOINT_URL_IAM and AWS_ENDPOINT_URL apply
// otherwise, as the SDK reads them.
//
// The client acts as the caller's own credentials, never as the cloud
// config's RoleARN: preflight inspects the CCM's principal, it does not
// become it.
func NewIAM(ctx context.Context, o Options) (*iam.Client, error) {
	region := iamRegion(o.Region)
	cfg, err := o.loadConfig(ctx, region)
	if err != nil {
		return nil, err
	}
	return iam.NewFromConfig(cfg, func(opts *iam.Options) {
		opts.Region = region
		if url, signingRegion, ok := o.endpoint(cloudconfig.ServiceIAM); ok {
			opts.BaseEndpoint = aws.String(url)
			if signingRegion != "" {
				opts.Region = signingRegion
			}
		}
	}), nil
}

// iamRegion is the region the IAM client is built for: us-east-1 in the aws
// partition (and when the region is unknown), else the region itself.
func iamRegion(region string) string {
	for _, p := range []string{"cn-", "us-gov-", "us-iso", "eu-isoe-", "eusc-"} {
		if strings.HasPrefix(region, p) {
			return region
		}
	}
	return "us-east-1"
}
