package root

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/migrate"
)

// needsCluster are the commands whose -o json cannot be produced without a
// cluster; test/integration and test/rbac run them against a real
// apiserver.
var needsCluster = []string{"install apply", "install uninstall", "migrate-from-intree plan"}

// offlineJSON runs every command that writes -o json and can run without a
// cluster, and returns its stdout by command path. Failed checks (exit 1)
// still write the document.
func offlineJSON(t *testing.T) map[string]string {
	t.Helper()
	nodeRoot := copyTree(t, filepath.Join("..", "..", "migrate", "nodephase", "testdata", "kubeadm-node"))
	journal := filepath.Join(t.TempDir(), "plan.journal.json")
	writeJournal(t, journal)
	runs := map[string][]string{
		"version":                    {"version"},
		"preflight":                  {"preflight", "--node", "--root", filepath.Join("..", "..", "nodefiles", "testdata", "kubeadm-external"), "--aws=false"},
		"install manifests":          {"install", "manifests"},
		"install iam":                {"install", "iam"},
		"install kops":               {"install", "kops", "--name", "c1.example.com"},
		"migrate-from-intree node":   {"migrate-from-intree", "node", "--root", nodeRoot, "--phase", "kubelet-external", "--dry-run"},
		"migrate-from-intree status": {"migrate-from-intree", "status", "--journal-file", journal},
	}
	outs := map[string]string{}
	for path, args := range runs {
		out, stderr, err := runAll(t, append(args, "-o", "json")...)
		if code := exitcode.Of(err); code != exitcode.OK && code != exitcode.Failed {
			t.Fatalf("%s -o json: exit %d: %v\n%s", path, code, err, stderr)
		}
		outs[path] = out
	}
	return outs
}

// writeJournal writes a migration journal with every optional part set, so
// status -o json shows all its keys.
func writeJournal(t *testing.T, path string) {
	t.Helper()
	now := metav1.NewTime(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	micro := metav1.NewMicroTime(now.Time)
	j := migrate.Journal{
		Plan: "migrate-1", PlanDigest: "sha256:0", Mode: migrate.ModeLeaderMigration,
		Holder: &migrate.Holder{ID: "x", Host: "h", PID: 1, Command: "awsccmctl migrate-from-intree apply", Since: now, Heartbeat: now},
		Steps: []migrate.StepRecord{
			{Name: "verify-cluster", State: migrate.StateDone, Started: &now, Finished: &now, Message: "ok", Evidence: []string{"e"}},
			{Name: "install-ccm", State: migrate.StatePending},
		},
		Handover: &migrate.HandoverRecord{KCMLastRenew: &micro, CCMAcquired: &micro, CCMIdentity: "ccm"},
	}
	data, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestJSONOutputParses: -o json of every command that can run without a
// cluster is one JSON document; every command that writes JSON is run here
// or listed in needsCluster.
func TestJSONOutputParses(t *testing.T) {
	outs := offlineJSON(t)
	for path, formats := range outputFormats() {
		if !slices.Contains(formats, OutputJSON) {
			continue
		}
		out, ran := outs[path]
		if !ran {
			if !slices.Contains(needsCluster, path) {
				t.Errorf("%q writes JSON: run it in offlineJSON, or list it in needsCluster", path)
			}
			continue
		}
		var v any
		dec := json.NewDecoder(strings.NewReader(out))
		if err := dec.Decode(&v); err != nil {
			t.Errorf("%s -o json is not JSON: %v\n%s", path, err, out)
			continue
		}
		if dec.More() {
			t.Errorf("%s -o json wrote more than one document:\n%s", path, out)
		}
		if _, ok := v.(map[string]any); !ok {
			t.Errorf("%s -o json is a %T, want an object (room for a schema version and new fields)", path, v)
		}
	}
}

// lowerCamel is Kubernetes' JSON key style: providerID, kcmLastRenew.
var lowerCamel = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)

// dataMaps are keys whose values are maps keyed by data (label keys,
// ConfigMap file names, Node names), not by field names.
var dataMaps = []string{"labels", "annotations", "data", "stringData", "binaryData", "nodeSelector", "matchLabels",
	"providerIDs", "hostnames"}

// dataKeyedDocuments are commands whose whole -o json document is a map
// keyed by data, with the reason.
var dataKeyedDocuments = map[string][]string{
	// The keys are the --role values (iampolicy.Roles): --role
	// control-plane and jq '.["control-plane"]' select the same document.
	"install iam": {"control-plane"},
}

// TestJSONKeysAreLowerCamelCase decodes every offline -o json document and
// checks every object key is lowerCamelCase, as Kubernetes writes them.
// Exempt: IAM policy documents (AWS's own Version, Statement, ...) and maps
// keyed by data.
func TestJSONKeysAreLowerCamelCase(t *testing.T) {
	for path, out := range offlineJSON(t) {
		t.Run(path, func(t *testing.T) {
			var v any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatal(err)
			}
			dataKeys := dataKeyedDocuments[path]
			var seen []string
			camelKeys(v, "", func(at, key string) {
				if at == "" && slices.Contains(dataKeys, key) {
					seen = append(seen, key)
					return
				}
				t.Errorf("key %q at %q is not lowerCamelCase", key, at)
			})
			for _, k := range dataKeys {
				if !slices.Contains(seen, k) {
					t.Errorf("%q is no longer in the output: remove it from dataKeyedDocuments", k)
				}
			}
		})
	}
}

// camelKeys calls bad for every key of v that is not lowerCamelCase.
func camelKeys(v any, at string, bad func(at, key string)) {
	switch v := v.(type) {
	case map[string]any:
		if isPolicyDocument(v) {
			return
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !lowerCamel.MatchString(k) {
				bad(at, k)
			}
			if slices.Contains(dataMaps, k) || (k == "selector" && isPlainMap(v[k])) {
				continue
			}
			camelKeys(v[k], at+"."+k, bad)
		}
	case []any:
		for i, e := range v {
			camelKeys(e, fmt.Sprintf("%s[%d]", at, i), bad)
		}
	}
}

// isPolicyDocument reports an IAM policy document: its keys are AWS's.
func isPolicyDocument(m map[string]any) bool {
	_, version := m["Version"]
	_, statement := m["Statement"]
	return version && statement
}

// isPlainMap reports a Service's selector (label key to value), as opposed
// to a label selector with matchLabels and matchExpressions.
func isPlainMap(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, labels := m["matchLabels"]
	_, exprs := m["matchExpressions"]
	return !labels && !exprs
}
