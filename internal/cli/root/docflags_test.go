package root

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// docCommand is one awsccmctl command line the documentation shows.
type docCommand struct {
	where string // file:line
	words []string
}

// TestDocumentedFlagsExist: every awsccmctl command line in the
// documentation (README.md, iam/README.md, docs/**/*.md: fenced blocks and
// inline code spans) names an existing command, and every long flag it
// passes exists on that command. A reader who copies a command must not
// meet "unknown flag" (iam/README.md once said install iam --cluster-name,
// whose flag is --cluster-id).
func TestDocumentedFlagsExist(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(root, "README.md"), filepath.Join(root, "iam", "README.md")}
	err = filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	tree := NewCommand(Streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
	checked := 0
	for _, f := range files {
		md, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		for _, c := range docCommands(rel, string(md)) {
			checked++
			if msg := checkDocCommand(tree, c.words); msg != "" {
				t.Errorf("%s: %s: %s", c.where, strings.Join(c.words, " "), msg)
			}
		}
	}
	// The documentation shows about a hundred command lines: far fewer
	// means the parser stopped finding them, and the test would pass empty.
	t.Logf("checked %d awsccmctl command lines in %d files", checked, len(files))
	if checked < 50 {
		t.Errorf("found %d awsccmctl command lines in the documentation; the parser misses them", checked)
	}
}

// TestCheckDocCommand: the checker refuses what a reader would be refused.
func TestCheckDocCommand(t *testing.T) {
	tree := NewCommand(Streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{"install iam --role control-plane --least-privilege --cluster-id prod", true},
		{"install iam --cluster-name prod", false},
		{"install apply --config install.yaml --dry-run=server", true},
		{"install aply --wait", false},
		{"preflight --node --root _output/demo/node-root -o json", true},
		{"install", true},
		{"migrate-from-intree --bogus", false},
	} {
		words := docCommands("x.md", "```sh\nawsccmctl "+tc.line+"\n```\n")
		if len(words) != 1 {
			t.Fatalf("%q: parsed %d commands", tc.line, len(words))
		}
		if msg := checkDocCommand(tree, words[0].words); (msg == "") != tc.ok {
			t.Errorf("%q: %q, want ok=%v", tc.line, msg, tc.ok)
		}
	}
}

var (
	inlineCode = regexp.MustCompile("`([^`]+)`")
	// Quoted words are values (never flags): "$(hostname -f)".
	quoted   = regexp.MustCompile(`"[^"]*"|'[^']*'`)
	flagName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
)

// docCommands returns the awsccmctl command lines of a Markdown document:
// lines of fenced blocks (joining lines continued with a backslash) and
// inline code spans outside them.
func docCommands(name, md string) []docCommand {
	var cmds []docCommand
	inFence := false
	pending, pendingLine := "", 0
	for i, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if !inFence {
			for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
				cmds = append(cmds, commandWords(name, i+1, m[1])...)
			}
			continue
		}
		if pending == "" {
			pendingLine = i + 1
		}
		if strings.HasSuffix(line, "\\") {
			pending += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		cmds = append(cmds, commandWords(name, pendingLine, pending+line)...)
		pending = ""
	}
	return cmds
}

// commandWords returns the awsccmctl invocations of one shell line, each
// up to the end of its simple command (a pipe, redirection, list operator
// or comment ends it).
func commandWords(name string, line int, text string) []docCommand {
	var cmds []docCommand
	var cur *docCommand
	for _, w := range strings.Fields(quoted.ReplaceAllString(text, "VALUE")) {
		if strings.ContainsAny(w[:1], "|&;<>#") || strings.Contains(w, ">") || strings.HasSuffix(w, ";") {
			cur = nil
			continue
		}
		if cur != nil {
			cur.words = append(cur.words, w)
			continue
		}
		if w == "awsccmctl" || strings.HasSuffix(w, "/awsccmctl") {
			cmds = append(cmds, docCommand{where: name + ":" + strconv.Itoa(line)})
			cur = &cmds[len(cmds)-1]
		}
	}
	return cmds
}

// checkDocCommand resolves the subcommands of words in tree and checks
// every long flag on the command they name; it returns what a reader
// would be refused, or "".
func checkDocCommand(tree *cobra.Command, words []string) string {
	cmd := tree
	i := 0
	for ; i < len(words) && !strings.HasPrefix(words[i], "-"); i++ {
		sub := child(cmd, words[i])
		if sub == nil {
			if cmd.HasSubCommands() && !cmd.Runnable() {
				return "no command " + words[i] + " under " + cmd.CommandPath()
			}
			break
		}
		cmd = sub
	}
	for _, w := range words[i:] {
		if !strings.HasPrefix(w, "--") || w == "--" {
			continue
		}
		flag, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
		// A placeholder such as --<flag> in prose is not a flag.
		if !flagName.MatchString(flag) {
			continue
		}
		if cmd.Flag(flag) == nil {
			return cmd.CommandPath() + " has no flag --" + flag
		}
	}
	return ""
}

func child(cmd *cobra.Command, name string) *cobra.Command {
	for _, c := range cmd.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return c
		}
	}
	return nil
}
