package ccmapp

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The docs tests of the CCM: what the command and the provider beneath it
// tell users must be what the docs say.

const (
	repoRoot   = "../.."
	modulePath = "github.com/awsccmctl/awsccmctl"
)

// TestEventReasonsDocumented: every reason of an event the CCM's code
// records on a Node is a row of docs/reference/node-events.md and every
// row is such a reason; every reason it records on a Service is in
// docs/load-balancers.md. The reasons are collected from the source: each
// recorder call (Event, Eventf, AnnotatedEventf) in cmd/, pkg/ and
// internal/, its reason resolved to the string constant it names.
func TestEventReasonsDocumented(t *testing.T) {
	events := recordedEvents(t)
	byObject := map[string]map[string]string{} // object -> reason -> where
	for _, ev := range events {
		if byObject[ev.object] == nil {
			byObject[ev.object] = map[string]string{}
		}
		byObject[ev.object][ev.reason] = ev.where
	}
	if len(byObject["Node"]) < 9 || len(byObject["Service"]) < 4 {
		t.Fatalf("found only %d Node and %d Service event reasons in the code; is the search broken?\n%v",
			len(byObject["Node"]), len(byObject["Service"]), events)
	}

	nodeEvents := readDoc(t, "docs/reference/node-events.md")
	documented := map[string]bool{}
	for line := range strings.SplitSeq(nodeEvents, "\n") {
		if reason, ok := strings.CutPrefix(line, "| `"); ok {
			reason, _, _ = strings.Cut(reason, "`")
			documented[reason] = true
		}
	}
	for _, reason := range slices.Sorted(maps.Keys(byObject["Node"])) {
		if !documented[reason] {
			t.Errorf("%s records events with reason %s on Nodes, but docs/reference/node-events.md has no row for it",
				byObject["Node"][reason], reason)
		}
	}
	for _, reason := range slices.Sorted(maps.Keys(documented)) {
		if _, ok := byObject["Node"][reason]; !ok {
			t.Errorf("docs/reference/node-events.md has a row for %s, which no code of the CCM records on a Node", reason)
		}
	}

	lbDoc := readDoc(t, "docs/load-balancers.md")
	for _, reason := range slices.Sorted(maps.Keys(byObject["Service"])) {
		if !strings.Contains(lbDoc, "`"+reason+"`") {
			t.Errorf("%s records events with reason %s on Services, but docs/load-balancers.md does not name it", byObject["Service"][reason], reason)
		}
	}
}

// recordedEvent is one recorder call found in the source.
type recordedEvent struct {
	object, reason, where string
}

// recordedEvents finds every event recorder call of the CCM's code, with
// its reason resolved and its object classified, and fails the test for a
// call it cannot read (a reason that is no string constant, an object it
// cannot tell): such a call must be taught here, not skipped.
func recordedEvents(t *testing.T) []recordedEvent {
	t.Helper()
	fset := token.NewFileSet()
	files := map[string][]*ast.File{} // by directory, relative to the root
	for _, top := range []string{"cmd", "pkg", "internal"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(repoRoot, filepath.Dir(p))
			if err != nil {
				return err
			}
			files[filepath.ToSlash(rel)] = append(files[filepath.ToSlash(rel)], f)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// consts maps a directory to its package's string constants.
	consts := map[string]map[string]string{}
	for dir, parsed := range files {
		consts[dir] = map[string]string{}
		for _, f := range parsed {
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i >= len(vs.Values) {
							continue
						}
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							if v, err := strconv.Unquote(lit.Value); err == nil {
								consts[dir][name.Name] = v
							}
						}
					}
				}
			}
		}
	}
	recorderArgs := map[string]int{"Event": 2, "Eventf": 2, "AnnotatedEventf": 3} // index of the reason
	var out []recordedEvent
	for _, dir := range slices.Sorted(maps.Keys(files)) {
		for _, f := range files[dir] {
			imports := map[string]string{} // package name -> directory of ours
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				rel, ok := strings.CutPrefix(p, modulePath+"/")
				if !ok {
					continue
				}
				name := path.Base(rel)
				if imp.Name != nil {
					name = imp.Name.Name
				}
				imports[name] = rel
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				ri, ok := recorderArgs[sel.Sel.Name]
				if !ok || len(call.Args) <= ri {
					return true
				}
				where := fset.Position(call.Pos()).String()
				reason, resolved := "", false
				switch r := call.Args[ri].(type) {
				case *ast.BasicLit:
					if r.Kind == token.STRING {
						reason, _ = strconv.Unquote(r.Value)
						resolved = true
					}
				case *ast.Ident:
					reason, resolved = consts[dir][r.Name]
				case *ast.SelectorExpr:
					if pkg, ok := r.X.(*ast.Ident); ok {
						reason, resolved = consts[imports[pkg.Name]][r.Sel.Name]
					}
				}
				if !resolved {
					t.Errorf("%s: the event's reason is not a string constant this test can read", where)
					return true
				}
				var object string
				switch last := strings.ToLower(lastName(call.Args[0])); last {
				case "node":
					object = "Node"
				case "svc", "service":
					object = "Service"
				default:
					t.Errorf("%s: cannot tell whether the event's object %q is a Node or a Service; name it node or svc, or teach this test", where, last)
					return true
				}
				out = append(out, recordedEvent{object: object, reason: reason, where: where})
				return true
			})
		}
	}
	return out
}

// lastName is the last name of an expression: node for node, n.Node and
// &node.
func lastName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.UnaryExpr:
		return lastName(e.X)
	case *ast.StarExpr:
		return lastName(e.X)
	}
	return ""
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRoutesDocQuotesTheRefusal: the start-up refusal docs/routes.md quotes
// for the route controller without --cluster-cidr is, line for line, what
// the command prints.
func TestRoutesDocQuotesTheRefusal(t *testing.T) {
	const opening = "aws-cloud-controller-manager: cannot start the AWS cloud provider:\n"
	// The quote is a fenced block without a language (mdfence reads only
	// blocks with one).
	doc := readDoc(t, "docs/routes.md")
	var quoted []string
	for rest := doc; ; {
		_, after, ok := strings.Cut(rest, "\n```\n"+opening)
		if !ok {
			break
		}
		body, tail, ok := strings.Cut(after, "```\n")
		if !ok {
			t.Fatal("docs/routes.md: the quote of the start-up refusal is not closed")
		}
		quoted, rest = append(quoted, opening+body), tail
	}
	if len(quoted) != 1 {
		t.Fatalf("docs/routes.md quotes the start-up refusal %d times, want once (a ``` block starting %q)", len(quoted), opening)
	}
	if want := opening + errNoClusterCIDR.Error() + "\n"; quoted[0] != want {
		t.Errorf("docs/routes.md quotes\n%s\nbut checkRouteFlags says\n%s", quoted[0], want)
	}
	// And the binary prints exactly that (TestMain runs the command in a
	// child process).
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\n"+
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), runArgsEnv+"="+strings.Join([]string{"--kubeconfig=" + kubeconfig, "--secure-port=0", "--leader-elect=false"}, "\n"))
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), quoted[0]) {
		t.Errorf("the command's output does not contain what docs/routes.md quotes:\n%s", out)
	}
}
