package root

import (
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
)

// PluginBinary is the file name kubectl runs a plugin under: `kubectl
// awsccm ARGS` runs kubectl-awsccm ARGS (krew links that name to the
// release's awsccmctl; hack/release's krew manifest).
const PluginBinary = "kubectl-awsccm"

// pluginDisplayName is how help names the CLI when run as PluginBinary
// (Streams.InvokedAs).
const pluginDisplayName = "kubectl awsccm"

// DisplayName is how the CLI calls itself when run as argv0 (os.Args[0]):
// "kubectl awsccm" under PluginBinary's name, "awsccmctl" otherwise.
func DisplayName(argv0 string) string {
	if isPlugin(argv0) {
		return pluginDisplayName
	}
	return "awsccmctl"
}

// isPlugin reports whether argv0 names PluginBinary (with .exe, as kubectl
// finds plugins on Windows).
func isPlugin(argv0 string) bool {
	return strings.TrimSuffix(filepath.Base(argv0), ".exe") == PluginBinary
}

// commandLine finds awsccmctl starting an indented line, as the examples
// in Example and Long start the commands to copy (prose mentions of
// awsccmctl stay).
var commandLine = regexp.MustCompile(`(?m)^([ \t]+)awsccmctl( |$)`)

// presentAsPlugin names the tree `kubectl awsccm`: the root's display name
// (cobra's CommandPath, usage lines and help use it) and every example. The
// completion commands' texts are cobra's and stay as they are: kubectl
// completes a plugin through its own kubectl_complete-awsccm, not through
// these scripts.
func presentAsPlugin(cmd *cobra.Command) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[cobra.CommandDisplayNameAnnotation] = pluginDisplayName
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Example = commandLine.ReplaceAllString(c.Example, "${1}"+pluginDisplayName+"${2}")
		c.Long = commandLine.ReplaceAllString(c.Long, "${1}"+pluginDisplayName+"${2}")
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cmd)
}
