package installcmd_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/awsccmctl/awsccmctl/internal/cli/root"
)

// installDocs are the how-to guides whose awsccmctl commands must exist.
var installDocs = []string{"install-kubeadm.md", "install-kops.md", "ecr-credential-provider.md"}

// TestDocsCommandsExist: every awsccmctl command line in the install guides
// (fenced code blocks, and inline code starting with awsccmctl) names real
// subcommands and flags with well-formed values, so the docs cannot rot.
// `install apply` lines are skipped while apply is not registered.
func TestDocsCommandsExist(t *testing.T) {
	for _, doc := range installDocs {
		t.Run(doc, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", doc))
			if err != nil {
				t.Fatal(err)
			}
			lines := docCommands(string(data))
			subs := map[string]bool{}
			for _, line := range lines {
				path := checkCommand(t, line)
				if len(path) > 1 && path[0] == "install" {
					subs[path[1]] = true
				}
			}
			if !subs["iam"] || (!subs["kubeadm"] && !subs["kops"]) {
				t.Errorf("found install subcommands %v in %d command lines; the parser missed the guide's commands", subs, len(lines))
			}
		})
	}
}

var (
	fence      = regexp.MustCompile("(?ms)^```[a-z]*\n(.*?)^```")
	inlineCode = regexp.MustCompile("`(awsccmctl [^`]+)`")
)

// docCommands returns the awsccmctl command lines of a Markdown document,
// continuation lines joined, starting at "awsccmctl".
func docCommands(md string) []string {
	var out []string
	for _, m := range fence.FindAllStringSubmatch(md, -1) {
		block := strings.ReplaceAll(m[1], "\\\n", " ")
		for _, l := range strings.Split(block, "\n") {
			if i := strings.Index(l, "awsccmctl "); i >= 0 && !strings.HasPrefix(strings.TrimSpace(l), "#") {
				out = append(out, l[i:])
			}
		}
	}
	for _, m := range inlineCode.FindAllStringSubmatch(fence.ReplaceAllString(md, ""), -1) {
		out = append(out, m[1])
	}
	return out
}

// shellWords splits a command line as a shell would, roughly: quotes group,
// and the command ends at a pipe, redirection, ; or &&.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	for i, w := range words {
		if w == "|" || w == ";" || w == "&&" || w == "||" || strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") {
			return words[:i]
		}
	}
	return words
}

// checkCommand parses line with a fresh command tree and returns the
// subcommand path it names.
func checkCommand(t *testing.T, line string) []string {
	t.Helper()
	words := shellWords(line)
	if len(words) == 0 || words[0] != "awsccmctl" {
		t.Errorf("%q: not an awsccmctl command", line)
		return nil
	}
	var out bytes.Buffer
	cmd := root.NewCommand(root.Streams{Out: &out, Err: &out})
	var path []string
	args := words[1:]
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") && cmd.HasSubCommands() {
		next := findSub(cmd, args[0])
		if next == nil {
			if len(path) == 1 && path[0] == "install" && args[0] == "apply" {
				t.Logf("%q: install apply is not registered yet; not checked", line)
				return append(path, args[0])
			}
			t.Errorf("%q: %q is not a subcommand of %q", line, args[0], cmd.CommandPath())
			return path
		}
		cmd, path, args = next, append(path, args[0]), args[1:]
	}
	if err := cmd.ParseFlags(args); err != nil {
		t.Errorf("%q: %v", line, err)
		return path
	}
	if rest := cmd.Flags().Args(); len(rest) > 0 && cmd.Args != nil {
		if err := cmd.ValidateArgs(rest); err != nil {
			t.Errorf("%q: arguments %v: %v", line, rest, err)
		}
	}
	return path
}

func findSub(cmd *cobra.Command, name string) *cobra.Command {
	for _, c := range cmd.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return c
		}
	}
	return nil
}
