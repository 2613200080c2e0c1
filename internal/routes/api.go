package routes

import (
	"context"
	"errors"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/smithy-go"
	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/internal/instances"
)

// EC2 lists the EC2 operations the routes call, as function values (the
// access style of internal/awsapi/calls.go); NewEC2 fills them from a
// client.
type EC2 struct {
	DescribeRouteTables     func(context.Context, *ec2.DescribeRouteTablesInput, ...func(*ec2.Options)) (*ec2.DescribeRouteTablesOutput, error)
	CreateRoute             func(context.Context, *ec2.CreateRouteInput, ...func(*ec2.Options)) (*ec2.CreateRouteOutput, error)
	ReplaceRoute            func(context.Context, *ec2.ReplaceRouteInput, ...func(*ec2.Options)) (*ec2.ReplaceRouteOutput, error)
	DeleteRoute             func(context.Context, *ec2.DeleteRouteInput, ...func(*ec2.Options)) (*ec2.DeleteRouteOutput, error)
	ModifyInstanceAttribute func(context.Context, *ec2.ModifyInstanceAttributeInput, ...func(*ec2.Options)) (*ec2.ModifyInstanceAttributeOutput, error)
	// ModifyNetworkInterfaceAttribute turns the check off on an instance
	// with several interfaces, where EC2 refuses ModifyInstanceAttribute.
	ModifyNetworkInterfaceAttribute func(context.Context, *ec2.ModifyNetworkInterfaceAttributeInput, ...func(*ec2.Options)) (*ec2.ModifyNetworkInterfaceAttributeOutput, error)
}

// NewEC2 takes the calls from a client.
func NewEC2(c *ec2.Client) EC2 {
	return EC2{
		DescribeRouteTables: c.DescribeRouteTables, CreateRoute: c.CreateRoute, ReplaceRoute: c.ReplaceRoute,
		DeleteRoute: c.DeleteRoute, ModifyInstanceAttribute: c.ModifyInstanceAttribute,
		ModifyNetworkInterfaceAttribute: c.ModifyNetworkInterfaceAttribute,
	}
}

// Instances is the part of the shared instance view (internal/instances)
// the routes read: a route's target instance when it is created, and the
// network interfaces of the cluster's instances for the rare route that
// names an interface without its instance.
type Instances interface {
	ByID(ctx context.Context, id string) (instances.Observation, error)
	ByIDs(ctx context.Context, ids []string) (map[string]*instances.Instance, error)
	ByName(ctx context.Context, name string) (*instances.Instance, error)
}

// Node is a cluster Node and the instance it names.
type Node struct {
	Node *corev1.Node
	// InstanceID comes from the Node's providerID or resource-based name;
	// empty when the Node names its instance only by private DNS name.
	InstanceID string
}

// Nodes answers from the controllers' Node lister: no AWS calls.
type Nodes interface {
	// List returns the cluster's Nodes.
	List() ([]Node, error)
	// Get returns the Node named name.
	Get(name string) (Node, error)
}

// AWS error codes the routes branch on.
const (
	codeRouteLimitExceeded = "RouteLimitExceeded"
	codeRouteAlreadyExists = "RouteAlreadyExists"
	codeRouteNotFound      = "InvalidRoute.NotFound"
	// codeUnauthorized is EC2's answer to a call IAM denies.
	codeUnauthorized = "UnauthorizedOperation"
)

// isCode reports whether err carries one of codes.
func isCode(err error, codes ...string) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && slices.Contains(codes, ae.ErrorCode())
}
