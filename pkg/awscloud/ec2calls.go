package awscloud

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

// ec2Calls exposes only the EC2 operations the provider calls, as method
// values.
//
// Why not pass *ec2.Client where an interface is wanted: converting the
// client to an interface makes the linker keep every exported method of it
// (EC2 has over 800), because the program uses reflection. That cost ~30 MB
// of binary and ~6 MiB of resident memory; method values keep two.
type ec2Calls struct {
	describeInstances         func(context.Context, *ec2.DescribeInstancesInput, ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error)
	describeAvailabilityZones func(context.Context, *ec2.DescribeAvailabilityZonesInput, ...func(*ec2.Options)) (*ec2.DescribeAvailabilityZonesOutput, error)
}

func newEC2Calls(c *ec2.Client) ec2Calls {
	return ec2Calls{describeInstances: c.DescribeInstances, describeAvailabilityZones: c.DescribeAvailabilityZones}
}

func (e ec2Calls) DescribeInstances(ctx context.Context, in *ec2.DescribeInstancesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error) {
	return e.describeInstances(ctx, in, optFns...)
}

func (e ec2Calls) DescribeAvailabilityZones(ctx context.Context, in *ec2.DescribeAvailabilityZonesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeAvailabilityZonesOutput, error) {
	return e.describeAvailabilityZones(ctx, in, optFns...)
}
