package awsapi

import (
	"context"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/aws/aws-sdk-go-v2/service/ecrpublic"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// TestNewECREndpointVariants: a FIPS or dual-stack registry host gets the
// matching ECR API endpoint (api.ecr-fips.<region>.amazonaws.com,
// ecr.<region>.api.aws), unless an endpoint is configured, which wins (the
// SDK refuses both together).
func TestNewECREndpointVariants(t *testing.T) {
	for _, k := range []string{"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_ECR", "AWS_USE_FIPS_ENDPOINT", "AWS_USE_DUALSTACK_ENDPOINT", "AWS_PROFILE"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	ctx := context.Background()
	resolve := func(c *ecr.Client) string {
		o := c.Options()
		ep, err := ecr.NewDefaultEndpointResolverV2().ResolveEndpoint(ctx, ecr.EndpointParameters{
			Region:       aws.String(o.Region),
			UseFIPS:      aws.Bool(o.EndpointOptions.UseFIPSEndpoint == aws.FIPSEndpointStateEnabled),
			UseDualStack: aws.Bool(o.EndpointOptions.UseDualStackEndpoint == aws.DualStackEndpointStateEnabled),
			Endpoint:     o.BaseEndpoint,
		})
		if err != nil {
			t.Fatal(err)
		}
		return ep.URI.String()
	}
	for _, c := range []struct {
		region string
		ep     ECREndpoint
		want   string
	}{
		{"us-west-2", ECREndpoint{}, "https://api.ecr.us-west-2.amazonaws.com"},
		{"us-east-1", ECREndpoint{FIPS: true}, "https://api.ecr-fips.us-east-1.amazonaws.com"},
		{"eu-west-1", ECREndpoint{DualStack: true}, "https://ecr.eu-west-1.api.aws"},
		{"cn-north-1", ECREndpoint{}, "https://api.ecr.cn-north-1.amazonaws.com.cn"},
	} {
		cl, err := NewECR(ctx, Options{Region: c.region}, c.ep)
		if err != nil {
			t.Fatal(err)
		}
		if got := resolve(cl); got != c.want {
			t.Errorf("%s %+v: %s, want %s", c.region, c.ep, got, c.want)
		}
	}
	t.Setenv("AWS_ENDPOINT_URL_ECR", "http://127.0.0.1:9")
	cl, err := NewECR(ctx, Options{Region: "us-east-1"}, ECREndpoint{FIPS: true, DualStack: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := resolve(cl); got != "http://127.0.0.1:9" {
		t.Errorf("with AWS_ENDPOINT_URL_ECR: %s", got)
	}
}

// TestNewECRPublicIsInUSEast1: ECR Public's client asks us-east-1, the
// only region its API serves tokens in, whatever region the node's
// environment names; the web-identity STS client asks the region given
// (the image's), at its regional endpoint.
func TestNewECRPublicIsInUSEast1(t *testing.T) {
	for _, k := range []string{"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_ECR_PUBLIC", "AWS_ENDPOINT_URL_STS", "AWS_PROFILE"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	t.Setenv("AWS_REGION", "eu-west-1")
	ctx := context.Background()
	c, err := NewECRPublic(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := ecrpublic.NewDefaultEndpointResolverV2().ResolveEndpoint(ctx, ecrpublic.EndpointParameters{Region: aws.String(c.Options().Region)})
	if err != nil || c.Options().Region != "us-east-1" || ep.URI.String() != "https://api.ecr-public.us-east-1.amazonaws.com" {
		t.Errorf("ECR Public: region %s, endpoint %v (%v)", c.Options().Region, ep.URI.String(), err)
	}
	s, err := NewWebIdentitySTS(ctx, Options{Region: "ap-southeast-2"})
	if err != nil {
		t.Fatal(err)
	}
	sep, err := sts.NewDefaultEndpointResolverV2().ResolveEndpoint(ctx, sts.EndpointParameters{Region: aws.String(s.Options().Region)})
	if err != nil || sep.URI.String() != "https://sts.ap-southeast-2.amazonaws.com" {
		t.Errorf("STS: region %s, endpoint %v (%v)", s.Options().Region, sep.URI.String(), err)
	}
}
