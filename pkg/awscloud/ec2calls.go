package awscloud

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
)

// ec2Calls lists the EC2 operations the provider itself calls (the
// instance view and the load balancers list their own), filled from the
// client's method values: see internal/awsapi/calls.go for why not an
// interface.
type ec2Calls struct {
	// DescribeInstances reads the CCM's own instance at start.
	DescribeInstances awsapi.DescribeInstancesFunc
	// DescribeAvailabilityZones maps zone names to zone IDs.
	DescribeAvailabilityZones func(context.Context, *ec2.DescribeAvailabilityZonesInput, ...func(*ec2.Options)) (*ec2.DescribeAvailabilityZonesOutput, error)
}

func newEC2Calls(c *ec2.Client) ec2Calls {
	return ec2Calls{DescribeInstances: c.DescribeInstances, DescribeAvailabilityZones: c.DescribeAvailabilityZones}
}
