package chart

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kjson "k8s.io/apimachinery/pkg/util/json"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// chart-check's exit codes (hack/tools/helm/cmd/chart-check/doc.go).
const (
	exitOK      = 0
	exitUsage   = 2
	exitRefused = 3
)

// RefusedError is Helm's "no": chart-check exited 3 and Message is Helm's
// own message (for example "values don't meet the specifications of the
// schema(s)…" or "…exists and cannot be imported into the current release:
// invalid ownership metadata…").
type RefusedError struct {
	Command string // the chart-check subcommand: render, lint, …
	Message string
}

func (e *RefusedError) Error() string { return "helm " + e.Command + ": " + e.Message }

// Rendered is what render printed: the manifest's objects in Helm's install
// order, the hooks and the rendered NOTES.txt.
type Rendered struct {
	Objects []unstructured.Unstructured
	Hooks   []unstructured.Unstructured
	Notes   string
}

// LintMessage is one message of Helm's linter.
type LintMessage struct {
	Severity string `json:"severity"` // INFO, WARNING, ERROR
	Path     string `json:"path"`
	Message  string `json:"message"`
}

// Release is what install, upgrade and uninstall printed.
type Release struct {
	Name      string `json:"release"`
	Namespace string `json:"namespace"`
	Revision  int    `json:"revision"`
	Status    string `json:"status"` // deployed, failed, uninstalled, …
	Notes     string `json:"notes"`
	Info      string `json:"info"` // uninstall's
}

// Binary returns chart-check's path; like testbed.Tool it skips the test
// when it is missing, unless $CI is set.
func Binary(t testing.TB) string {
	t.Helper()
	return testbed.Tool(t, testbed.ChartCheckBinary)
}

// Render renders chartDir with valuesYAML (nil: the chart's defaults) as
// `helm template` does, schema validation included, and returns the
// objects.
func Render(t testing.TB, chartDir string, valuesYAML []byte, release, namespace string) ([]unstructured.Unstructured, error) {
	t.Helper()
	r, err := RenderAll(t, chartDir, valuesYAML, release, namespace)
	return r.Objects, err
}

// RenderAll is Render with the hooks and notes.
func RenderAll(t testing.TB, chartDir string, valuesYAML []byte, release, namespace string) (Rendered, error) {
	t.Helper()
	var out struct {
		Objects []json.RawMessage `json:"objects"`
		Hooks   []json.RawMessage `json:"hooks"`
		Notes   string            `json:"notes"`
	}
	args := append([]string{"--chart", chartDir, "--release", release, "--namespace", namespace}, valuesArgs(t, valuesYAML)...)
	if err := call(t, "render", args, &out); err != nil {
		return Rendered{}, err
	}
	return Rendered{Objects: toUnstructured(t, out.Objects), Hooks: toUnstructured(t, out.Hooks), Notes: out.Notes}, nil
}

// Lint runs `helm lint --strict` on chartDir with valuesYAML. The error is
// a *RefusedError when any message is a warning or an error; the messages
// are returned either way.
func Lint(t testing.TB, chartDir string, valuesYAML []byte) ([]LintMessage, error) {
	t.Helper()
	var out struct {
		Messages []LintMessage `json:"messages"`
	}
	err := call(t, "lint", append([]string{"--chart", chartDir}, valuesArgs(t, valuesYAML)...), &out)
	return out.Messages, err
}

// Schema validates valuesYAML, over the chart's values.yaml, against the
// chart's values.schema.json and nothing else.
func Schema(t testing.TB, chartDir string, valuesYAML []byte) error {
	t.Helper()
	return call(t, "schema", append([]string{"--chart", chartDir}, valuesArgs(t, valuesYAML)...), &struct{}{})
}

// Install runs `helm install` of chartDir as release into namespace of the
// kubeconfig's cluster, without waiting for readiness.
func Install(t testing.TB, chartDir string, valuesYAML []byte, release, namespace, kubeconfig string) (Release, error) {
	t.Helper()
	return releaseCall(t, "install", chartDir, valuesYAML, release, namespace, kubeconfig)
}

