package awsemu

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
)

// fastRetryer is the SDK's standard retryer (3 attempts, same retryable
// codes) with millisecond backoff so retry tests stay fast.
func fastRetryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Millisecond, nil })
	})
}

// start serves f and stops the server when the test ends.
func start(t testing.TB, f *Fixture) (*Server, string) {
	t.Helper()
	e := StartT(t, f)
	return e.Server, e.URL
}

// demo serves testdata/demo.yaml.
func demo(t testing.TB) (*Server, string) {
	t.Helper()
	return start(t, DemoFixture())
}

// sdkConfig is what the CCM builds: default config chain with static
// credentials, isolated from the developer's ~/.aws files.
func sdkConfig(t testing.TB) aws.Config {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(),
		config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")),
		config.WithSharedConfigFiles([]string{}),
		config.WithSharedCredentialsFiles([]string{}),
		config.WithRetryer(fastRetryer),
	)
	if err != nil {
		t.Fatalf("LoadDefaultConfig: %v", err)
	}
	return cfg
}

// ec2Client and stsClient set HTTPClient per client: config.WithHTTPClient
// with a non-SDK client fails in LoadDefaultConfig when AWS_CA_BUNDLE is set.
func ec2Client(t testing.TB, url string) *ec2.Client {
	return ec2.NewFromConfig(sdkConfig(t), func(o *ec2.Options) {
		o.BaseEndpoint = aws.String(url)
		o.HTTPClient = HTTPClient()
	})
}

func stsClient(t testing.TB, url string) *sts.Client {
	return sts.NewFromConfig(sdkConfig(t), func(o *sts.Options) {
		o.BaseEndpoint = aws.String(url)
		o.HTTPClient = HTTPClient()
	})
}

// apiCode returns the smithy API error code of err ("" if none).
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := apiCode(err); got != code {
		t.Fatalf("error = %v (code %q), want code %q", err, got, code)
	}
}

// instanceIDs flattens a DescribeInstances answer to sorted IDs.
func instanceIDs(out *ec2.DescribeInstancesOutput) []string {
	var ids []string
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			ids = append(ids, aws.ToString(in.InstanceId))
		}
	}
	slices.Sort(ids)
	return ids
}

func filters(kv ...string) []ec2types.Filter {
	var out []ec2types.Filter
	for i := 0; i < len(kv); i += 2 {
		out = append(out, ec2types.Filter{Name: aws.String(kv[i]), Values: splitValues(kv[i+1])}) //nolint:gosec // G602: kv is name, values pairs; an odd count is a test bug and panics
	}
	return out
}

// splitValues splits "a|b" into filter values.
func splitValues(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '|' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

func tagMap(tags []ec2types.Tag) map[string]string {
	m := map[string]string{}
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}
