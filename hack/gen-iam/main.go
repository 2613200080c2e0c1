// Command gen-iam writes iam/*.json from the AWS action registry
// (internal/awsapi). `make verify` fails when the files are stale.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
)

func main() {
	dir := "iam"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	for name, doc := range awsapi.GeneratedPolicies() {
		b, err := doc.JSON()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
