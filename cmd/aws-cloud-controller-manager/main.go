// Command aws-cloud-controller-manager runs the Kubernetes cloud controllers
// for AWS. All wiring lives in internal/ccmapp.
package main

import (
	"fmt"
	"os"

	"k8s.io/component-base/cli"

	"github.com/awsccmctl/awsccmctl/internal/ccmapp"
)

func main() {
	cmd, err := ccmapp.NewCommand(ccmapp.Options{HandleSignals: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(cli.Run(cmd))
}
