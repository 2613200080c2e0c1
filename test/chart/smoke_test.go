package chart

// The TestChartCheck tests hold chart-check itself to Helm's behaviour on
// a throw-away chart, apart from the product's chart: its render, schema
// and lint answers, its exit codes, and (smoke_release_test.go) a release
// on the test bed.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tinyChart writes a throw-away chart into a test folder: one ConfigMap
// with a fixed name (so two releases collide on it), a values.schema.json
// that allows only "greeting" as a string, and NOTES.txt. It holds chart-check
// to Helm's behaviour without depending on the product's chart.
func tinyChart(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"Chart.yaml": `apiVersion: v2
name: tiny
description: A throw-away chart for chart-check's smoke tests.
version: 0.1.0
icon: https://example.com/icon.png
`,
		"values.yaml": "greeting: hello\n",
		"values.schema.json": `{
  "$schema": "https://json-schema.org/draft-07/schema#",
  "type": "object",
  "additionalProperties": false,
  "properties": {"greeting": {"type": "string"}}
}
`,
		"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: tiny
  namespace: {{ .Release.Namespace }}
data:
  greeting: {{ .Values.greeting | quote }}
  release: {{ .Release.Name | quote }}
  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}
`,
		"templates/NOTES.txt": "Installed {{ .Release.Name }} in {{ .Release.Namespace }}.\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// typoValues misspells the one key the schema allows.
var typoValues = []byte("greetin: hi\n")

// schemaMessage is Helm's message for a key the schema does not allow.
const schemaMessage = "additional properties 'greetin' not allowed"

func TestChartCheckRendersAsHelmTemplate(t *testing.T) {
	dir := tinyChart(t)
	r, err := RenderAll(t, dir, []byte("greeting: hi\n"), "smoke", "kube-system")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Objects) != 1 || len(r.Hooks) != 0 {
		t.Fatalf("want one object and no hooks, got %d and %d: %v", len(r.Objects), len(r.Hooks), r.Objects)
	}
	cm := r.Objects[0]
	if cm.GetKind() != "ConfigMap" || cm.GetName() != "tiny" || cm.GetNamespace() != "kube-system" {
		t.Errorf("object: %s %s/%s, want ConfigMap kube-system/tiny", cm.GetKind(), cm.GetNamespace(), cm.GetName())
	}
	want := map[string]any{"greeting": "hi", "release": "smoke", "kubeVersion": "v1.37.0"}
	for k, v := range want {
		if got := cm.Object["data"].(map[string]any)[k]; got != v {
			t.Errorf("data.%s = %v, want %v", k, got, v)
		}
	}
	if r.Notes != "Installed smoke in kube-system.\n" {
		t.Errorf("notes = %q", r.Notes)
	}

	// The chart's defaults without a values file.
	objs, err := Render(t, dir, nil, "smoke", "default")
	if err != nil {
		t.Fatal(err)
	}
	if got := objs[0].Object["data"].(map[string]any)["greeting"]; got != "hello" {
		t.Errorf("default greeting = %v, want hello", got)
	}
}

// A typo in values fails the render with Helm's schema message, as it
// fails `helm install`.
func TestChartCheckRefusesValuesTheSchemaForbids(t *testing.T) {
	dir := tinyChart(t)
	for name, values := range map[string][]byte{
		"unknown key": typoValues,
		"wrong type":  []byte("greeting: 5\n"),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Render(t, dir, values, "smoke", "default")
			var refused *RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("render: %v, want Helm's refusal", err)
			}
			if !strings.Contains(refused.Message, "values don't meet the specifications of the schema(s)") {
				t.Errorf("message %q is not Helm's schema error", refused.Message)
			}
		})
	}
	_, err := Render(t, dir, typoValues, "smoke", "default")
	if err == nil || !strings.Contains(err.Error(), schemaMessage) {
		t.Errorf("render: %v, want %q", err, schemaMessage)
	}
}

func TestChartCheckSchemaAlone(t *testing.T) {
	dir := tinyChart(t)
	if err := Schema(t, dir, []byte("greeting: hi\n")); err != nil {
		t.Errorf("valid values: %v", err)
	}
	if err := Schema(t, dir, typoValues); err == nil || !strings.Contains(err.Error(), schemaMessage) {
		t.Errorf("typo: %v, want %q", err, schemaMessage)
	}
}

func TestChartCheckLintIsStrict(t *testing.T) {
	dir := tinyChart(t)
	msgs, err := Lint(t, dir, nil)
	if err != nil {
		t.Fatalf("lint of a clean chart: %v\n%v", err, msgs)
	}
	for _, m := range msgs {
		if m.Severity != "INFO" {
			t.Errorf("clean chart: %+v", m)
		}
	}

	msgs, err = Lint(t, dir, typoValues)
	if !errors.As(err, new(*RefusedError)) {
		t.Fatalf("lint with a typo in values: %v, want Helm's refusal", err)
	}
	if !hasMessage(msgs, "ERROR", schemaMessage) {
		t.Errorf("lint messages %+v lack the schema error", msgs)
	}

	// Strict: a warning fails as an error does. Helm's linter warns of an
	// API the Kubernetes version it is told (v1.37.0) no longer serves.
	if err := os.WriteFile(filepath.Join(dir, "templates", "old.yaml"), []byte(`apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: old
spec:
  minAvailable: 1
  selector: {matchLabels: {app: tiny}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	msgs, err = Lint(t, dir, nil)
	if !errors.As(err, new(*RefusedError)) || !hasMessage(msgs, "WARNING", "policy/v1beta1") {
		t.Errorf("lint of a chart with a removed API: %v, messages %+v; want a warning failing the strict lint", err, msgs)
	}
}

func hasMessage(msgs []LintMessage, severity, text string) bool {
	for _, m := range msgs {
		if m.Severity == severity && strings.Contains(m.Message, text) {
			return true
		}
	}
	return false
}

// A usage mistake is not Helm's refusal: exit 2, nothing on stdout.
func TestChartCheckUsageErrors(t *testing.T) {
	dir := tinyChart(t)
	for name, args := range map[string][]string{
		"no release":     {"render", "--chart", dir, "--namespace", "default"},
		"missing chart":  {"render", "--chart", filepath.Join(dir, "nope"), "--release", "r", "--namespace", "default"},
		"missing values": {"schema", "--chart", dir, "--values", filepath.Join(dir, "nope.yaml")},
		"unknown":        {"template", "--chart", dir},
	} {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runTool(t, args...)
			if code != exitUsage || len(stdout) != 0 || len(stderr) == 0 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d with a message on stderr only", code, stdout, stderr, exitUsage)
			}
		})
	}
}
