package gather

import (
	"context"
	"fmt"
	"slices"
	"strings"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/middleware"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
)

// readOnlyPrefixes are the operation name prefixes preflight may send: AWS
// names every call that changes nothing Describe*, Get*, List* or
// Simulate*.
var readOnlyPrefixes = []string{"Describe", "Get", "List", "Simulate"}

// ReadOnlyError is a call preflight refused to send because it could change
// AWS: preflight promises to only read.
type ReadOnlyError struct{ Service, Operation string }

func (e *ReadOnlyError) Error() string {
	return fmt.Sprintf("preflight only reads AWS: refused to send %s %s (only %s* calls are allowed); this is a bug in awsccmctl",
		e.Service, e.Operation, strings.Join(readOnlyPrefixes, "*, "))
}

// readOnlyOperation reports whether op is one preflight may send.
func readOnlyOperation(op string) bool {
	return slices.ContainsFunc(readOnlyPrefixes, func(p string) bool { return strings.HasPrefix(op, p) })
}

// readOnlyMiddleware refuses, at the Initialize step (before the request
// is built, signed or sent), every operation that is not read-only. It
// enforces the read-only promise whatever a check calls, so it does not
// rest on review alone.
func readOnlyMiddleware(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("awsccmctl.preflightReadOnly",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if op := awsmiddleware.GetOperationName(ctx); !readOnlyOperation(op) {
				return middleware.InitializeOutput{}, middleware.Metadata{}, &ReadOnlyError{Service: awsmiddleware.GetServiceID(ctx), Operation: op}
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.Before)
}

// newReadOnlyClients builds the clients the AWS checks use, as
// awsapi.NewClients and awsapi.NewIAM build them (endpoints, retryer,
// registry guard), each rebuilt from its options with readOnlyMiddleware
// added. Credentials (an assumed RoleARN included) are fetched by clients of
// their own, which this leaves alone.
func newReadOnlyClients(ctx context.Context, opts awsapi.Options) (*awsapi.Clients, *iam.Client, error) {
	c, err := awsapi.NewClients(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	iamClient, err := awsapi.NewIAM(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	// Options() returns a copy whose APIOptions New copies again, so the
	// clients awsapi built are not changed.
	c.EC2 = ec2.New(c.EC2.Options(), func(o *ec2.Options) { o.APIOptions = append(o.APIOptions, readOnlyMiddleware) })
	c.STS = sts.New(c.STS.Options(), func(o *sts.Options) { o.APIOptions = append(o.APIOptions, readOnlyMiddleware) })
	c.ELB = elb.New(c.ELB.Options(), func(o *elb.Options) { o.APIOptions = append(o.APIOptions, readOnlyMiddleware) })
	c.ELBv2 = elbv2.New(c.ELBv2.Options(), func(o *elbv2.Options) { o.APIOptions = append(o.APIOptions, readOnlyMiddleware) })
	iamClient = iam.New(iamClient.Options(), func(o *iam.Options) { o.APIOptions = append(o.APIOptions, readOnlyMiddleware) })
	return c, iamClient, nil
}
