package installcmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/cli/root"
)

// execute runs args as the awsccmctl binary does (root.Execute, which keeps
// -o json's contract) and returns stdout and the error.
func execute(args ...string) (string, error) {
	var out, errOut bytes.Buffer
	err := root.Execute(context.Background(), root.Streams{Out: &out, Err: &errOut}, args)
	return out.String(), err
}

// applyDocument is install apply's and uninstall's -o json document.
type applyDocument struct {
	DryRun  string `json:"dryRun"`
	Objects []struct {
		Ref    string `json:"ref"`
		Action string `json:"action"`
	} `json:"objects"`
	Differences *bool  `json:"differences"`
	Diff        string `json:"diff"`
	Error       *struct {
		Message  string `json:"message"`
		ExitCode int    `json:"exitCode"`
	} `json:"error"`
}

// decodeOne decodes out as exactly one JSON document, strictly.
func decodeOne(t *testing.T, out string) applyDocument {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var d applyDocument
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("stdout is not one apply document: %v\n%s", err, out)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one document:\n%s", out)
	}
	return d
}

// TestApplyAndUninstallJSON on the real apiserver: install apply --diff -o
// json writes one document, the diff inside it (it was printed as text
// before the JSON), objects as {ref, action}; with a dry run and
// differences it exits 1 and the document carries the error; a failing
// uninstall -o json (exit 8) writes the error document, where it wrote
// nothing.
func TestApplyAndUninstallJSON(t *testing.T) {
	kubeconfig, ns := cluster(t)
	flags := []string{"--kubeconfig", kubeconfig, "--namespace", ns, "--no-detect", "-o", "json"}
	uninstallAtEnd(t, flags[:4])

	out, err := execute(append([]string{"install", "apply", "--diff", "--dry-run=server"}, flags...)...)
	if code := exitcode.Of(err); code != exitcode.Failed {
		t.Fatalf("diff of a new install: exit %d (%v), want 1\n%s", code, err, out)
	}
	d := decodeOne(t, out)
	if !strings.Contains(d.Diff, "+++ applied/DaemonSet/"+ns+"/aws-cloud-controller-manager") || d.Differences == nil || !*d.Differences {
		t.Errorf("the diff is not in the document: %+v", d)
	}
	if d.Error == nil || d.Error.ExitCode != exitcode.Failed || d.Error.Message != err.Error() {
		t.Errorf("error member %+v, want exit 1 and %q", d.Error, err)
	}
	if len(d.Objects) == 0 || d.Objects[0].Ref == "" || d.Objects[0].Action == "" {
		t.Errorf("objects %+v, want ref and action", d.Objects)
	}

	out, err = execute(append([]string{"install", "apply", "--diff"}, flags...)...)
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	if d := decodeOne(t, out); d.Error != nil || !strings.Contains(d.Diff, "+++ applied/") || len(d.Objects) == 0 {
		t.Errorf("apply --diff -o json: %+v", d)
	}

	out, err = execute("install", "uninstall", "--kubeconfig", kubeconfig, "--namespace", "kube-system", "-o", "json")
	if code := exitcode.Of(err); code != exitcode.Mismatch {
		t.Fatalf("uninstall of another namespace: exit %d (%v), want 8", code, err)
	}
	if d := decodeOne(t, out); d.Error == nil || d.Error.ExitCode != exitcode.Mismatch || d.Error.Message != err.Error() {
		t.Errorf("uninstall -o json on error: %+v", d)
	}
}
