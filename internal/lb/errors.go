package lb

import (
	"errors"

	"github.com/aws/smithy-go"
)

// AWS error codes the reconciler branches on.
const (
	codeLBNotFoundClassic    = "LoadBalancerNotFound"
	codeAccessPointNotFound  = "AccessPointNotFound" // Classic: DescribeLoadBalancers of an unknown name
	codeTargetGroupNotFound  = "TargetGroupNotFound"
	codeListenerNotFound     = "ListenerNotFound"
	codeGroupNotFound        = "InvalidGroup.NotFound"
	codeGroupDuplicate       = "InvalidGroup.Duplicate"
	codePermissionDuplicate  = "InvalidPermission.Duplicate"
	codePermissionNotFound   = "InvalidPermission.NotFound"
	codeDependencyViolation  = "DependencyViolation"
	codeResourceInUse        = "ResourceInUse"
	codeDuplicatePolicyName  = "DuplicatePolicyName"
	codeDuplicateTargetGroup = "DuplicateTargetGroupName"
)

// errorCode returns the AWS error code of err, or "".
func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// isCode reports whether err carries one of codes.
func isCode(err error, codes ...string) bool {
	c := errorCode(err)
	if c == "" {
		return false
	}
	for _, want := range codes {
		if c == want {
			return true
		}
	}
	return false
}
