package tagging

import (
	"context"
	"errors"
	"regexp"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
)

// EC2 lists the EC2 operations the controller calls (the access style of
// internal/awsapi/calls.go).
type EC2 struct {
	CreateTags func(context.Context, *ec2.CreateTagsInput, ...func(*ec2.Options)) (*ec2.CreateTagsOutput, error)
	DeleteTags func(context.Context, *ec2.DeleteTagsInput, ...func(*ec2.Options)) (*ec2.DeleteTagsOutput, error)
}

// NewEC2 takes the calls from a client.
func NewEC2(c *ec2.Client) EC2 { return EC2{CreateTags: c.CreateTags, DeleteTags: c.DeleteTags} }

// MaxResourcesPerCall is EC2's limit on resource IDs in one CreateTags or
// DeleteTags call ("Constraints: Up to 1000 resource IDs").
const MaxResourcesPerCall = 1000

// EC2 error codes the controller tells apart.
const (
	codeInstanceNotFound  = "InvalidInstanceID.NotFound"
	codeInstanceMalformed = "InvalidInstanceID.Malformed"
	codeInvalidID         = "InvalidID"
)

// goneCodes fail a whole call for one bad ID: the instance does not exist
// (or not yet: CreateTags is eventually consistent for new instances), or
// its ID is not an EC2 ID at all (virtual nodes such as KWOK's).
var goneCodes = []string{codeInstanceNotFound, codeInstanceMalformed, codeInvalidID}

// result is what one batched operation did to each instance.
type result struct {
	// gone are the IDs EC2 reported unknown or malformed.
	gone map[string]bool
	// failed are the IDs a call failed for otherwise, with its error.
	failed map[string]error
	// calls counts the calls made.
	calls int
}

// applyBatched calls call for ids in chunks of MaxResourcesPerCall. A chunk
// that fails because of unknown IDs is retried without them: without the
// IDs the error names, else split in halves, so one gone instance costs a
// few calls instead of failing the other 999.
func applyBatched(ctx context.Context, ids []string, call func(context.Context, []string) error) result {
	r := result{gone: map[string]bool{}, failed: map[string]error{}}
	for chunk := range slices.Chunk(ids, MaxResourcesPerCall) {
		r.apply(ctx, slices.Clone(chunk), call)
	}
	return r
}

func (r *result) apply(ctx context.Context, ids []string, call func(context.Context, []string) error) {
	if len(ids) == 0 {
		return
	}
	r.calls++
	err := call(ctx, ids)
	if err == nil {
		return
	}
	if !isGone(err) {
		for _, id := range ids {
			r.failed[id] = err
		}
		return
	}
	if len(ids) == 1 {
		r.gone[ids[0]] = true
		return
	}
	named := namedIDs(err, ids)
	if len(named) > 0 {
		for _, id := range named {
			r.gone[id] = true
		}
		r.apply(ctx, slices.DeleteFunc(ids, func(id string) bool { return slices.Contains(named, id) }), call)
		return
	}
	half := len(ids) / 2
	r.apply(ctx, ids[:half:half], call)
	r.apply(ctx, ids[half:], call)
}

func isGone(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && slices.Contains(goneCodes, ae.ErrorCode())
}

// idInMessage matches what EC2 error messages quote as IDs.
var idInMessage = regexp.MustCompile(`[A-Za-z0-9][A-Za-z0-9-]*`)

// namedIDs are the ids the error message names ("The instance ID 'i-1'
// does not exist", "The instance IDs 'i-1, i-2' do not exist"). The
// message is a hint, never trusted alone: only IDs of the call count, and
// a message naming none of them makes the caller split instead.
func namedIDs(err error, ids []string) []string {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return nil
	}
	var out []string
	for _, w := range idInMessage.FindAllString(ae.ErrorMessage(), -1) {
		if slices.Contains(ids, w) && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// ec2Tags converts tags in key order.
func ec2Tags(tags map[string]string, keys []string) []ec2types.Tag {
	out := make([]ec2types.Tag, 0, len(keys))
	for _, k := range keys {
		out = append(out, ec2types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return out
}

// errorCode is the AWS error code of err, or "".
func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}
