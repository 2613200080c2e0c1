package tagging

import (
	"context"
	"errors"
	"maps"
	"math/bits"
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
	codeTagLimitExceeded  = "TagLimitExceeded"
	codeUnauthorized      = "UnauthorizedOperation"
)

// maxTagsPerInstance is EC2's limit on the user tags of one resource
// (aws:-prefixed tags do not count).
const maxTagsPerInstance = 50

// goneCodes fail a whole call for one bad ID: the instance does not exist
// (or not yet: CreateTags is eventually consistent for new instances), or
// its ID is not an EC2 ID at all (virtual nodes such as KWOK's).
var goneCodes = []string{codeInstanceNotFound, codeInstanceMalformed, codeInvalidID}

// EC2 tag calls are all-or-nothing: an error fails every instance of the
// call, whatever its cause. The codes fall in two classes.
//
// Could be one item's (itemCodes): an unknown instance (goneCodes), one
// instance past the 50-tag limit (TagLimitExceeded: the message does not
// say which), one instance an IAM policy or SCP does not allow
// (UnauthorizedOperation: the least-privilege policy allows only instances
// with the cluster tag; an SCP may deny a single account's or tag's
// instances). The call is split until the instances that fail alone are
// found; the others go through. A denial of the action as a whole looks
// the same at first and is found the same way, bounded by splitBudget.
//
// Whole-call (every other code, and errors without one): throttling
// (RequestLimitExceeded), 5xx (InternalError, Unavailable), a refused
// parameter (the tags themselves, the same for every instance), a network
// error. Splitting would not help and multiplies calls into an API already
// refusing them, so every instance of the call is retried with the
// queue's backoff, as one batch again.
var itemCodes = append(slices.Clone(goneCodes), codeTagLimitExceeded, codeUnauthorized)

// splitBudget bounds the calls one chunk of n instances may take per pass:
// enough to isolate maxIsolatedPerPass bad instances by bisection (each
// costs at most 2*ceil(log2 n) calls), so a call denied for every instance
// (the action not granted at all) costs a bounded number of calls per
// retry, not 2n-1. What is not isolated by then is retried with backoff;
// the next pass goes on where this one stopped, as the isolated instances
// are called apart then (Controller.suspects).
func splitBudget(n int) int {
	return 1 + maxIsolatedPerPass*2*bits.Len(uint(n-1))
}

// maxIsolatedPerPass is how many bad instances of a chunk one pass finds at
// least: more than a fleet usually has (a few instances launched with too
// many tags, or denied by an SCP).
const maxIsolatedPerPass = 4

// result is what one batched operation did to each instance.
type result struct {
	// gone are the IDs EC2 reported unknown or malformed.
	gone map[string]bool
	// refused are the IDs that failed for their own sake (a call of
	// theirs alone failed with an item code, or its message named them),
	// with the error.
	refused map[string]error
	// failed are the IDs whose call failed as a whole (a whole-call
	// error, or the split budget spent), with its error: no fault of
	// theirs is known.
	failed map[string]error
	// calls counts the calls made.
	calls int
}

func newResult() result {
	return result{gone: map[string]bool{}, refused: map[string]error{}, failed: map[string]error{}}
}

// merge adds the outcomes of o to r.
func (r *result) merge(o result) {
	maps.Copy(r.gone, o.gone)
	maps.Copy(r.refused, o.refused)
	maps.Copy(r.failed, o.failed)
	r.calls += o.calls
}

// applyBatched calls call for ids in chunks of MaxResourcesPerCall. A
// chunk failing with an item code is bisected until only the instances
// that fail alone are left: one bad instance in n costs at most
// 2*ceil(log2 n) more calls (20 for 1,000; fewer when a first half goes
// through, as the second is then known to fail and is split without a
// call) and fails only its own Node. Bisection rather than one call per
// instance of the failed chunk: that would cost n calls (1,000) for the
// same one bad instance; it is cheaper only when most instances of a
// chunk are bad, which splitBudget bounds. The IDs an error message names
// (EC2 names unknown instances) are taken out at once instead.
func applyBatched(ctx context.Context, ids []string, call func(context.Context, []string) error) result {
	r := newResult()
	for chunk := range slices.Chunk(ids, MaxResourcesPerCall) {
		budget := splitBudget(len(chunk))
		r.apply(ctx, slices.Clone(chunk), call, &budget, nil, false)
	}
	return r
}

// apply calls call for ids and splits them on an item error. parent is
// the error of the call ids were split from (nil for a chunk); when
// knownToFail, ids are the rest of that call after a part of it went
// through, so a call for them would fail too: they are split without one.
// A single instance is still called: only its own call blames it (an
// instance EC2 did not know a moment ago may be visible now). Once the
// budget is spent, ids fail with parent as a batch. It reports whether a
// call for all of ids went through.
func (r *result) apply(ctx context.Context, ids []string, call func(context.Context, []string) error, budget *int, parent error, knownToFail bool) bool {
	if len(ids) == 0 {
		return true
	}
	err := parent
	switch {
	case knownToFail && len(ids) > 1:
	case parent != nil && *budget <= 0:
		r.failAll(ids, parent)
		return false
	default:
		r.calls++
		*budget--
		if err = call(ctx, ids); err == nil {
			return true
		}
	}
	switch {
	case !isItemError(err):
		r.failAll(ids, err)
		return false
	case len(ids) == 1:
		r.blame(ids[0], err)
		return false
	}
	if named := namedIDs(err, ids); len(named) > 0 {
		for _, id := range named {
			r.blame(id, err)
		}
		r.apply(ctx, slices.DeleteFunc(ids, func(id string) bool { return slices.Contains(named, id) }), call, budget, err, false)
		return false
	}
	half := len(ids) / 2
	leftWent := r.apply(ctx, ids[:half:half], call, budget, err, false)
	r.apply(ctx, ids[half:], call, budget, err, leftWent)
	return false
}

// failAll records err for every one of ids: no fault of theirs is known.
func (r *result) failAll(ids []string, err error) {
	for _, id := range ids {
		r.failed[id] = err
	}
}

// blame records err as id's own.
func (r *result) blame(id string, err error) {
	if isGone(err) {
		r.gone[id] = true
		return
	}
	r.refused[id] = err
}

func isGone(err error) bool { return slices.Contains(goneCodes, errorCode(err)) }

func isItemError(err error) bool { return slices.Contains(itemCodes, errorCode(err)) }

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
