// Command awsccmctl moves Kubernetes clusters on AWS to the external cloud
// controller manager. All behaviour lives in internal/cli.
package main

import (
	"fmt"
	"os"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/cli/root"
)

func main() {
	cmd := root.NewCommand(root.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "awsccmctl: %v\n", err)
		os.Exit(exitcode.Of(err))
	}
}
