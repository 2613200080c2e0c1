package root

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/install/deploy"
	"github.com/awsccmctl/awsccmctl/internal/install/kopsconfig"
	"github.com/awsccmctl/awsccmctl/internal/migrate"
	"github.com/awsccmctl/awsccmctl/internal/migrate/nodephase"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/version"
)

// failingArgs make each command with -o formats fail without a cluster,
// in its own code where it can (a missing file, a bad flag value).
var failingArgs = map[string][]string{
	"version":                      {"surplus-argument"},
	"preflight":                    {"--node", "--root", "/nonexistent", "--aws=false"},
	"install manifests":            {"--workload", "statefulset"},
	"install iam":                  {"--role", "nobody"},
	"install kops":                 {},
	"install kubeadm":              {},
	"install apply":                {"--kubeconfig", "/nonexistent"},
	"install uninstall":            {"--kubeconfig", "/nonexistent"},
	"migrate-from-intree plan":     {"--kubeconfig", "/nonexistent"},
	"migrate-from-intree status":   {"--journal-file", "/nonexistent"},
	"migrate-from-intree node":     {"--dry-run"},
	"migrate-from-intree apply":    {},
	"migrate-from-intree resume":   {},
	"migrate-from-intree rollback": {},
}

// errorDocument decodes out as exactly one JSON object and returns its
// error member.
func errorDocument(t *testing.T, out string) (map[string]any, ErrorInfo) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%q", err, out)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON document:\n%s", out)
	}
	raw, err := json.Marshal(doc["error"])
	if err != nil {
		t.Fatal(err)
	}
	var info ErrorInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		t.Fatalf("error member %s: %v", raw, err)
	}
	return doc, info
}

// TestJSONOnStdoutWhateverTheExit walks the tree: every command with -o
// formats, run with -o json and failing (in its own code, on an unknown
// flag, on a bad --config), writes exactly one JSON document on stdout, its
// "error" member the error and the exit code. Before, a failing command
// wrote nothing there, and install apply --diff wrote the diff text first.
func TestJSONOnStdoutWhateverTheExit(t *testing.T) {
	badConfig := filepath.Join(t.TempDir(), "bad.yaml")
	writeFile(t, badConfig, "Output: json\n")
	formats := outputFormats()
	for _, c := range commands(t) {
		path := commandPath(c)
		if _, listed := formats[path]; !listed {
			continue
		}
		args, ok := failingArgs[path]
		if !ok {
			t.Errorf("%q has -o formats: add the arguments that make it fail to failingArgs", path)
			continue
		}
		for name, extra := range map[string][]string{
			"own error":    args,
			"unknown flag": {"--no-such-flag"},
		} {
			t.Run(path+"/"+name, func(t *testing.T) {
				out, _, err := runAll(t, slices.Concat(argv(c), extra, []string{"-o", "json"})...)
				assertErrorDocument(t, out, err)
			})
		}
		if !c.HasParent() || path == "install apply" || strings.HasPrefix(path, "install ") {
			// install's commands read their own --config
			// (InstallConfiguration).
			continue
		}
		t.Run(path+"/bad config", func(t *testing.T) {
			out, _, err := runAll(t, slices.Concat([]string{"--config", badConfig}, argv(c), []string{"-o", "json"})...)
			assertErrorDocument(t, out, err)
		})
	}
	t.Run("unknown command", func(t *testing.T) {
		out, _, err := runAll(t, "install", "aply", "-o", "json")
		assertErrorDocument(t, out, err)
	})
	t.Run("from the environment", func(t *testing.T) {
		t.Setenv("AWSCCMCTL_OUTPUT", "json")
		out, _, err := runAll(t, "install", "iam", "--role", "nobody")
		assertErrorDocument(t, out, err)
	})
}

func assertErrorDocument(t *testing.T, out string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("succeeded, want a failure; stdout:\n%s", out)
	}
	_, info := errorDocument(t, out)
	if info.Message != err.Error() || info.ExitCode != exitcode.Of(err) || info.ExitCode == 0 {
		t.Errorf("error member %+v, want message %q and exit code %d", info, err.Error(), exitcode.Of(err))
	}
}

// TestJSONErrorJoinsTheDocument: a command that wrote its document and then
// failed (preflight with failed checks, exit 1) keeps its document, with the
// error member added; a command that succeeds has none.
func TestJSONErrorJoinsTheDocument(t *testing.T) {
	fixture := filepath.Join("..", "..", "nodefiles", "testdata", "kubeadm-1.26-intree")
	out, _, err := runAll(t, "preflight", "--node", "--root", fixture, "--aws=false", "-o", "json")
	if exitcode.Of(err) != exitcode.Failed {
		t.Fatalf("exit %d (%v), want 1", exitcode.Of(err), err)
	}
	doc, info := errorDocument(t, out)
	if doc["schemaVersion"] == nil || doc["findings"] == nil || doc["success"] != false {
		t.Errorf("the report is gone:\n%s", out)
	}
	if info.ExitCode != exitcode.Failed || !strings.HasPrefix(info.Message, "preflight failed: ") {
		t.Errorf("error member %+v", info)
	}
	out, _, err = runAll(t, "version", "-o", "json")
	if err != nil || strings.Contains(out, `"error"`) {
		t.Errorf("version -o json: %v\n%s", err, out)
	}
}

