package root

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
)

// commands returns every command of a fresh tree, root first, with its
// arguments from the root ("install manifests" is [install manifests]).
func commands(t *testing.T) []*cobra.Command {
	t.Helper()
	var all []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		all = append(all, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewCommand(Streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}))
	return all
}

func argv(c *cobra.Command) []string {
	if p := commandPath(c); p != "" {
		return strings.Fields(p)
	}
	return nil
}

// runAll runs args as awsccmctl does (Execute, on a fresh tree) and
// returns stdout, stderr and the error.
func runAll(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Execute(context.Background(), Streams{Out: &out, Err: &errOut}, args)
	return out.String(), errOut.String(), err
}

// TestUnknownSubcommandExitsTwo walks the whole tree: every command that
// groups others refuses an unknown one with exit 2 naming it, and every
// command that takes no arguments refuses one with exit 2. cobra itself
// exits 0 (it prints the group's help) or 4 (an unwrapped error).
func TestUnknownSubcommandExitsTwo(t *testing.T) {
	groups := 0
	for _, c := range commands(t) {
		takesNone := !c.HasSubCommands() && c.Args != nil && c.Args(c, []string{"bogus"}) != nil
		if !c.HasSubCommands() && !takesNone {
			continue
		}
		if c.HasSubCommands() {
			groups++
		}
		args := append(argv(c), "bogus")
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, _, err := runAll(t, args...)
			if code := exitcode.Of(err); code != exitcode.Usage {
				t.Fatalf("exit %d (%v), want %d; stdout:\n%s", code, err, exitcode.Usage, out)
			}
			if !strings.Contains(err.Error(), `"bogus"`) {
				t.Errorf("error does not name the unknown command: %v", err)
			}
		})
	}
	// root, install, migrate-from-intree, completion at least.
	if groups < 4 {
		t.Errorf("walked %d commands with subcommands, want at least 4: is the tree complete?", groups)
	}
	t.Run("help bogus", func(t *testing.T) {
		if _, _, err := runAll(t, "help", "bogus"); exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "bogus") {
			t.Errorf("help bogus: exit %d, %v", exitcode.Of(err), err)
		}
	})
	t.Run("suggestion", func(t *testing.T) {
		_, _, err := runAll(t, "install", "aply")
		if err == nil || !strings.Contains(err.Error(), `did you mean apply`) {
			t.Errorf("install aply: %v, want a suggestion of apply", err)
		}
	})
}

// TestGroupsStillShowHelp: a group called bare, or help on a command,
// prints the help and succeeds.
func TestGroupsStillShowHelp(t *testing.T) {
	for _, args := range [][]string{nil, {"install"}, {"migrate-from-intree"}, {"help", "install", "apply"}} {
		out, _, err := runAll(t, args...)
		if err != nil || !strings.Contains(out, "Usage:") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
}

// TestEveryCommandHandlesOutput walks the tree: every runnable command
// either writes -o formats listed in outputFormats, and then refuses any
// other -o with exit 2 before doing anything, or is on the noOutput list
// with its reason. A new command must be added to one of them.
func TestEveryCommandHandlesOutput(t *testing.T) {
	formats := outputFormats()
	seen := map[string]bool{}
	for _, c := range commands(t) {
		path := commandPath(c)
		if why, exempt := noOutput(c); exempt {
			if _, listed := formats[path]; listed {
				t.Errorf("%q is both in outputFormats and exempt (%s)", path, why)
			}
			continue
		}
		fs, ok := formats[path]
		if !ok {
			t.Errorf("%q: add the -o formats it writes to outputFormats, or the command to noOutput with the reason", path)
			continue
		}
		seen[path] = true
		if !slices.Contains(fs, OutputText) {
			t.Errorf("%q: every command writes text, the default -o", path)
		}
		t.Run(path, func(t *testing.T) {
			out, _, err := runAll(t, append(argv(c), "-o", "xml")...)
			if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), `--output "xml"`) {
				t.Fatalf("-o xml: exit %d, %v, want exit 2 naming --output", exitcode.Of(err), err)
			}
			if out != "" {
				t.Errorf("-o xml wrote to stdout:\n%s", out)
			}
		})
	}
	for path := range formats {
		if !seen[path] {
			t.Errorf("outputFormats lists %q, which is not a runnable command", path)
		}
	}
	t.Run("from the environment", func(t *testing.T) {
		t.Setenv("AWSCCMCTL_OUTPUT", "xml")
		if _, _, err := runAll(t, "install", "apply"); exitcode.Of(err) != exitcode.Usage {
			t.Errorf("AWSCCMCTL_OUTPUT=xml install apply: exit %d, %v", exitcode.Of(err), err)
		}
	})
}
