package installcmd

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/install/deploy"
)

// TestApplyErrorCodes: the exit codes of install apply and uninstall, as
// docs/reference/exit-codes.md documents them.
func TestApplyErrorCodes(t *testing.T) {
	live := context.Background()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		err     error
		code    int
		message string
	}{
		{"valid-ok", live, nil, exitcode.OK, ""},
		{"mismatch", live, fmt.Errorf("uninstall: %w", &deploy.MismatchError{Err: errors.New("no install is recorded in namespace b")}), exitcode.Mismatch, "uninstall: no install is recorded in namespace b"},
		{"wait", live, &deploy.WaitError{Err: errors.New("not ready after 5m0s")}, exitcode.Failed, "not ready after 5m0s"},
		{"interrupted-wait", cancelled, &deploy.WaitError{Err: fmt.Errorf("Lease/ccm/cloud-controller-manager: %w", context.Canceled)}, exitcode.Interrupted, "interrupted"},
		{"interrupted-request", cancelled, fmt.Errorf("ConfigMap/ccm/aws-cloud-config: apply: %w", context.Canceled), exitcode.Interrupted, "interrupted"},
		// A request's own deadline is no interruption.
		{"deadline", live, fmt.Errorf("apply: %w", context.DeadlineExceeded), exitcode.Internal, "apply: context deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := applyError(tc.ctx, tc.err)
			if code := exitcode.Of(err); code != tc.code {
				t.Errorf("exit %d, want %d (%v)", code, tc.code, err)
			}
			if err != nil && err.Error() != tc.message {
				t.Errorf("message %q, want %q", err.Error(), tc.message)
			}
		})
	}
}
