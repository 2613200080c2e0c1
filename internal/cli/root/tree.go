package root

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// outputFormats are the -o values each command writes, by its path below
// the root: what -o completes to, and what checkOutput holds the commands
// in checkedByRoot to. Every runnable command is here or in noOutput
// (TestEveryCommandHandlesOutput).
func outputFormats() map[string][]string {
	textJSON := []string{OutputText, OutputJSON}
	textOnly := []string{OutputText}
	return map[string][]string{
		"version":   textJSON,
		"preflight": {OutputText, OutputJSON, preflight.FormatJUnit},

		"install manifests": textJSON,
		"install iam":       textJSON,
		"install kops":      textJSON,
		// kubeadm reads YAML only; installcmd says so.
		"install kubeadm":   textOnly,
		"install apply":     textJSON,
		"install uninstall": textJSON,

		"migrate-from-intree plan":   textJSON,
		"migrate-from-intree status": textJSON,
		"migrate-from-intree node":   textJSON,
		// The runs print progress and prompts, no result document: -o json
		// would promise output they do not write.
		"migrate-from-intree apply":    textOnly,
		"migrate-from-intree resume":   textOnly,
		"migrate-from-intree rollback": textOnly,
	}
}

// noOutput says, for the runnable commands -o does not apply to, why.
// Commands that only group others print their help and are left out too.
func noOutput(cmd *cobra.Command) (string, bool) {
	path := commandPath(cmd)
	switch {
	case path == "help":
		return "prints help text", true
	case path == "completion" || strings.HasPrefix(path, "completion "):
		return "writes a shell script, which has no other format", true
	case cmd.Hidden:
		// cobra's __complete and __completeNoDesc answer the shell in
		// the shell's line protocol.
		return "hidden: talks to the shell, not to users", true
	case isGroup(cmd):
		return "groups commands: prints their list", true
	}
	return "", false
}

// commandPath is the command's path below the root: "install manifests".
func commandPath(cmd *cobra.Command) string {
	return strings.TrimPrefix(strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()), " ")
}

// checkedByRoot are the commands that would act before they read -o, or
// never read it: root refuses an -o value they do not write before they
// run, so the refusal (exit 2) changes nothing. install apply and uninstall
// print their report only after changing the cluster; the migration runs
// write progress, no result document. The other commands read -o first
// thing and refuse a wrong one with a message of their own (install
// kubeadm: kubeadm reads YAML), which this check would only preempt.
func checkedByRoot() []string {
	return []string{
		"install apply", "install uninstall",
		"migrate-from-intree apply", "migrate-from-intree resume", "migrate-from-intree rollback",
	}
}

// checkOutput refuses an -o value cmd does not write, for the commands in
// checkedByRoot.
func checkOutput(cmd *cobra.Command, output string) error {
	path := commandPath(cmd)
	formats, ok := outputFormats()[path]
	if !ok || !slices.Contains(checkedByRoot(), path) || slices.Contains(formats, output) {
		return nil
	}
	return exitcode.UsageError(fmt.Errorf("--output %q: %s writes %s", output, cmd.CommandPath(), orList(formats)))
}

func orList(s []string) string {
	if len(s) == 1 {
		return s[0] + " only"
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// groupMarker marks the commands strictArgs made runnable so that they
// reject unknown subcommands; they still only group others.
const groupMarker = "awsccmctl.io/group"

func isGroup(cmd *cobra.Command) bool {
	_, ok := cmd.Annotations[groupMarker]
	return ok || (cmd.HasSubCommands() && !cmd.Runnable())
}

// strictArgs makes every argument mistake a usage error (exit 2): an
// unknown subcommand of a command that groups others, and an argument to a
// command that takes none. cobra returns these as plain errors (exit 4),
// and for a group that cannot run it prints the help and exits 0, so
// `awsccmctl install aply` looked like success.
func strictArgs(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		strictArgs(c)
	}
	switch {
	case cmd.Name() == "help" && cmd.HasParent():
		// `help bogus` printed the root's help and exited 0.
		cmd.Args = func(c *cobra.Command, args []string) error {
			target, rest, err := c.Root().Find(args)
			if err == nil && len(rest) == 0 && target != nil {
				return nil
			}
			return exitcode.UsageError(fmt.Errorf("unknown help topic %q: run %s help for the commands", strings.Join(args, " "), c.Root().Name()))
		}
	case cmd.HasSubCommands() && !cmd.Runnable():
		if cmd.Annotations == nil {
			cmd.Annotations = map[string]string{}
		}
		cmd.Annotations[groupMarker] = ""
		// cobra validates arguments only of runnable commands (and of
		// the root's in Find, unwrapped), so a group runs to show its
		// help when called bare.
		cmd.Args = unknownSubcommand
		cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	case cmd.Args != nil:
		args := cmd.Args
		cmd.Args = func(c *cobra.Command, a []string) error {
			if err := args(c, a); err != nil {
				return exitcode.UsageError(err)
			}
			return nil
		}
	}
}

// unknownSubcommand refuses any argument to a command that groups others,
// naming it and suggesting the closest subcommands as cobra does.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		// cobra's own default, which it sets only on its unexported path.
		cmd.SuggestionsMinimumDistance = 2
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, ", "))
	}
	names := make([]string, 0, len(cmd.Commands()))
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return exitcode.UsageError(fmt.Errorf("%s; its commands: %s", msg, strings.Join(names, ", ")))
}
