// Command gen-iam writes iam/*.json from the AWS action registry
// (internal/awsapi). `make verify` fails when the files are stale.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
)

// files maps each generated policy file to the component it grants.
var files = map[string]string{
	"ccm-policy.json":       awsapi.ComponentCCM,
	"preflight-policy.json": awsapi.ComponentPreflight,
}

func main() {
	dir := "iam"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	for name, component := range files {
		b, err := awsapi.PolicyJSON(component)
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
