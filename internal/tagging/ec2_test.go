package tagging

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/smithy-go"
)

// TestApplyBatchedSplits checks the split of calls EC2 fails for unknown
// IDs, with a call that fails as EC2 does (the whole call, for any unknown
// ID in it) with and without naming the IDs in its message.
func TestApplyBatchedSplits(t *testing.T) {
	ids := make([]string, 2500)
	for i := range ids {
		ids[i] = fmt.Sprintf("i-%017x", i)
	}
	unknown := []string{ids[7], ids[1500], ids[1501]}
	for _, tc := range []struct {
		name  string
		named bool
		// wantCalls: three chunks (1,000, 1,000, 500), plus the retries.
		wantCalls int
	}{
		// The first chunk: one failing call naming ids[7], one without it.
		// The second: failing, without ids[1500] (the one named), failing
		// again, without ids[1501]. The third succeeds.
		{"message names the ID", true, 2 + 3 + 1},
		// Bisection: each unknown ID costs about 2*log2(1000) calls.
		{"message names none", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sent [][]string
			call := func(_ context.Context, batch []string) error {
				if len(batch) > MaxResourcesPerCall {
					t.Fatalf("call with %d IDs", len(batch))
				}
				sent = append(sent, slices.Clone(batch))
				for _, id := range batch {
					if slices.Contains(unknown, id) {
						msg := "The instance ID does not exist"
						if tc.named {
							msg = fmt.Sprintf("The instance ID '%s' does not exist", id)
						}
						return &smithy.GenericAPIError{Code: "InvalidInstanceID.NotFound", Message: msg}
					}
				}
				return nil
			}
			r := applyBatched(context.Background(), ids, call)
			if got := len(r.gone); got != 3 || !r.gone[ids[7]] || !r.gone[ids[1500]] || !r.gone[ids[1501]] {
				t.Errorf("gone = %v, want the three unknown IDs", r.gone)
			}
			if len(r.failed) != 0 {
				t.Errorf("failed = %v", r.failed)
			}
			if tc.wantCalls > 0 && r.calls != tc.wantCalls {
				t.Errorf("calls = %d, want %d", r.calls, tc.wantCalls)
			}
			if !tc.named && r.calls > 3+3*2*11 {
				t.Errorf("calls = %d, want at most %d", r.calls, 3+3*2*11)
			}
			if r.calls != len(sent) {
				t.Errorf("result counts %d calls, %d made", r.calls, len(sent))
			}
			// Every known ID was in a call that succeeded.
			ok := map[string]bool{}
			for _, b := range sent {
				if !slices.ContainsFunc(b, func(id string) bool { return slices.Contains(unknown, id) }) {
					for _, id := range b {
						ok[id] = true
					}
				}
			}
			if len(ok) != len(ids)-len(unknown) {
				t.Errorf("%d IDs in successful calls, want %d", len(ok), len(ids)-len(unknown))
			}
		})
	}
}

// TestApplyBatchedWholeCallErrors: an error that no single instance
// causes (throttling, 5xx, a refused parameter, no API error at all)
// fails every instance of the call as a batch failure, without a split:
// splitting would multiply calls into an API already refusing them.
func TestApplyBatchedWholeCallErrors(t *testing.T) {
	for _, err := range []error{
		&smithy.GenericAPIError{Code: "RequestLimitExceeded", Message: "Request limit exceeded."},
		&smithy.GenericAPIError{Code: "InternalError", Message: "An internal error has occurred"},
		&smithy.GenericAPIError{Code: "InvalidParameterValue", Message: "Tag value too long"},
		errors.New("connection reset by peer"),
	} {
		calls := 0
		r := applyBatched(context.Background(), []string{"i-1", "i-2", "i-3"}, func(context.Context, []string) error {
			calls++
			return err
		})
		if calls != 1 || len(r.failed) != 3 || !errors.Is(r.failed["i-2"], err) || len(r.refused) != 0 || len(r.gone) != 0 {
			t.Errorf("%v: calls = %d, failed = %v, refused = %v, gone = %v; want one call failing all three as a batch", err, calls, r.failed, r.refused, r.gone)
		}
	}
}

