package root

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// executeAs runs args as the binary named argv0 does and returns stdout.
func executeAs(t *testing.T, argv0 string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := Execute(context.Background(), Streams{Out: &out, Err: &errOut, InvokedAs: argv0}, args); err != nil {
		t.Fatalf("%s %q: %v\n%s", argv0, args, err, errOut.String())
	}
	return out.String()
}

// commandAtLineStart finds awsccmctl starting a command line of help: a
// usage line or an example.
var commandAtLineStart = regexp.MustCompile(`(?m)^\s*awsccmctl( |$)`)

// TestPluginHelpSaysKubectlAwsccm runs --help of every command of the tree
// as awsccmctl and as kubectl-awsccm: the two differ only in lines that
// name the CLI, where the plugin says `kubectl awsccm` and never starts a
// command with awsccmctl, so a reader can paste every usage line and
// example after `kubectl`.
func TestPluginHelpSaysKubectlAwsccm(t *testing.T) {
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			// cobra's completion texts stay (presentAsPlugin).
			if !sub.Hidden && sub.Name() != "completion" {
				walk(sub, append(append([]string(nil), path...), sub.Name()))
			}
		}
	}
	walk(NewCommand(Streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}), nil)
	if len(paths) < 10 {
		t.Fatalf("walked %d commands, want the whole tree", len(paths))
	}
	examples := 0
	for _, path := range paths {
		args := append(append([]string(nil), path...), "--help")
		cli := executeAs(t, "/usr/local/bin/awsccmctl", args...)
		plugin := executeAs(t, "/home/u/.krew/bin/kubectl-awsccm", args...)
		if m := commandAtLineStart.FindString(plugin); m != "" {
			t.Errorf("kubectl-awsccm %s: a line starts with awsccmctl: %q", strings.Join(args, " "), m)
		}
		if !strings.Contains(plugin, "Usage:\n  kubectl awsccm") {
			t.Errorf("kubectl-awsccm %s: no `kubectl awsccm` usage line:\n%s", strings.Join(args, " "), plugin)
		}
		cliLines, pluginLines := strings.Split(cli, "\n"), strings.Split(plugin, "\n")
		if len(cliLines) != len(pluginLines) {
			t.Errorf("%s: %d lines as awsccmctl, %d as kubectl-awsccm", strings.Join(args, " "), len(cliLines), len(pluginLines))
			continue
		}
		for i := range cliLines {
			if cliLines[i] == pluginLines[i] {
				continue
			}
			if strings.ReplaceAll(pluginLines[i], pluginDisplayName, "awsccmctl") != cliLines[i] {
				t.Errorf("%s: line %d differs beyond the name:\n  awsccmctl:      %q\n  kubectl-awsccm: %q", strings.Join(args, " "), i, cliLines[i], pluginLines[i])
			}
			if strings.HasPrefix(strings.TrimSpace(pluginLines[i]), pluginDisplayName+" ") && strings.HasPrefix(cliLines[i], "  awsccmctl") {
				examples++
			}
		}
	}
	if examples < 10 {
		t.Errorf("%d usage and example lines renamed, want every command's", examples)
	}
}

// TestPluginOutputIsTheCLIs: outside help, the plugin prints what the CLI
// prints (version here), and only kubectl-awsccm is taken for the plugin.
func TestPluginOutputIsTheCLIs(t *testing.T) {
	if a, b := executeAs(t, "awsccmctl", "version"), executeAs(t, "kubectl-awsccm", "version"); a != b {
		t.Errorf("version: awsccmctl %q, kubectl-awsccm %q", a, b)
	}
	for argv0, want := range map[string]string{
		"kubectl-awsccm":                 "kubectl awsccm",
		"/root/.krew/bin/kubectl-awsccm": "kubectl awsccm",
		"kubectl-awsccm.exe":             "kubectl awsccm",
		"/usr/bin/awsccmctl":             "awsccmctl",
		"kubectl-awsccm-old":             "awsccmctl",
		"./awsccmctl-v1.0.0-linux-amd64": "awsccmctl",
	} {
		if got := DisplayName(argv0); got != want {
			t.Errorf("DisplayName(%q) = %q, want %q", argv0, got, want)
		}
	}
}
