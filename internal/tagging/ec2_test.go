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

// TestApplyBatchedOtherErrors: an error that is not about unknown IDs
// (throttling, denial) fails the IDs of the call, without splitting it.
func TestApplyBatchedOtherErrors(t *testing.T) {
	calls := 0
	denied := &smithy.GenericAPIError{Code: "UnauthorizedOperation", Message: "no"}
	r := applyBatched(context.Background(), []string{"i-1", "i-2", "i-3"}, func(context.Context, []string) error {
		calls++
		return denied
	})
	if calls != 1 || len(r.failed) != 3 || !errors.Is(r.failed["i-2"], denied) {
		t.Errorf("calls = %d, failed = %v; want one call failing all three", calls, r.failed)
	}
}