// failingFor is a call that fails as EC2 does, the whole call with err
// when any of bad is in it, and records what it was sent.
func failingFor(t *testing.T, err error, bad ...string) (func(context.Context, []string) error, *[][]string) {
	var sent [][]string
	return func(_ context.Context, batch []string) error {
		if len(batch) > MaxResourcesPerCall {
			t.Fatalf("call with %d IDs", len(batch))
		}
		sent = append(sent, slices.Clone(batch))
		if slices.ContainsFunc(batch, func(id string) bool { return slices.Contains(bad, id) }) {
			return err
		}
		return nil
	}, &sent
}

// TestApplyBatchedIsolatesOneBadInstance: one instance past its tag limit,
// or denied by an SCP, in 1,000 (EC2's message names neither) fails only
// itself, refused with the error, in at most 1 + 2*ceil(log2 1000) = 21
// calls, wherever it is; the 999 others are each in a call that went
// through.
func TestApplyBatchedIsolatesOneBadInstance(t *testing.T) {
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = fmt.Sprintf("i-%017x", i)
	}
	for _, code := range []string{"TagLimitExceeded", "UnauthorizedOperation"} {
		for _, bad := range []string{ids[0], ids[499], ids[500], ids[999]} {
			apiErr := &smithy.GenericAPIError{Code: code, Message: "The maximum number of Tags for a resource has been reached."}
			call, sent := failingFor(t, apiErr, bad)
			r := applyBatched(context.Background(), ids, call)
			if len(r.refused) != 1 || !errors.Is(r.refused[bad], apiErr) || len(r.failed) != 0 || len(r.gone) != 0 {
				t.Errorf("%s at %s: refused = %d %v, failed = %d, gone = %d; want only %s refused", code, bad, len(r.refused), r.refused[bad], len(r.failed), len(r.gone), bad)
			}
			if r.calls > 21 || r.calls != len(*sent) {
				t.Errorf("%s at %s: %d calls (%d made), want at most 21", code, bad, r.calls, len(*sent))
			}
			ok := map[string]bool{}
			for _, b := range *sent {
				if !slices.Contains(b, bad) {
					for _, id := range b {
						ok[id] = true
					}
				}
			}
			if len(ok) != 999 {
				t.Errorf("%s at %s: %d instances in calls that went through, want 999", code, bad, len(ok))
			}
		}
	}
}

// TestApplyBatchedSplitBudget: a call denied for every instance (the action
// not granted at all) is not bisected down to 1,999 calls: the pass stops
// at splitBudget, the instances isolated by then are refused, the rest
// fail as a batch (retried with backoff), and none is taken for done.
func TestApplyBatchedSplitBudget(t *testing.T) {
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = fmt.Sprintf("i-%017x", i)
	}
	denied := &smithy.GenericAPIError{Code: "UnauthorizedOperation", Message: "You are not authorized to perform this operation."}
	call, _ := failingFor(t, denied, ids...)
	r := applyBatched(context.Background(), ids, call)
	if budget := splitBudget(1000); r.calls > budget || budget > 81 {
		t.Errorf("calls = %d, budget %d; want at most the budget, 1 + 4*2*10 = 81", r.calls, budget)
	}
	if len(r.refused) < maxIsolatedPerPass || len(r.refused)+len(r.failed) != 1000 {
		t.Errorf("refused %d, failed %d; want at least %d refused and all 1,000 either", len(r.refused), len(r.failed), maxIsolatedPerPass)
	}
}

// TestApplyBatchedBlamesOnlyOnOwnCall: an instance EC2 did not know for
// the first call (a new one, CreateTags being eventually consistent) and
// knows for the next: the half it is in goes through, the other half is
// split without a call as it "must" hold the culprit, but no instance is
// taken for gone or refused without a call of its own failing.
func TestApplyBatchedBlamesOnlyOnOwnCall(t *testing.T) {
	ids := make([]string, 16)
	for i := range ids {
		ids[i] = fmt.Sprintf("i-%017x", i)
	}
	calls := 0
	r := applyBatched(context.Background(), ids, func(_ context.Context, batch []string) error {
		calls++
		if calls == 1 {
			return &smithy.GenericAPIError{Code: "InvalidInstanceID.NotFound", Message: "The instance ID does not exist"}
		}
		return nil
	})
	if len(r.gone) != 0 || len(r.refused) != 0 || len(r.failed) != 0 {
		t.Errorf("gone = %v, refused = %v, failed = %v; want none: every instance went through in a later call", r.gone, r.refused, r.failed)
	}
}
