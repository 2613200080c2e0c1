package awschecks

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/smithy-go"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// Remediations of aws-identity.
const (
	fixNoCredentials = "give awsccmctl AWS credentials: export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY " +
		"(and AWS_SESSION_TOKEN for temporary credentials); or select a profile of ~/.aws/config with AWS_PROFILE=<name> " +
		"(after `aws sso login --profile <name>` for an SSO profile); or run on an EC2 instance whose instance profile " +
		"grants iam/preflight-policy.json, with IMDS reachable and AWS_EC2_METADATA_DISABLED unset"
	fixExpired = "refresh the credentials: `aws sso login --profile <name>` for an SSO profile (AWS_PROFILE), " +
		"or assume the role again and re-export AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, " +
		"or unset those three to fall back to the shared config or the instance profile"
	fixInvalid = "the access key is unknown or its secret is wrong: check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY " +
		"(or the profile named by AWS_PROFILE in ~/.aws/credentials); `aws sts get-caller-identity` must succeed with them"
	fixThrottled = "STS throttled every retry: run preflight again in a minute, and look for a process calling STS in a loop " +
		"in this account (CloudTrail, eventSource sts.amazonaws.com)"
	fixUnreachable = "make STS reachable: check the network, proxy (HTTPS_PROXY), AWS_ENDPOINT_URL_STS and the cloud config's " +
		"[ServiceOverride] for STS, then run `aws sts get-caller-identity`"
	fixNoClients = "set Region in the cloud config's [Global] section or AWS_REGION, or run where IMDS answers"
)

// identity reports the caller's account and ARN, or why there is none.
func (r *runner) identity(ctx context.Context) preflight.Result {
	if r.sts.GetCallerIdentity == nil {
		return preflight.Fail(fixNoClients, "no AWS clients: the AWS region is not known")
	}
	out, err := r.callerIdentity(ctx)
	if err != nil {
		return identityFailure(err)
	}
	return preflight.Pass("account %s, %s", aws.ToString(out.Account), aws.ToString(out.Arn))
}

// identityFailure turns a GetCallerIdentity error into the fix for its cause.
func identityFailure(err error) preflight.Result {
	var signing *v4.SigningError
	var ae smithy.APIError
	switch {
	case errors.As(err, &signing) || noCredentials(err.Error()):
		return preflight.Fail(fixNoCredentials, "no AWS credentials found: %v", err)
	case errors.As(err, &ae) && expiredCodes[ae.ErrorCode()]:
		return preflight.Fail(fixExpired, "the AWS credentials have expired (%s): %v", ae.ErrorCode(), err)
	case errors.As(err, &ae) && invalidCodes[ae.ErrorCode()]:
		return preflight.Fail(fixInvalid, "AWS rejected the credentials (%s): %v", ae.ErrorCode(), err)
	case awsapi.IsThrottle(err):
		return preflight.Fail(fixThrottled, "STS GetCallerIdentity was throttled: %v", err)
	}
	return failedCall(preflight.Fail(fixUnreachable, "STS GetCallerIdentity: %v", err), err)
}

// noCredentials recognises the SDK's wording for a credential chain that
// found nothing (or only an expired SSO session).
func noCredentials(msg string) bool {
	for _, s := range []string{"failed to retrieve credentials", "failed to refresh cached credentials", "get credentials:"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

var expiredCodes = map[string]bool{
	"ExpiredToken": true, "ExpiredTokenException": true, "RequestExpired": true, "TokenRefreshRequired": true,
}

var invalidCodes = map[string]bool{
	"InvalidClientTokenId": true, "SignatureDoesNotMatch": true, "UnrecognizedClientException": true,
	"AuthFailure": true, "InvalidAccessKeyId": true, "IncompleteSignature": true,
}