// TakeOwnership runs `helm install --take-ownership`: Install that adopts
// existing objects without Helm's ownership metadata.
func TakeOwnership(t testing.TB, chartDir string, valuesYAML []byte, release, namespace, kubeconfig string) (Release, error) {
	t.Helper()
	var out Release
	args := append([]string{"--chart", chartDir, "--release", release, "--namespace", namespace, "--kubeconfig", kubeconfig, "--take-ownership"}, valuesArgs(t, valuesYAML)...)
	err := call(t, "install", args, &out)
	return out, err
}

// Upgrade runs `helm upgrade` of release to chartDir with valuesYAML.
func Upgrade(t testing.TB, chartDir string, valuesYAML []byte, release, namespace, kubeconfig string) (Release, error) {
	t.Helper()
	return releaseCall(t, "upgrade", chartDir, valuesYAML, release, namespace, kubeconfig)
}

// Uninstall runs `helm uninstall` of release.
func Uninstall(t testing.TB, release, namespace, kubeconfig string) (Release, error) {
	t.Helper()
	var out Release
	err := call(t, "uninstall", []string{"--release", release, "--namespace", namespace, "--kubeconfig", kubeconfig}, &out)
	return out, err
}

func releaseCall(t testing.TB, cmd, chartDir string, valuesYAML []byte, release, namespace, kubeconfig string) (Release, error) {
	t.Helper()
	var out Release
	args := append([]string{"--chart", chartDir, "--release", release, "--namespace", namespace, "--kubeconfig", kubeconfig}, valuesArgs(t, valuesYAML)...)
	err := call(t, cmd, args, &out)
	return out, err
}

// valuesArgs writes valuesYAML to a file of the test's and returns the
// --values flag for it (none for nil).
func valuesArgs(t testing.TB, valuesYAML []byte) []string {
	t.Helper()
	if valuesYAML == nil {
		return nil
	}
	f, err := os.CreateTemp(t.TempDir(), "values-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(valuesYAML); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return []string{"--values", f.Name()}
}

// call runs chart-check cmd and decodes its JSON into out. Helm's refusal
// (exit 3) is a *RefusedError; a usage error or a crash fails the test.
func call(t testing.TB, cmd string, args []string, out any) error {
	t.Helper()
	stdout, stderr, code := runTool(t, append([]string{cmd}, args...)...)
	if code != exitOK && code != exitRefused {
		t.Fatalf("chart-check %s %s: exit %d\n%s", cmd, strings.Join(args, " "), code, stderr)
	}
	var status struct {
		Error string `json:"error"`
	}
	if err := errors.Join(json.Unmarshal(stdout, out), json.Unmarshal(stdout, &status)); err != nil {
		t.Fatalf("chart-check %s: output is not its JSON: %v\n%s\n%s", cmd, err, stdout, stderr)
	}
	if (code == exitRefused) != (status.Error != "") {
		t.Fatalf("chart-check %s exited %d with error %q", cmd, code, status.Error)
	}
	if code == exitRefused {
		return &RefusedError{Command: cmd, Message: status.Error}
	}
	return nil
}

// runTool runs chart-check with args and returns its output and exit code;
// a failure to start it fails the test.
func runTool(t testing.TB, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	// Not t.Context(): it is cancelled before the test's Cleanup functions
	// run, and a release is uninstalled from one.
	cmd := exec.CommandContext(context.WithoutCancel(t.Context()), Binary(t), args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("run %s %s: %v", filepath.Base(cmd.Path), strings.Join(args, " "), err)
	}
	return o.Bytes(), e.Bytes(), code
}

// toUnstructured decodes objects as client-go decodes them (whole numbers
// are int64, as in objects decoded from install.Render's YAML).
func toUnstructured(t testing.TB, objs []json.RawMessage) []unstructured.Unstructured {
	t.Helper()
	out := make([]unstructured.Unstructured, 0, len(objs))
	for _, raw := range objs {
		var obj map[string]any
		if err := kjson.Unmarshal(raw, &obj); err != nil {
			t.Fatalf("decode a rendered object: %v\n%s", err, raw)
		}
		out = append(out, unstructured.Unstructured{Object: obj})
	}
	return out
}
