// Package versioncmd is `awsccmctl version`.
package versioncmd

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/awsccmctl/awsccmctl/internal/version"
)

// NewCommand returns the version command; wantJSON reports the -o choice.
func NewCommand(out io.Writer, wantJSON func() (bool, error)) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of awsccmctl",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			asJSON, err := wantJSON()
			if err != nil {
				return err
			}
			return Print(out, version.Get(), asJSON)
		},
	}
}

// Print writes info as one line of text or as JSON.
func Print(out io.Writer, info version.Info, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}
	_, err := fmt.Fprintf(out, "awsccmctl %s (commit %s, %s, %s, Kubernetes libraries %s)\n",
		info.Version, orUnknown(info.GitCommit), info.GoVersion, info.Platform, orUnknown(info.Kubernetes))
	return err
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