// TestWithError: the error member is added to the command's own object,
// keeping its text; anything else gives the ErrorDocument alone.
func TestWithError(t *testing.T) {
	errFailed := &exitcode.Error{Code: exitcode.Failed, Err: errString("checks failed")}
	member := "\"error\": {\n    \"message\": \"checks failed\",\n    \"exitCode\": 1\n  }\n}\n"
	for _, tc := range []struct {
		name, held, want string
	}{
		{"object", "{\n  \"b\": 1,\n  \"a\": [\n    2\n  ]\n}", "{\n  \"b\": 1,\n  \"a\": [\n    2\n  ],\n  " + member},
		{"empty object", "{}", "{\n  " + member},
		{"has its own error", `{"error": "own"}`, "{\"error\": \"own\"}\n"},
		{"array", "[1]", "{\n  " + member},
		{"nothing", "", "{\n  " + member},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held := []byte(tc.held)
			got, err := withError(held, len(held) > 0 && oneDocument(held), errFailed)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			if !json.Valid(got) {
				t.Errorf("not JSON:\n%s", got)
			}
		})
	}
	var b bytes.Buffer
	g := &jsonStdout{out: &b, errOut: &b, mode: modeJSON}
	g.held.WriteString("diff text\n{\"a\": 1}\n")
	if err := g.finish(nil); exitcode.Of(err) != exitcode.Internal {
		t.Errorf("text before the document: exit %d (%v), want %d", exitcode.Of(err), err, exitcode.Internal)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// TestJUnitRefused: every command that does not write JUnit refuses -o
// junit with exit 2 naming the value and what the command writes, and
// writes nothing on stdout.
func TestJUnitRefused(t *testing.T) {
	for path, formats := range outputFormats() {
		if slices.Contains(formats, preflight.FormatJUnit) {
			continue
		}
		t.Run(path, func(t *testing.T) {
			out, _, err := runAll(t, append(strings.Fields(path), "-o", "junit")...)
			if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), `--output "junit"`) || !strings.Contains(err.Error(), "writes") {
				t.Fatalf("exit %d (%v), want 2 saying what the command writes", exitcode.Of(err), err)
			}
			if out != "" {
				t.Errorf("stdout:\n%s", out)
			}
		})
	}
}

// jsonOutputTypes are the types the commands encode for -o json (or put in
// it), by what writes them. Kubernetes API types inside (the plan's
// metadata, the manifests) have their own camelCase tags.
var jsonOutputTypes = map[string]any{
	"errors (every command)":            ErrorDocument{},
	"version":                           version.Info{},
	"preflight":                         preflight.Report{},
	"install apply, uninstall":          deploy.Report{},
	"install kops":                      kopsconfig.Output{},
	"migrate-from-intree plan":          migrate.MigrationPlan{},
	"migrate-from-intree plan refusals": migrate.Refusal{},
	"migrate-from-intree status":        migrate.Status{},
	"migrate-from-intree node":          nodephase.Result{},
	"migrate-from-intree node report":   migrate.NodeReport{},
}

// TestJSONTagsAreLowerCamelCase walks every output type by reflection:
// each exported field a JSON document can hold has a json tag with a
// lowerCamelCase name (encoding/json writes an untagged field under its Go
// name: install apply's objects came out as "Ref" and "Action").
func TestJSONTagsAreLowerCamelCase(t *testing.T) {
	for what, v := range jsonOutputTypes {
		seen := map[reflect.Type]bool{}
		jsonFields(reflect.TypeOf(v), reflect.TypeOf(v).Name(), seen, func(at, problem string) {
			t.Errorf("%s: %s: %s", what, at, problem)
		})
	}
}

var marshaler = reflect.TypeFor[json.Marshaler]()

// jsonFields calls bad for every field under t that encoding/json would
// write with a name that is not lowerCamelCase.
func jsonFields(t reflect.Type, at string, seen map[reflect.Type]bool, bad func(at, problem string)) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] || t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) ||
		strings.HasPrefix(t.PkgPath(), "k8s.io/") {
		return
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		switch {
		case tag == "-":
			continue
		case f.Anonymous && name == "":
			// Embedded: its fields are promoted.
			jsonFields(f.Type, at, seen, bad)
			continue
		case name == "":
			bad(at+"."+f.Name, "no json tag: encoded as "+f.Name)
		case !lowerCamel.MatchString(name):
			bad(at+"."+f.Name, "json name "+name+" is not lowerCamelCase")
		}
		jsonFields(f.Type, at+"."+f.Name, seen, bad)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
