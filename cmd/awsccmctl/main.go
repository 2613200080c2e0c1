// Command awsccmctl moves Kubernetes clusters on AWS to the external cloud
// controller manager. All behaviour lives in internal/cli. Installed as
// kubectl-awsccm (krew does), it runs as `kubectl awsccm` and its help
// says so.
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
	// migration run stops at once and says it was interrupted (exit 130,
	// root.Execute).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// Run as kubectl-awsccm (kubectl's plugin name, which krew installs),
	// help and errors say `kubectl awsccm`.
	err := root.Execute(ctx, root.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, InvokedAs: os.Args[0]}, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", root.DisplayName(os.Args[0]), err)
		os.Exit(exitcode.Of(err))
	}
}
