// Command awsccmctl moves Kubernetes clusters on AWS to the external cloud
// controller manager. All behaviour lives in internal/cli.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/cli/root"
)

func main() {
	// SIGINT and SIGTERM cancel the commands' context: a wait or a
	// migration run stops at once and says it was interrupted (exit 130).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	cmd := root.NewCommand(root.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	err := cmd.ExecuteContext(ctx)
	// Read before stop(), which cancels ctx too.
	interrupted := ctx.Err() != nil
	stop()
	if err != nil && interrupted && exitcode.Of(err) != exitcode.Interrupted {
		// Any command stopped by the signal exits as the shell would
		// have without the handler: 130, not as the error its cancelled
		// calls returned.
		err = &exitcode.Error{Code: exitcode.Interrupted, Err: fmt.Errorf("interrupted: %w", err)}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "awsccmctl: %v\n", err)
		os.Exit(exitcode.Of(err))
	}
}
